public import BasketCore
import SQLite

// Replica: a plain list becoming encrypted end to end here (docs/encryption.md, "Converting a
// plain list").
extension Replica {
    /// Moves `list` from plain to encrypted end to end on this device, in one transaction: its
    /// keys (`keys`, as the keyring keeps them) are kept; every write this device knows of it,
    /// and every one waiting to be sent, is replaced by what `convert` makes of them (the same
    /// writes under their keyed ids; its second argument is every write known, whose names say
    /// the items' keys); what names the old ids goes (undo steps, news, lost writes); and its
    /// sync state moves to the log's `epoch` at `cursor` (nil and 0: a device that takes the
    /// conversion starts again from the snapshot, and learns the epoch from it), with the
    /// snapshot there. The keyring
    /// takes the keys once the file holds them.
    /// - Throws: ``ReplicaError/noSuchList(_:)``; ``ReplicaError/invalidOperation(_:)`` without a
    ///   keyring, or when it refuses the keys (nothing changed).
    public func convertToEncrypted(
        _ list: ListID, keys: String, epoch: String?, cursor: Int64, convert: ([Op], _ known: [Op]) -> [Op]
    ) throws {
        guard let keyring = configuration.keyring else {
            throw ReplicaError.invalidOperation("this replica was opened without a keyring: it keeps no keys")
        }
        let items = try locked { db in
            try db.transaction { () throws -> Set<ItemID> in
                guard let no = try listNo(list, db) else { throw ReplicaError.noSuchList(list.description) }
                let known = try operations(in: list, column: "history", db)
                let pending = try db.query(
                    "SELECT seq, list, item, line FROM outbox WHERE list = ? ORDER BY seq", .blob(list.raw.bytes),
                    map: Self.pending(from:)
                ).map(\.operation)
                let converted = convert(known, known)
                let waiting = convert(pending, known)
                try db.run("DELETE FROM items WHERE list = ?", .integer(no))
                for table in ["outbox", "undo", "news", "lost"] {
                    try db.run("DELETE FROM \(table) WHERE list = ?", .blob(list.raw.bytes))
                }
                try db.run("DELETE FROM undo_steps WHERE journaled = 1 AND step NOT IN (SELECT step FROM undo)")
                _ = try merge(converted + waiting, db)
                for op in waiting { try Self.queue(op, db) }
                var state = try Self.loadSyncState(list, db)
                state.epoch = epoch
                state.cursor = cursor
                try Self.saveSyncState(state, db)
                for (key, value) in [(Self.keysSetting, keys), (Self.snapshotSetting, String(cursor))] {
                    try db.run(
                        "INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)", .text(key + list.description),
                        .text(value))
                }
                return Set(converted.map(\.item)).subtracting([.list])
            }
        }
        do {
            try keyring.load(keys, for: list)
        } catch {
            throw ReplicaError.invalidOperation("not keys of list \(list): \(error)")
        }
        notify(ReplicaUpdate(origin: .remote, lists: [list], items: items))
    }
}
