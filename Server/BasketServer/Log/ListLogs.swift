import BasketCore

/// What a store knows of each list's log, so that a push needs no index on the log: the items
/// the list has held (its item quota counts the new ones) and the identity of every operation in
/// it (a push is idempotent: an operation already there is a duplicate).
///
/// Kept by ``SQLiteStore``'s writer, under its lock, and by each ``PostgresStore`` instance, under
/// a mutex (a push takes its list's log out, catches it up with what other instances wrote under
/// the list's row lock, and puts it back after its commit); read from the log the first time a
/// push needs a list's; bounded over all lists, the lists pushed to least recently forgotten first
/// (the list being pushed to is always whole, and its quota bounds it).
///
/// Operations and items are found by keyed 64-bit hashes (``Hashed``), made before any lock is
/// taken, in ``KeyTable``s. An item is kept whole and compared. An operation is kept as the
/// sequence number it was stored at, and a hash found is confirmed against the stored record, so
/// operations whose hashes collide are still told apart. Before SQLite's schema 5 and
/// PostgreSQL's 4 a unique index on the log held the identities, and its insert was the largest
/// cost of a push.
struct ListLogs {
    /// What names an operation: its register and its version. A replica never gives one version
    /// two values, so the same identity with another value is refused, not taken as a duplicate
    /// (``Push/Admission/conflict``).
    struct Identity: Hashable {
        var item: ItemID
        var field: Int64
        var timestamp: Int64
        var replica: Int64

        init(item: ItemID, field: Int64, timestamp: Int64, replica: Int64) {
            self.item = item
            self.field = field
            self.timestamp = timestamp
            self.replica = replica
        }

        /// The identity of `op`, in the columns the stores keep.
        init(_ op: Op) {
            self.init(
                item: op.item, field: Int64(op.field.code), timestamp: StoredOps.column(op.timestamp),
                replica: StoredOps.column(op.replica))
        }
    }

    /// An operation of the stored log, as a push compares it with its own.
    struct Stored {
        var identity: Identity
        var value: Value
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
    fileprivate struct Log: Sendable {
        var items = KeyTable(filler: ItemID(raw: ID128(high: 0, low: 0)))
        /// The sequence number each operation is stored at.
        var operations = KeyTable(filler: Int64(0))
        var lastUse: UInt64 = 0
        /// The last sequence number read into it, or given out by a push kept.
        var through: Int64 = 0
        /// The account each replica id is bound to on the list, as far as pushes have learnt it
        /// (``Push/unknownOwners(of:since:pusher:)``). A binding never changes while the list
        /// exists, so what is here is never stale, whichever instance bound it. Not counted in
        /// ``size``: each came with at least one of the log's operations.
        var owners: [Int64: Int64] = [:]
        var size: Int { items.count + operations.count }

        /// Adds an operation of the stored log.
        mutating func add(_ seq: Int64, _ hashed: Hashed) {
            operations.insert(hashed.key, seq)
            if items.first(hashed.itemKey, where: { $0 == hashed.identity.item }) == nil {
                items.insert(hashed.itemKey, hashed.identity.item)
            }
        }
    }

    private var logs: [Int64: Log] = [:]
    /// Entries in `logs` (a list being pushed to is out of it).
    private var total = 0
    private var clock: UInt64 = 0
    /// The most entries (items and operations) kept over all lists.
    let capacity: Int
    /// How a log read from the store is hashed: as pushes are (``Hashed/init(_:)``), unless a test
    /// wants collisions.
    private let hashing: @Sendable (Identity) -> Hashed

    init(capacity: Int, hashing: @escaping @Sendable (Identity) -> Hashed = { Hashed($0) }) {
        self.capacity = capacity
        self.hashing = hashing
    }

    /// List `no`'s log, taken out for one push (``close(_:kept:)`` puts it back), read with `load`
    /// when it is not known: `load` calls its argument with every operation of the log.
    /// `expected` is how many there are, or about. For a store with one writer (SQLite).
    mutating func open(
        _ no: Int64, expected: Int, _ load: ((Int64, Identity) -> Void) throws -> Void
    ) rethrows -> Push {
        let known = logs[no] != nil
        var push = take(no)
        if !known {
            push.log.operations.reserve(max(0, expected))
            try push.read(load)
        }
        return push
    }

    /// List `no`'s log taken out for one push, empty when it is not known. For a store whose log
    /// other processes write too, where a push takes its list's lock first and then catches the
    /// log up (``Push/catchUp(to:_:)``), outside the lock around these logs.
    mutating func take(_ no: Int64) -> Push {
        clock += 1
        guard var log = logs.removeValue(forKey: no) else { return Push(list: no, log: Log(), hashing: hashing) }
        total -= log.size
        log.lastUse = clock
        return Push(list: no, log: log, hashing: hashing)
    }

    /// Puts a list's log back after its push: as the push left it when it was kept, as it was
    /// before when it was not (refused, or rolled back).
    mutating func close(_ push: Push, kept: Bool) {
        var push = push
        if !kept { push.takeBack() }
        push.log.lastUse = clock
        if let other = logs[push.list] {
            // Another push to the list closed first (its lock was let go before its log came
            // back): the log that has read further stays.
            guard push.log.through > other.through else { return }
            total -= other.size
        }
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

    /// `/metrics` gauges `<prefix>_log_entries` and `<prefix>_log_bytes`.
    func gauges(prefix: String) -> [StoreGauge] {
        [
            StoreGauge(
                name: prefix + "_log_entries",
                help: "Operations and items of lists' logs kept in memory for pushes (at most \(capacity)).",
                value: Double(count)),
            StoreGauge(
                name: prefix + "_log_bytes", help: "Bytes of the tables that keep those entries.", value: Double(bytes)),
        ]
    }

    /// One push to a list: its log, and what the push recorded in it.
    struct Push: Sendable {
        let list: Int64
        fileprivate var log: Log
        /// The items new to the list.
        private var items: [(key: UInt64, item: ItemID)] = []
        private var operations: [(key: UInt64, seq: Int64)] = []
        /// Replica ids this push bound (forgotten again if it is not kept).
        private var bound: [Int64] = []
        /// Entries whose row was gone, pointed at a new one: the sequence numbers they had.
        private var replaced: [(key: UInt64, was: Int64, now: Int64)] = []

        private let hashing: @Sendable (Identity) -> Hashed
        /// The log's `through` before the push gave out any sequence number.
        private var readThrough: Int64

        fileprivate init(list: Int64, log: Log, hashing: @escaping @Sendable (Identity) -> Hashed) {
            self.list = list
            self.log = log
            self.hashing = hashing
            readThrough = log.through
        }

        /// Reads the operations `load` visits into the log.
        fileprivate mutating func read(_ load: ((Int64, Identity) -> Void) throws -> Void) rethrows {
            var log = self.log
            let hashing = self.hashing
            try load { seq, identity in
                log.add(seq, hashing(identity))
                log.through = max(log.through, seq)
            }
            self.log = log
            readThrough = log.through
        }

        /// Brings the log up to `head`, the list's last sequence number, read under its lock:
        /// `load` is called with the last sequence number the log has read (0 for none) and
        /// visits every operation after it. Operations compaction has dropped since stay, and are
        /// told apart when a push finds one (``admit(_:at:stored:)``).
        mutating func catchUp(
            to head: Int64, _ load: (Int64, (Int64, Identity) -> Void) throws -> Void
        ) rethrows {
            if log.through > head {
                // Ahead of the store (a transaction rolled back after all): read again.
                log = Log()
            }
            guard log.through < head else { return }
            var log = self.log
            let hashing = self.hashing
            try load(log.through) { seq, identity in log.add(seq, hashing(identity)) }
            log.through = head
            self.log = log
            readThrough = head
        }

        /// The sequence numbers of the log's operations whose key `op` has: the operations it may
        /// be (in the order ``admit(_:at:stored:)`` asks for them).
        func candidates(_ op: Hashed) -> [Int64] {
            var found: [Int64] = []
            _ = log.operations.first(op.key) { seq in
                found.append(seq)
                return false
            }
            return found
        }

        /// The last sequence number the log has read or given out (0 when it knows nothing).
        var through: Int64 { log.through }

        /// Whether the log holds an operation with `op`'s key: one the push may repeat.
        func mayHold(_ op: Hashed) -> Bool { log.operations.first(op.key) { _ in true } != nil }

        /// Records that the push gave out sequence numbers up to `seq`.
        mutating func advance(to seq: Int64) { log.through = max(log.through, seq) }

        /// How many items the push added to the list.
        var newItems: Int { items.count }

        /// What ``admit(_:value:at:stored:)`` found an operation to be.
        enum Admission: Equatable {
            /// New to the list: recorded.
            case new
            /// Stored already, with the same value.
            case duplicate
            /// Its identity is stored with another value: not the same operation, and not one to
            /// store (a member pushing another's identity first would erase that write).
            case conflict
        }

        /// Whether the operation is new to the list. A new one is recorded as stored at `seq`, and
        /// its item as held. `stored` reads the operation stored at a sequence number (nil when
        /// there is none).
        mutating func admit(_ op: Hashed, value: Value, at seq: Int64, stored: (Int64) throws -> Stored?) rethrows
            -> Admission
        {
            var gone: Int64?
            var conflicting = false
            let known = try log.operations.first(op.key) { earlier in
                guard let found = try stored(earlier) else {
                    gone = gone ?? earlier
                    return false
                }
                guard found.identity == op.identity else { return false }
                conflicting = found.value != value
                return true
            }
            if known != nil { return conflicting ? .conflict : .duplicate }
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
            return .new
        }

        /// Whether the list's log holds an operation of `op`'s item already.
        func holds(_ op: Hashed) -> Bool {
            log.items.first(op.itemKey, where: { $0 == op.identity.item }) != nil
        }

        /// The replica ids of `replicas` (the new operations' replicas: ``Admitted/replicas``)
        /// whose owner this log does not know; the store looks those up, refuses the push when one
        /// is another account's, and binds the unowned ones stamped since the list's epoch began
        /// (``toBind(_:of:since:)``, ``own(_:by:bound:)``). Whatever their timestamps: a replica id
        /// another account holds cannot be written under by stamping in the past (before a restore).
        /// - Throws: ``StoreError/replicaTaken`` when one is known to be another account's.
        func unknownOwners(of replicas: [Int64: Int64], pusher: Int64) throws -> [Int64] {
            var unknown: [Int64] = []
            for replica in replicas.keys {
                switch log.owners[replica] {
                case nil: unknown.append(replica)
                case pusher: continue
                default: throw StoreError.replicaTaken
                }
            }
            return unknown
        }

        /// Of `unknown` ids nobody owns yet, those the pusher takes: the ones with an operation
        /// stamped since the list's epoch began (`since`). Writes stamped before a restore, which
        /// a member relays for a device that has not synced since, take no id: the device pushes
        /// them again under its own when it comes back (and owns its id then).
        static func toBind(_ unknown: [Int64], of replicas: [Int64: Int64], since: Int64) -> Set<Int64> {
            Set(unknown.filter { (replicas[$0] ?? .min) >= since })
        }

        /// Records that `replicas` belong to `account`: found in the store, or `bound` by this
        /// push (then forgotten again if the push is not kept).
        mutating func own(_ replicas: [Int64], by account: Int64, bound: Bool) {
            for replica in replicas { log.owners[replica] = account }
            if bound { self.bound += replicas }
        }

        fileprivate mutating func takeBack() {
            log.through = readThrough
            for replica in bound { log.owners[replica] = nil }
            bound = []
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
