public import BasketCore
import SQLite

/// What a device does when the server will not take its changes (a viewer's, a removed
/// member's), and when a list leaves the device.
extension Replica {
    /// Drops the writes of `list` waiting in the outbox and puts every item they touched back to
    /// what the other writes this replica knows say, as if they had never been made: the copy
    /// here ends equal to the server's (and so to every other replica's). In one transaction.
    /// - Returns: the dropped writes, oldest first.
    @discardableResult
    public func discardPending(in list: ListID) throws -> [PendingOperation] {
        let (dropped, items) = try locked { db in
            try db.transaction { () throws -> ([PendingOperation], Set<ItemID>) in
                let pending = try db.query(
                    "SELECT seq, list, item, line FROM outbox WHERE list = ? ORDER BY seq", .blob(list.raw.bytes),
                    map: Self.pending(from:))
                guard !pending.isEmpty, let no = try listNo(list, db) else { return (pending, []) }
                try db.run("DELETE FROM outbox WHERE list = ?", .blob(list.raw.bytes))
                var dropping: [ItemID: Set<HistoryKey>] = [:]
                for entry in pending {
                    dropping[entry.operation.item, default: []].insert(
                        HistoryKey(field: entry.operation.field, version: entry.operation.version))
                }
                let select = try db.cached(Self.selectRow)
                let write = try db.cached(Self.writeRow)
                for (item, drop) in dropping {
                    let key = RowKey(listNo: no, item: item)
                    let kept = try Records.decode(try load(key, select).history).filter {
                        !drop.contains(HistoryKey(field: $0.field, version: $0.register.version))
                    }
                    var row = RowState()
                    for entry in kept.sorted(by: { $0.register.version < $1.register.version }) {
                        _ = try row.merge(entry.field, entry.register)
                    }
                    if kept.isEmpty {
                        try withIDBytes(item) { id in
                            try db.run("DELETE FROM items WHERE list = ? AND id = ?", .integer(no), .blob(Array(id)))
                        }
                    } else {
                        try store(row, at: key, write)
                    }
                    if item == .list {
                        try db.run(
                            "UPDATE lists SET title = ? WHERE no = ?",
                            row[.title]?.value.textValue.map { .text($0) } ?? .null, .integer(no))
                    }
                }
                return (pending, Set(dropping.keys).subtracting([.list]))
            }
        }
        if !dropped.isEmpty { notify(ReplicaUpdate(origin: .local, lists: [list], items: items)) }
        return dropped
    }

    /// Removes a list from this device: its items, history, outbox and sync state. The server is
    /// not told (deleting a shared list, or leaving it, is a call to the server).
    /// - Throws: ``ReplicaError/noSuchList(_:)``.
    public func removeList(_ list: ListID) throws {
        try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { throw ReplicaError.noSuchList(list.description) }
                let title = try db.scalar("SELECT title FROM lists WHERE no = ?", .integer(no))?.textValue
                try db.run("DELETE FROM items WHERE list = ?", .integer(no))
                try db.run("DELETE FROM outbox WHERE list = ?", .blob(list.raw.bytes))
                try db.run("DELETE FROM sync_lists WHERE list = ?", .blob(list.raw.bytes))
                try db.run("DELETE FROM lists WHERE no = ?", .integer(no))
                // Its undo steps go too: undoing one would write to a list that is no longer
                // here, and make it again as an untitled list, here and on the server.
                try db.run("DELETE FROM undo WHERE list = ?", .blob(list.raw.bytes))
                try db.run(
                    "DELETE FROM undo_steps WHERE journaled = 1 AND step NOT IN (SELECT step FROM undo)")
                // The removal is the newest step: the next undo says it cannot be undone, instead
                // of silently undoing the last change made on another list.
                try db.run(
                    "INSERT INTO undo_steps(writes, journaled, removed_list) VALUES (0, 2, ?)",
                    .text(title ?? "(untitled)"))
                try Self.trimJournal(db)
            }
        }
        notify(ReplicaUpdate(origin: .local, lists: [list], items: []))
    }
}

extension Replica {
    /// Records that the server no longer has this account as a member of `list` (it left, was
    /// removed, or the list was deleted): the copy here becomes read-only.
    public func markNoLongerMember(_ list: ListID) throws {
        try locked { db in
            var state = try Self.loadSyncState(list, db)
            state.noLongerMember = true
            try Self.saveSyncState(state, db)
        }
    }
}
