import BasketCore

/// What ``SyncEngine`` needs of a replica, and all it may touch: the lists it holds, where each
/// stands with the server, the outbox, applying a page with its new sync state in one
/// transaction, and the clock correction. ``Replica`` is the one real conformer; the sync tests
/// put an in-memory one behind it, so sync is tested without a database and the replica without
/// a network. App code uses ``Replica``'s public API; none of this is public.
protocol SyncableReplica: Sendable {
    /// The ids of the lists on this device.
    func listIDs() throws -> [ListID]
    /// Whether `list` is encrypted end to end and this device holds its keys.
    func isEncrypted(_ list: ListID) -> Bool
    func syncState(of list: ListID) throws -> SyncState
    func saveSyncState(_ state: SyncState) throws
    /// Local writes of `list` not yet acknowledged, oldest first, at most `limit`.
    func pendingOperations(in list: ListID, limit: Int) throws -> [PendingOperation]
    /// The first writes of `list` waiting, at most `limit`, encoded as they are sent; nil when none.
    func pendingBatch(in list: ListID, limit: Int) throws -> OutboxBatch?
    /// The lists with local writes waiting.
    func listsWithPendingChanges() throws -> [ListID]
    /// How many local writes of `list` are waiting (written by any process using the file).
    func pendingCount(in list: ListID) throws -> Int
    /// The same as a person counts them: each item (or the list itself) with writes waiting is one.
    func pendingChanges(in list: ListID) throws -> Int
    /// Drops the acknowledged writes of `list` up to and including `sequence`.
    func acknowledge(_ list: ListID, through sequence: Int64) throws
    /// Every write this device knows of `list` (a rebuild pushes them all).
    func allOperations(in list: ListID) throws -> [Op]
    /// Merges a pulled page and stores `syncState` in the same transaction; `isValidated`: each
    /// operation was validated as the page was read (``PulledPage``), and is not again.
    /// - Throws: ``ReplicaError/clockSkew(_:)`` when the page is ahead of this device's clock.
    func merge(_ remote: [Op], saving syncState: SyncState?, isValidated: Bool) throws -> MergeResult
    /// The clock correction in force (server minus local, milliseconds).
    func clockOffset() throws -> Int64
    /// Takes the server's time and re-stamps pending writes beyond it; returns how many.
    func correctClock(serverTime: UInt64) throws -> Int
    /// Gives every pending write of `list` a new, later timestamp (the server refused one whose
    /// identity it holds with another value), under a new replica id when `renewingReplica` (the
    /// server refused the replica id: another account pushed it first); returns how many.
    func restampPending(in list: ListID, renewingReplica: Bool) throws -> Int
    /// Keeps what the server said about who is shopping for `list`.
    func saveShopping(_ statuses: [Wire.ShoppingStatus], of list: ListID, serverTime: UInt64) throws
    /// The state of `list`: the newest write of each register (what a snapshot holds).
    func currentOperations(in list: ListID) throws -> [Op]
    /// The cursor of the newest snapshot of `list` this device made or started from; 0 when none.
    func snapshotCursor(of list: ListID) throws -> Int64
    /// Keeps ``snapshotCursor(of:)``.
    func saveSnapshotCursor(_ cursor: Int64, of list: ListID) throws
}

extension Replica: SyncableReplica {
    func listIDs() throws -> [ListID] { try lists().map(\.id) }
    func allOperations(in list: ListID) throws -> [Op] { try operations(in: list) }

    /// The prefix of the settings that keep each list's snapshot cursor (`snapshot.` and its id).
    static let snapshotSetting = "snapshot."

    func snapshotCursor(of list: ListID) throws -> Int64 {
        try setting(Self.snapshotSetting + list.description).flatMap { Int64($0) } ?? 0
    }

    func saveSnapshotCursor(_ cursor: Int64, of list: ListID) throws {
        try setSetting(Self.snapshotSetting + list.description, String(cursor))
    }
}

extension SyncableReplica {
    /// A replica that shows nobody anything keeps no statuses.
    func saveShopping(_ statuses: [Wire.ShoppingStatus], of list: ListID, serverTime: UInt64) throws {}

    /// The batch encoded from ``pendingOperations(in:limit:)`` (a replica that does not keep its
    /// outbox encoded).
    func pendingBatch(in list: ListID, limit: Int) throws -> OutboxBatch? {
        let pending = try pendingOperations(in: list, limit: limit)
        guard let last = pending.last else { return nil }
        return OutboxBatch(
            text: OperationText(pending.map(\.operation)), count: pending.count, lastSequence: last.sequence)
    }
}
