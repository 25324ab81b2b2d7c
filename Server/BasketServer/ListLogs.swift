import BasketCore

/// What the SQLite writer knows of each list's log, so that a push writes one B-tree entry per
/// operation: the items the list has held (its item quota counts the new ones) and the identity
/// of every operation in it (a push is idempotent: an operation already there is a duplicate).
///
/// Kept by ``SQLiteStore``'s writer, under its lock; read from the log the first time a push needs
/// a list's; bounded over all lists, the lists pushed to least recently forgotten first (the list
/// being pushed to is always whole, and its quota bounds it).
///
/// Operations and items are found by keyed 64-bit hashes (``Hashed``), made before the writer's
/// lock is taken, in ``KeyTable``s. An item is kept whole and compared. An operation is kept as
/// the sequence number it was stored at, and a hash found is confirmed against the stored row, so
/// operations whose hashes collide are still told apart. Before schema 5 a unique index on the
/// log held the identities, and its insert was the largest cost of a push.
struct ListLogs {
    /// What makes an operation the same operation: its register and its version. The value is
    /// not part of it (a replica never gives one version two values).
    struct Identity: Hashable {
        var item: ItemID
        var field: Int64
        var timestamp: Int64
        var replica: Int64
    }

    /// An operation's identity with its keys: hashes keyed at random per process (Swift's
    /// `Hasher`), so nobody outside can choose operations or items whose keys collide.
    struct Hashed {
        var identity: Identity
        var key: UInt64
        var itemKey: UInt64

        init(_ identity: Identity) {
            self.identity = identity
            var hasher = Hasher()
            hasher.combine(identity.item.raw.high)
            hasher.combine(identity.item.raw.low)
            hasher.combine(identity.field)
            hasher.combine(identity.timestamp)
            hasher.combine(identity.replica)
            key = UInt64(bitPattern: Int64(hasher.finalize()))
            itemKey = UInt64(bitPattern: Int64(identity.item.hashValue))
        }

        /// For tests: keys chosen by the caller (colliding ones, say).
        init(_ identity: Identity, key: UInt64, itemKey: UInt64) {
            self.identity = identity
            self.key = key
            self.itemKey = itemKey
        }
    }

    /// One list's log, as far as pushes need it.
    fileprivate struct Log {
        var items = KeyTable(filler: ItemID(raw: ID128(high: 0, low: 0)))
        /// The sequence number each operation is stored at.
        var operations = KeyTable(filler: Int64(0))
        var lastUse: UInt64 = 0
        var size: Int { items.count + operations.count }
    }

    private var logs: [Int64: Log] = [:]
    /// Entries in `logs` (a list being pushed to is out of it).
    private var total = 0
    private var clock: UInt64 = 0
    /// The most entries (items and operations) kept over all lists.
    let capacity: Int
    /// How a log read from the store is hashed: as pushes are (``Hashed/init(_:)``), unless a test
    /// wants collisions.
    private let hashing: (Identity) -> Hashed

    init(capacity: Int, hashing: @escaping (Identity) -> Hashed = { Hashed($0) }) {
        self.capacity = capacity
        self.hashing = hashing
    }

    /// List `no`'s log, taken out for one push (``close(_:kept:)`` puts it back), read with `load`
    /// when it is not known: `load` calls its argument with every operation of the log.
    /// `expected` is how many there are, or about.
    mutating func open(
        _ no: Int64, expected: Int, _ load: ((Int64, Identity) -> Void) throws -> Void
    ) rethrows -> Push {
        clock += 1
        if var log = logs.removeValue(forKey: no) {
            total -= log.size
            log.lastUse = clock
            return Push(list: no, log: log)
        }
        var log = Log(lastUse: clock)
        log.operations.reserve(max(0, expected))
        try load { seq, identity in
            let hashed = hashing(identity)
            log.operations.insert(hashed.key, seq)
            if log.items.first(hashed.itemKey, where: { $0 == identity.item }) == nil {
                log.items.insert(hashed.itemKey, identity.item)
            }
        }
        return Push(list: no, log: log)
    }

    /// Puts a list's log back after its push: as the push left it when it was kept, as it was
    /// before when it was not (refused, or rolled back).
    mutating func close(_ push: Push, kept: Bool) {
        var push = push
        if !kept { push.takeBack() }
        total += push.log.size
        logs[push.list] = push.log
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

    /// The bytes the kept entries' tables take, over all lists (one pass over the lists).
    var bytes: Int { logs.values.reduce(0) { $0 + $1.items.bytes + $1.operations.bytes } }

    /// One push to a list: its log, and what the push recorded in it.
    struct Push {
        let list: Int64
        fileprivate var log: Log
        /// The items new to the list.
        private var items: [(key: UInt64, item: ItemID)] = []
        private var operations: [(key: UInt64, seq: Int64)] = []
        /// Entries whose row was gone, pointed at a new one: the sequence numbers they had.
        private var replaced: [(key: UInt64, was: Int64, now: Int64)] = []

        fileprivate init(list: Int64, log: Log) {
            self.list = list
            self.log = log
        }

        /// How many items the push added to the list.
        var newItems: Int { items.count }

        /// Whether the operation is new to the list. A new one is recorded as stored at `seq`, and
        /// its item as held. `stored` reads the identity of the operation stored at a sequence
        /// number (nil when there is none).
        mutating func admit(_ op: Hashed, at seq: Int64, stored: (Int64) throws -> Identity?) rethrows -> Bool {
            var gone: Int64?
            let known = try log.operations.first(op.key) { earlier in
                guard let found = try stored(earlier) else {
                    gone = gone ?? earlier
                    return false
                }
                return found == op.identity
            }
            if known != nil { return false }
            if let earlier = gone {
                // Compaction dropped the operation an entry named: the entry names this one now.
                let slot = log.operations.first(op.key) { $0 == earlier }!.slot
                log.operations.replace(at: slot, with: seq)
                replaced.append((op.key, earlier, seq))
            } else {
                log.operations.insert(op.key, seq)
                operations.append((op.key, seq))
            }
            if log.items.first(op.itemKey, where: { $0 == op.identity.item }) == nil {
                log.items.insert(op.itemKey, op.identity.item)
                items.append((op.itemKey, op.identity.item))
            }
            return true
        }

        fileprivate mutating func takeBack() {
            for (key, seq) in operations { log.operations.remove(key) { $0 == seq } }
            for (key, item) in items { log.items.remove(key) { $0 == item } }
            for (key, was, now) in replaced.reversed() {
                if let slot = log.operations.first(key, where: { $0 == now })?.slot {
                    log.operations.replace(at: slot, with: was)
                }
            }
            operations = []
            items = []
            replaced = []
        }
    }
}
