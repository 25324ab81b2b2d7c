public import BasketCore
import SQLite

/// Undo: each local command is one step of a journal; undoing writes the values its writes
/// replaced, as new writes, so an undo syncs and merges like any other edit.
extension Replica {
    /// Steps the journal keeps; older ones cannot be undone.
    static let undoDepth = 50
    /// Writes one command may make and still be undone (a larger one is a barrier in the journal).
    static let maxUndoableWrites = 5_000

    /// What ``undo(in:)`` did.
    public struct Undone: Hashable, Sendable {
        /// The list the undone command changed.
        public var list: ListID
        /// The writes that restored the earlier values.
        public var writes: [Op]
    }

    /// Records, before `operations` are merged, the registers they will replace (one step).
    static func journal(_ operations: [Op], _ db: Connection) throws {
        guard operations.count <= maxUndoableWrites else {
            try db.run("INSERT INTO undo_steps(writes, journaled) VALUES (?, 0)", .integer(Int64(operations.count)))
            try trimJournal(db)
            return
        }
        try db.run("INSERT INTO undo_steps(writes, journaled) VALUES (?, 1)", .integer(Int64(operations.count)))
        let step = db.lastInsertRowID
        let select = try db.cached(
            "SELECT registers FROM items WHERE list = (SELECT no FROM lists WHERE id = ?1) AND id = ?2")
        let insert = try db.cached(
            "INSERT OR IGNORE INTO undo(step, list, item, field, existed, before) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        var rows: [ItemKeyPair: [Field: Register]?] = [:]
        for op in operations {
            let key = ItemKeyPair(list: op.list, item: op.item)
            if rows[key] == nil {
                select.reset()
                try select.bind(op.list.raw.bytes, at: 1)
                try select.bind(op.item.raw.bytes, at: 2)
                var registers: [Field: Register]?
                if let found = try select.step() {
                    var read: [Field: Register] = [:]
                    try found.withBlob(0) { blob in try Records.forEach(in: blob) { read[$0] = $1 } }
                    registers = read
                }
                select.reset()
                rows[key] = .some(registers)
            }
            let registers = rows[key] ?? nil
            var before: [UInt8]?
            if let register = registers?[op.field] {
                var bytes: [UInt8] = []
                Records.append(field: op.field, register: register, to: &bytes)
                before = bytes
            }
            insert.reset()
            try insert.bind(step, at: 1)
            try insert.bind(op.list.raw.bytes, at: 2)
            try insert.bind(op.item.raw.bytes, at: 3)
            try insert.bind(Int64(op.field.code), at: 4)
            try insert.bind(registers == nil ? 0 : 1, at: 5)
            if let before { try insert.bind(before, at: 6) } else { try insert.bindNull(at: 6) }
            try insert.runToCompletion()
        }
        try trimJournal(db)
    }

    struct ItemKeyPair: Hashable {
        var list: ListID
        var item: ItemID
    }

    static func trimJournal(_ db: Connection) throws {
        let cutoff = (try db.scalar("SELECT max(step) FROM undo_steps")?.integerValue ?? 0) - Int64(undoDepth)
        guard cutoff > 0 else { return }
        try db.run("DELETE FROM undo WHERE step <= ?", .integer(cutoff))
        try db.run("DELETE FROM undo_steps WHERE step <= ?", .integer(cutoff))
    }

    /// Whether a command can be undone now.
    public func canUndo() throws -> Bool {
        try locked { try $0.scalar("SELECT count(*) FROM undo_steps")?.integerValue ?? 0 } > 0
    }

    /// Undoes the last local command that is not undone yet: every register it wrote gets the
    /// value it had before, by a new write (an item it added is removed again, an item it removed
    /// comes back as it was). Again, it undoes the command before. Nil when there is nothing to undo.
    /// With `list`, only the commands made on that list count (a screen showing one list never
    /// undoes a change made on another: the web client's journal does the same).
    /// - Throws: ``ReplicaError/cannotUndo(_:)`` when the last command was too large to journal
    ///   (the journal ends there), or, with no `list`, when it removed a list from this device
    ///   (``removeList(_:)``: said once, then the journal goes on with the step before); the
    ///   errors of a write (a list you may only view).
    @discardableResult
    public func undo(in list: ListID? = nil) throws -> Undone? {
        // A barrier (a command too large to journal) ends the journal: it is emptied, in a
        // transaction of its own (the error below must not roll that back). A list removed from
        // this device, when it is the newest step and no list is named, is said once and
        // leaves the journal: the step before it belongs to another list, and the person asked
        // to undo the removal.
        enum Stop {
            case barrier(Int64)
            case removedList(String)
        }
        let stop = try locked { db -> Stop? in
            try db.transaction {
                guard
                    let (step, writes, journaled, title) = try db.query(
                        "SELECT step, writes, journaled, removed_list FROM undo_steps ORDER BY step DESC LIMIT 1",
                        map: { ($0.int64(0), $0.int64(1), $0.int64(2), $0.string(3)) }
                    ).first
                else { return nil }
                if journaled == 2 && list == nil {
                    try db.run("DELETE FROM undo_steps WHERE step = ?", .integer(step))
                    return .removedList(title ?? "(untitled)")
                }
                guard journaled == 0 else { return nil }
                try db.run("DELETE FROM undo_steps")
                try db.run("DELETE FROM undo")
                return .barrier(writes)
            }
        }
        switch stop {
        case .barrier(let writes):
            throw ReplicaError.cannotUndo("the last change wrote \(writes) values, more than undo keeps")
        case .removedList(let title):
            throw ReplicaError.cannotUndo(
                "the last change removed the list '\(Printable.escaped(title))' from this device, which undo cannot"
                    + " bring back; nothing was undone (undo again undoes the change before it)")
        case nil: break
        }
        return try performLocal(journal: false) { writer -> Undone? in
            let db = writer.db
            let last =
                if let list {
                    try db.query(
                        """
                        SELECT step FROM undo_steps WHERE journaled = 1
                        AND step IN (SELECT step FROM undo WHERE list = ?) ORDER BY step DESC LIMIT 1
                        """, .blob(list.raw.bytes), map: { $0.int64(0) })
                } else {
                    try db.query(
                        "SELECT step FROM undo_steps WHERE journaled = 1 ORDER BY step DESC LIMIT 1",
                        map: { $0.int64(0) })
                }
            guard let step = last.first else { return nil }
            let rows = try db.query(
                "SELECT list, item, field, existed, before FROM undo WHERE step = ? ORDER BY item, field",
                .integer(step)
            ) { row -> (ListID, ItemID, Field?, Bool, [UInt8]?) in
                (
                    ListID(raw: ID128(row.blob128(0))), ItemID(raw: ID128(row.blob128(1))),
                    Field(code: UInt8(truncatingIfNeeded: row.int64(2))), row.int64(3) != 0,
                    row.isNull(4) ? nil : row.blob(4)
                )
            }
            var removedAgain: Set<ItemID> = []
            var undoneList: ListID?
            for (rowList, item, field, existed, before) in rows {
                guard let field else { continue }
                undoneList = rowList
                if !existed {
                    // The command made the item: undoing it removes it again (a list row: nothing).
                    if item != .list, removedAgain.insert(item).inserted {
                        writer.write(rowList, item, .deleted, .bool(true))
                    }
                    continue
                }
                if let before, let entry = try Records.decode(before).first {
                    writer.write(rowList, item, field, entry.register.value)
                } else {
                    // Back to the value before any write; a name or a title has none to go back to.
                    if field.kind != .text { writer.write(rowList, item, field, field.initialValue) }
                }
            }
            try db.run("DELETE FROM undo WHERE step = ?", .integer(step))
            try db.run("DELETE FROM undo_steps WHERE step = ?", .integer(step))
            guard let undoneList else { return nil }
            return Undone(list: undoneList, writes: writer.operations)
        }
    }
}
