public import BasketCore
import SQLite

/// What could still be read from a damaged replica file.
public struct Salvage: Sendable {
    /// Every operation readable from the items' histories.
    public var operations: [Op] = []
    /// Local writes not yet synced, readable from the outbox, oldest first.
    public var pending: [Op] = []
    /// The replica's settings (the current list, …).
    public var settings: [String: String] = [:]
    /// What could not be read, in words.
    public var problems: [String] = []
}

/// Checking a replica file and reading what a damaged one still holds (`basket doctor`), without
/// opening it as a ``Replica``; ``Replica/restore(_:)`` puts a ``Salvage`` into a new one.
public enum ReplicaFile {
    /// Nil when the file at `path` is a sound replica, else what is wrong with it.
    public static func damage(at path: String) -> String? {
        do {
            let db = try Connection(path: path)
            let result = try db.query("PRAGMA quick_check", map: { $0.string(0) ?? "" })
            guard result == ["ok"] else { return result.prefix(3).joined(separator: "; ") }
            _ = try db.userVersion
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// When an error says the replica file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB), SQLite's
    /// words for it; nil for any other error.
    public static func damage(in error: any Error) -> String? {
        switch error {
        case ReplicaError.corrupt(let message): message
        case ResultCode.corrupt, ResultCode.notADatabase: (error as? SQLiteError)?.message
        default: nil
        }
    }

    /// Reads whatever can be read from a damaged replica: row by row, stopping at the first
    /// unreadable row of each table.
    public static func salvage(from path: String) -> Salvage {
        var salvage = Salvage()
        let db: Connection
        do {
            db = try Connection(path: path)
        } catch {
            salvage.problems.append("the file cannot be opened: \(error)")
            return salvage
        }
        func readRows(_ what: String, _ sql: String, _ body: (Row) throws -> Void) {
            do {
                let statement = try db.prepare(sql)
                while let row = try statement.step() { try body(row) }
            } catch {
                salvage.problems.append("\(what): \(error)")
            }
        }
        readRows("settings", "SELECT key, value FROM settings") { row in
            if let key = row.string(0), let value = row.string(1) { salvage.settings[key] = value }
        }
        readRows("items", "SELECT l.id, i.id, i.history FROM items i JOIN lists l ON l.no = i.list") { row in
            let list = ListID(raw: ID128(row.blob128(0)))
            let item = ItemID(raw: ID128(row.blob128(1)))
            try row.withBlob(2) { blob in
                try Records.forEach(in: blob) { field, register in
                    salvage.operations.append(
                        Op(
                            list: list, item: item, field: field, value: register.value, version: register.version))
                }
            }
        }
        // A file from before the outbox kept lines (schema 6) holds binary records.
        let columns = (try? db.query("PRAGMA table_info(outbox)", map: { $0.string(1) ?? "" })) ?? []
        if columns.contains("line") {
            readRows("outbox", "SELECT seq, list, item, line FROM outbox ORDER BY seq") { row in
                salvage.pending.append(try Replica.pending(from: row).operation)
            }
        } else {
            readRows("outbox", "SELECT list, item, record FROM outbox ORDER BY seq") { row in
                let list = ListID(raw: ID128(row.blob128(0)))
                let item = ItemID(raw: ID128(row.blob128(1)))
                for entry in try Records.decode(row.blob(2)) {
                    salvage.pending.append(
                        Op(
                            list: list, item: item, field: entry.field, value: entry.register.value,
                            version: entry.register.version))
                }
            }
        }
        return salvage
    }
}

extension Replica {
    /// Puts salvaged state into this (new) replica: every operation, the unsynced ones back in the
    /// outbox (they reach the server at the next sync), and the settings, encrypted lists' keys
    /// taken into the keyring.
    public func restore(_ salvage: Salvage) throws {
        func isValid(_ op: Op) -> Bool { (try? op.validate()) != nil }
        let pending = salvage.pending.filter(isValid)
        let valid = salvage.operations.filter(isValid) + pending
        try locked { db in
            try db.transaction {
                var latest = try loadClock(db).last
                for op in valid { latest = max(latest, op.timestamp) }
                _ = try merge(valid, db)
                for op in pending { try Self.queue(op, db) }
                // Later local writes must win over everything restored.
                try saveClock(HybridClock(last: latest), db)
            }
        }
        for (key, value) in salvage.settings {
            // An encrypted list's keys go back into the keyring too, so the rebuilt replica seals,
            // opens and names items with them (kept text that no longer loads stays as it was).
            if key.hasPrefix(Self.keysSetting), let list = ListID(hex: String(key.dropFirst(Self.keysSetting.count))),
                configuration.keyring != nil, (try? saveKeys(value, for: list)) != nil
            {
                continue
            }
            try setSetting(key, value)
        }
    }
}
