import BasketCore

/// What the SQLite writer knows of each list's log, so that a push writes one B-tree entry per
/// operation: the items the list has held (its item quota counts the new ones) and the identity
/// of every operation in it (a push is idempotent: an operation already there is a duplicate).
///
/// Kept by ``SQLiteStore``'s writer, under its lock; read from the log the first time a push needs
/// a list's; bounded over all lists, the lists pushed to least recently forgotten first (the list
/// being pushed to is always whole, and its quota bounds it).
///
/// An operation is known by a keyed 64-bit hash of its identity and the sequence number it was
/// stored at. A hash found is confirmed against the stored row, so two operations whose hashes
/// collide are still told apart: the second is kept whole in `collisions`. Before schema 5 a
/// unique index on the log held the identities, and its insert was the largest cost of a push.
struct ListLogs {
    /// What makes an operation the same operation: its register and its version. The value is
    /// not part of it (a replica never gives one version two values).
    struct Identity: Hashable {
        var item: ItemID
        var field: Int64
        var timestamp: Int64
        var replica: Int64

        /// The identity's keyed hash (Swift's `Hasher`, seeded at random per process).
        var key: Int {
            var hasher = Hasher()
            hasher.combine(item.raw.high)
            hasher.combine(item.raw.low)
            hasher.combine(field)
            hasher.combine(timestamp)
            hasher.combine(replica)
            return hasher.finalize()
        }
    }

    /// One list's log, as far as pushes need it.
    private struct Log {
        var items: Set<ItemID> = []
        /// Sequence numbers by identity hash.
        var operations: [Int: Int64] = [:]
        /// Operations whose hash an earlier one of the log has.
        var collisions: Set<Identity> = []
        var lastUse: UInt64 = 0
        var size: Int { items.count + operations.count + collisions.count }
    }

    /// What one push recorded, for taking it back when the push is not kept.
    struct Journal {
        let list: Int64
        fileprivate(set) var items: [ItemID] = []
        fileprivate var keys: [Int] = []
        fileprivate var collisions: [Identity] = []
        fileprivate var replaced: [(key: Int, seq: Int64)] = []
    }

    private var logs: [Int64: Log] = [:]
    private var total = 0
    private var clock: UInt64 = 0
    /// The most entries (items and operations) kept over all lists.
    let capacity: Int
    /// The hash operations are known by: ``Identity/key``, or a worse one in tests.
    private let key: (Identity) -> Int

    init(capacity: Int, key: @escaping (Identity) -> Int = \.key) {
        self.capacity = capacity
        self.key = key
    }

    /// Makes sure list `no`'s log is known, reading it with `load` when it is not: `load` calls
    /// its argument with every operation of the log. `expected` is how many there are, or about.
    mutating func load(
        _ no: Int64, expected: Int, _ load: ((Int64, Identity) -> Void) throws -> Void
    ) rethrows -> Journal {
        clock += 1
        if logs[no] != nil {
            logs[no]!.lastUse = clock
            return Journal(list: no)
        }
        var log = Log(lastUse: clock)
        log.operations.reserveCapacity(max(0, expected))
        try load { seq, identity in
            log.items.insert(identity.item)
            let key = key(identity)
            if log.operations[key] == nil {
                log.operations[key] = seq
            } else {
                log.collisions.insert(identity)
            }
        }
        total += log.size
        logs[no] = log
        return Journal(list: no)
    }

    /// Whether the operation `identity` is new to the journal's list (loaded first). A new one is
    /// recorded as stored at `seq`, and its item as held; both go into `journal`. `stored` reads
    /// the identity of the operation stored at a sequence number (nil when there is none).
    mutating func admit(
        _ identity: Identity, at seq: Int64, journal: inout Journal, stored: (Int64) throws -> Identity?
    ) rethrows -> Bool {
        let no = journal.list
        let key = key(identity)
        if let earlier = logs[no]!.operations[key] {
            let found = try stored(earlier)
            if found == identity || logs[no]!.collisions.contains(identity) { return false }
            if found == nil {
                // Compaction dropped the operation the hash named: the entry is stale.
                logs[no]!.operations[key] = seq
                journal.replaced.append((key, earlier))
            } else {
                logs[no]!.collisions.insert(identity)
                journal.collisions.append(identity)
                total += 1
            }
        } else {
            logs[no]!.operations[key] = seq
            journal.keys.append(key)
            total += 1
        }
        if logs[no]!.items.insert(identity.item).inserted {
            journal.items.append(identity.item)
            total += 1
        }
        return true
    }

    /// Takes back what a push recorded when it is not kept (refused, or rolled back).
    mutating func takeBack(_ journal: Journal) {
        guard logs[journal.list] != nil else { return }
        for key in journal.keys where logs[journal.list]!.operations.removeValue(forKey: key) != nil { total -= 1 }
        for identity in journal.collisions where logs[journal.list]!.collisions.remove(identity) != nil {
            total -= 1
        }
        for item in journal.items where logs[journal.list]!.items.remove(item) != nil { total -= 1 }
        for (key, seq) in journal.replaced { logs[journal.list]!.operations[key] = seq }
    }

    /// Keeps the total within ``capacity`` (after a commit: never while a push needs its list's),
    /// forgetting the lists pushed to least recently, down to nine tenths of it so that the sort
    /// is paid rarely. The list pushed to last stays, however large.
    mutating func trim() {
        guard total > capacity else { return }
        for (no, log) in logs.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard total > capacity / 10 * 9, log.lastUse != clock else { break }
            logs[no] = nil
            total -= log.size
        }
    }

    /// Forgets list `no` (deleted), or every list (a commit failed after logs were read in it).
    mutating func forget(_ no: Int64? = nil) {
        guard let no else {
            logs.removeAll()
            total = 0
            return
        }
        total -= logs.removeValue(forKey: no)?.size ?? 0
    }

    /// How many entries are kept, over all lists.
    var count: Int { total }
}
