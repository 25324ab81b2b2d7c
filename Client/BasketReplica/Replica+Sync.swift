public import BasketCore
import SQLite

/// Where a list stands with the server.
public struct SyncState: Hashable, Sendable {
    /// The list.
    public var list: ListID
    /// The server's epoch for the list when the cursor was taken; nil before the first sync.
    public var epoch: String?
    /// The sequence number of the last server operation applied.
    public var cursor: Int64
    /// Whether the list was created on (or joined from) the server.
    public var isRegistered: Bool
    /// When the last sync of the list finished (Unix milliseconds).
    public var lastSync: UInt64?
    /// Whether the server had dropped superseded writes (compaction) before this replica pulled
    /// them: the state is exact, but item histories lack those writes.
    public var historyIncomplete: Bool
    /// This account's role on the list, as the server last said it; nil when not known (a list
    /// never shared, or synced by an older build).
    public var role: Role?
    /// The list was on the server for this account and is no longer (an owner removed the
    /// account or deleted the list, or the account left): the copy here is read-only.
    public var noLongerMember: Bool

    /// A list's sync state.
    public init(
        list: ListID, epoch: String? = nil, cursor: Int64 = 0, isRegistered: Bool = false, lastSync: UInt64? = nil,
        historyIncomplete: Bool = false, role: Role? = nil, noLongerMember: Bool = false
    ) {
        self.role = role
        self.noLongerMember = noLongerMember
        self.list = list
        self.epoch = epoch
        self.cursor = cursor
        self.isRegistered = isRegistered
        self.lastSync = lastSync
        self.historyIncomplete = historyIncomplete
    }
}

/// What the sync engine needs of the replica: sync state, the outbox per list, clock correction.
extension Replica {
    /// The sync state of a list (a fresh one when the list never synced).
    public func syncState(of list: ListID) throws -> SyncState {
        try locked { try Self.loadSyncState(list, $0) }
    }

    /// Gives this replica a new replica id for every write from now on: another account signs in
    /// on this device. The server binds each id to the first account that pushes it to a list and
    /// tells the list's members whose ids are whose, so one id under two accounts would link them.
    /// Writes already made keep their id.
    @discardableResult
    public func startAsNewDevice() throws -> ReplicaID {
        try locked { db in try db.transaction { try renewReplicaID(db) } }
    }

    /// The sync states of every list that has one.
    public func syncStates() throws -> [SyncState] {
        try locked { db in
            try db.query("SELECT \(Self.syncColumns) FROM sync_lists") { Self.syncState(from: $0) }
        }
    }

    static let syncColumns = "list, epoch, cursor, registered, last_sync, history_incomplete, role, gone"

    static func syncState(from row: Row) -> SyncState {
        SyncState(
            list: ListID(raw: ID128(row.blob128(0))), epoch: row.string(1), cursor: row.int64(2),
            isRegistered: row.int64(3) != 0, lastSync: row.isNull(4) ? nil : UInt64(row.int64(4)),
            historyIncomplete: row.int64(5) != 0, role: row.string(6).flatMap(Role.init(rawValue:)),
            noLongerMember: row.int64(7) != 0)
    }

    static func loadSyncState(_ list: ListID, _ db: Connection) throws -> SyncState {
        try db.query(
            "SELECT \(syncColumns) FROM sync_lists WHERE list = ?",
            .blob(list.raw.bytes),
            map: syncState(from:)
        ).first ?? SyncState(list: list)
    }

    static func saveSyncState(_ state: SyncState, _ db: Connection) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO sync_lists(\(syncColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .blob(state.list.raw.bytes), state.epoch.map(SQLValue.text) ?? .null, .integer(state.cursor),
            .integer(state.isRegistered ? 1 : 0), state.lastSync.map { .integer(Int64($0)) } ?? .null,
            .integer(state.historyIncomplete ? 1 : 0), state.role.map { .text($0.rawValue) } ?? .null,
            .integer(state.noLongerMember ? 1 : 0))
    }

    func saveSyncState(_ state: SyncState) throws {
        try locked { try Self.saveSyncState(state, $0) }
    }

    /// Local writes of one list not yet acknowledged (the outbox), oldest first: what "N changes
    /// not yet sent" is made of.
    func pendingOperations(in list: ListID, limit: Int = .max) throws -> [PendingOperation] {
        try locked { db in
            try db.query(
                "SELECT seq, list, item, line FROM outbox WHERE list = ? ORDER BY seq LIMIT ?", .blob(list.raw.bytes),
                .integer(Int64(min(limit, Int(Int64.max)))), map: Self.pending(from:))
        }
    }

    /// Drops acknowledged writes of one list from the outbox, up to and including `sequence`.
    func acknowledge(_ list: ListID, through sequence: Int64) throws {
        try locked {
            try $0.run("DELETE FROM outbox WHERE list = ? AND seq <= ?", .blob(list.raw.bytes), .integer(sequence))
        }
    }

    /// The number of local writes waiting for the server.
    func pendingCount() throws -> Int {
        try locked { Int(try $0.scalar("SELECT count(*) FROM outbox")?.integerValue ?? 0) }
    }

    /// The number of local writes of one list waiting for the server (read from the file, so
    /// writes by other processes count too).
    func pendingCount(in list: ListID) throws -> Int {
        try locked {
            Int(try $0.scalar("SELECT count(*) FROM outbox WHERE list = ?", .blob(list.raw.bytes))?.integerValue ?? 0)
        }
    }

    /// Changes waiting for the server, as a person counts them: each item (or list) with writes
    /// not yet sent is one change, however many of its fields were written ("1 change waiting"
    /// after adding milk, which writes three registers). ``pendingCount()`` counts the writes.
    func pendingChanges() throws -> Int {
        try locked {
            Int(try $0.scalar("SELECT count(*) FROM (SELECT DISTINCT list, item FROM outbox)")?.integerValue ?? 0)
        }
    }

    /// Changes of one list waiting for the server, as a person counts them (see ``pendingChanges()``).
    func pendingChanges(in list: ListID) throws -> Int {
        try locked {
            Int(
                try $0.scalar(
                    "SELECT count(DISTINCT item) FROM outbox WHERE list = ?", .blob(list.raw.bytes))?.integerValue ?? 0)
        }
    }

    /// The lists with local writes waiting for the server.
    func listsWithPendingChanges() throws -> [ListID] {
        try locked { db in
            try db.query("SELECT DISTINCT list FROM outbox", map: { ListID(raw: ID128($0.blob128(0))) })
        }
    }

    /// The correction added to the wall clock (server time minus local time, in milliseconds).
    func clockOffset() throws -> Int64 {
        try locked { try $0.scalar("SELECT value FROM meta WHERE key = 'clock_offset'")?.integerValue ?? 0 }
    }

    /// The largest clock correction taken from a server: a day, in milliseconds.
    static let maxClockCorrection: UInt64 = 86_400_000

    /// Corrects the clock by the server's time and re-stamps every pending write stamped beyond
    /// what the server accepts, so the next push goes through and nothing is lost.
    ///
    /// - Parameters:
    ///   - serverTime: the server's wall clock (Unix milliseconds) as it answered.
    /// - Returns: how many writes got a new timestamp.
    @discardableResult
    func correctClock(serverTime: UInt64) throws -> Int {
        let localWall = configuration.wallClock()
        let offset = Int64(bitPattern: serverTime &- localWall)
        // A server is trusted to correct a device's clock by minutes or hours, not by years.
        guard offset.magnitude <= Self.maxClockCorrection else { throw ReplicaError.implausibleServerClock(offset) }
        let restamped = try locked { db in
            try db.transaction {
                try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('clock_offset', ?)", .integer(offset))
                let corrected = serverTime
                let limit = corrected + HybridClock.maxDrift
                // The persisted clock may carry the skewed time: start again from the corrected one,
                // but past every write this replica holds that the server accepts (others' writes it
                // has seen among them): a write made after seeing another must still beat it.
                var clock = HybridClock(
                    last: max(
                        HybridTimestamp(milliseconds: corrected, counter: 0), try latestTimestamp(upTo: limit, db)))
                let pending = try db.query(
                    "SELECT seq, list, item, line FROM outbox ORDER BY seq", map: Self.pending(from:))
                let beyond = pending.filter { $0.operation.timestamp.milliseconds > limit }
                try restamp(beyond, clock: &clock, wall: corrected, replica: try loadReplicaID(db), db)
                try saveClock(clock, db)
                return beyond.count
            }
        }
        return restamped
    }

    /// The latest timestamp of a write this replica holds, of those at most `limit` (Unix ms).
    /// Reads every item's history: only a clock correction, which is rare, needs it.
    private func latestTimestamp(upTo limit: UInt64, _ db: Connection) throws -> HybridTimestamp {
        var latest = HybridTimestamp.zero
        let histories = try db.prepare("SELECT history FROM items")
        while let row = try histories.step() {
            try row.blob(0).withUnsafeBytes { bytes in
                try Records.forEach(in: bytes) { _, register in
                    let timestamp = register.version.timestamp
                    if timestamp.milliseconds <= limit && timestamp > latest { latest = timestamp }
                }
            }
        }
        return latest
    }

    /// Gives every pending write of `list` a new timestamp from this replica's clock (later than
    /// anything it has seen), after the server refused one because another value holds its
    /// identity there (another member pushed it first): sent again, the writes win as they
    /// should. With `renewingReplica`, the replica first takes a new id (the server said another
    /// account pushed this one to the list first), which its writes carry from then on. Returns
    /// how many.
    @discardableResult
    func restampPending(in list: ListID, renewingReplica: Bool = false) throws -> Int {
        try locked { db in
            try db.transaction {
                let replica = renewingReplica ? try renewReplicaID(db) : try loadReplicaID(db)
                var clock = try loadClock(db)
                let offset = try db.scalar("SELECT value FROM meta WHERE key = 'clock_offset'")?.integerValue ?? 0
                let wall = UInt64(max(0, Int64(configuration.wallClock()) + offset))
                let pending = try db.query(
                    "SELECT seq, list, item, line FROM outbox WHERE list = ? ORDER BY seq", .blob(list.raw.bytes),
                    map: Self.pending(from:))
                try restamp(pending, clock: &clock, wall: wall, replica: replica, db)
                try saveClock(clock, db)
                return pending.count
            }
        }
    }

    /// Gives each pending write a new timestamp from `clock` at `wall`, in its item's history
    /// and in the outbox.
    private func restamp(
        _ pending: [PendingOperation], clock: inout HybridClock, wall: UInt64, replica: ReplicaID, _ db: Connection
    ) throws {
        for entry in pending {
            let old = entry.operation
            var new = old
            new.version = Version(timestamp: clock.now(wallMilliseconds: wall), replica: replica)
            try restamp(old, as: new, db)
            var line: [UInt8] = []
            OperationCodec.appendLine(new, to: &line)
            try db.run("UPDATE outbox SET line = ? WHERE seq = ?", .blob(line), .integer(entry.sequence))
        }
    }

    /// Replaces one write in its item's history by `new` and recomputes the item's registers.
    private func restamp(_ old: Op, as new: Op, _ db: Connection) throws {
        guard let no = try listNo(old.list, db),
            let history = try db.scalar(
                "SELECT history FROM items WHERE list = ? AND id = ?", .integer(no), .blob(old.item.raw.bytes))?
                .blobValue
        else { return }
        var entries = try Records.decode(history)
        for i in entries.indices where entries[i].field == old.field && entries[i].register.version == old.version {
            entries[i].register.version = new.version
        }
        // Rebuild the row from its history through the merge engine.
        try db.run("DELETE FROM items WHERE list = ? AND id = ?", .integer(no), .blob(old.item.raw.bytes))
        _ = try merge(
            entries.map {
                Op(
                    list: old.list, item: old.item, field: $0.field, value: $0.register.value,
                    version: $0.register.version)
            }, db)
    }

    /// A row `seq, list, item, line` of the outbox.
    static func pending(from row: Row) throws -> PendingOperation {
        let list = ListID(raw: ID128(row.blob128(1)))
        let operation: Op
        do {
            operation = try OperationCodec.decodeLine(row.blob(3), list: list)
        } catch {
            throw ReplicaError.corrupt("an outbox line: \(error)")
        }
        guard operation.item == ItemID(raw: ID128(row.blob128(2))) else {
            throw ReplicaError.corrupt("an outbox line of another item than its row's")
        }
        return PendingOperation(sequence: row.int64(0), operation: operation)
    }

    /// The first writes of `list` waiting in the outbox, at most `limit`, as they are sent: their
    /// lines joined under the list's header. Nil when none wait.
    func pendingBatch(in list: ListID, limit: Int) throws -> OutboxBatch? {
        try locked { db in
            var text = OperationCodec.header(for: list)
            var count = 0
            var last: Int64 = 0
            let rows = try db.prepare("SELECT seq, line FROM outbox WHERE list = ? ORDER BY seq LIMIT ?")
            try rows.bind(list.raw.bytes, at: 1)
            try rows.bind(Int64(min(limit, Int(Int64.max))), at: 2)
            while let row = try rows.step() {
                last = row.int64(0)
                row.withBlob(1) { text.append(contentsOf: $0) }
                count += 1
            }
            return count == 0 ? nil : OutboxBatch(text: OperationText(bytes: text), count: count, lastSequence: last)
        }
    }
}

/// The outbox as an app shows it, read-only: what waits to be sent and how it is stamped
/// (`basket status`, "3 changes waiting"). Sending and acknowledging are the sync engine's.
public struct Outbox: Sendable {
    let replica: Replica

    /// Local writes of `list` not yet acknowledged, oldest first, at most `limit`.
    public func operations(in list: ListID, limit: Int = .max) throws -> [PendingOperation] {
        try replica.pendingOperations(in: list, limit: limit)
    }

    /// How many writes wait (of `list`, or of every list when nil), written by any process using
    /// the file.
    public func count(in list: ListID? = nil) throws -> Int {
        try list.map { try replica.pendingCount(in: $0) } ?? replica.pendingCount()
    }

    /// The same as a person counts them: each item (or list) with writes waiting is one change,
    /// however many of its fields were written ("1 change waiting" after adding milk, which
    /// writes three registers).
    public func changes(in list: ListID? = nil) throws -> Int {
        try list.map { try replica.pendingChanges(in: $0) } ?? replica.pendingChanges()
    }

    /// The lists with writes waiting.
    public func lists() throws -> [ListID] { try replica.listsWithPendingChanges() }

    /// The correction this device's clock stamps writes with (server time minus local time, in
    /// milliseconds), taken from a server that found the clock off.
    public func clockOffset() throws -> Int64 { try replica.clockOffset() }
}

extension Replica {
    /// What waits to be sent (read-only).
    public var outbox: Outbox { Outbox(replica: self) }
}
