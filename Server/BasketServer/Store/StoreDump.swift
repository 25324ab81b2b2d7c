import BasketCore
import Foundation
import Postgres
import PrivateFiles
import SQLite

/// A whole store as JSON lines, the same for every backend, for moving a store between backends
/// or machines (`basket-server export` / `import`). The first line is
/// `{"format":"basket-store","version":1}`; then one line per row, `{"table":T,"row":[…]}`, table
/// by table in the order of ``StoreDump/tables`` (referenced rows first). Integers are JSON
/// numbers, text is a string, bytes are `{"hex":"…"}`, NULL is null.
public enum StoreDump {
    /// The first line's `format`: what a dump file is.
    public static let format = "basket-store"
    /// 2: tokens with id, device and last use; invites by hash with uses; signup invites.
    /// 3: lists with their maker and the start of their epoch; replica ids' owners per list;
    /// invites with a title.
    /// Version 1 and 2 dumps are still read: version 1's tokens get a new id, its plain-text
    /// invites are left out (as the schema 3 migration drops them); lists of both get their maker
    /// as the migrations do (an owner), and no replica id has an owner yet.
    public static let version = 3

    /// The tables and their columns, in the order rows are written and read back.
    public static let tables: [(name: String, columns: [String])] = [
        ("accounts", ["id", "name", "password"]),
        ("tokens", ["hash", "id", "account", "device", "created", "last_used"]),
        ("lists", ["no", "id", "epoch", "last_seq", "compacted_through", "created_by", "epoch_started"]),
        ("members", ["list", "account", "role"]),
        ("invites", ["hash", "id", "list", "role", "created_by", "created", "expires", "uses_left", "title"]),
        ("invite_uses", ["hash", "account"]),
        ("signup_invites", ["hash", "created", "expires", "uses_left"]),
        ("replicas", ["list", "replica", "account"]),
        ("ops", ["list", "seq", "item", "field", "ts", "replica", "value", "received"]),
    ]

    /// The columns of a table in a dump of `version`; nil for a table that version does not have.
    static func columns(_ table: String, version: Int) -> Int? {
        guard let current = tables.first(where: { $0.name == table })?.columns.count else { return nil }
        switch (version, table) {
        case (1, "signup_invites"), (1, "invite_uses"), (1, "replicas"), (2, "replicas"): return nil
        case (1, "tokens"): return 3
        case (1, "invites"): return 5
        case (1, "lists"), (2, "lists"): return 5
        case (2, "invites"): return 8
        default: return current
        }
    }

    /// A row of a version 1 or 2 dump as version 3 has it; nil for rows it leaves out. A list's
    /// maker is filled in after the members are read (``makersFromOwners``).
    static func upgrade(_ table: String, _ row: [DumpValue], from version: Int) -> [DumpValue]? {
        switch (version, table) {
        case (1, "tokens"): [row[0], .text(Secrets.randomHex(bytes: 8)), row[1], .text(""), row[2], row[2]]
        case (1, "invites"): nil
        case (_, "lists"): row + [.null, .integer(0)]
        case (2, "invites"): row + [.null]
        default: row
        }
    }

    /// Sets each list's maker, where a dump before version 3 had none, to the owner with the
    /// lowest account id, as the schema migrations do.
    static func makersFromOwners(_ rows: inout [(table: String, row: [DumpValue])]) {
        var owners: [DumpValue: Int64] = [:]
        for (table, row) in rows where table == "members" && row[2] == .text("owner") {
            if case .integer(let account) = row[1] { owners[row[0]] = min(owners[row[0]] ?? .max, account) }
        }
        for index in rows.indices where rows[index].table == "lists" && rows[index].row[5] == .null {
            rows[index].row[5] = owners[rows[index].row[0]].map { .integer($0) } ?? .null
        }
    }

    /// A dump file that is not one, or breaks its own rules; the text says where.
    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    static func encode(_ value: DumpValue) -> Any {
        switch value {
        case .null: NSNull()
        case .integer(let n): NSNumber(value: n)
        case .text(let s): s
        case .blob(let bytes): ["hex": Hex.encode(bytes)]
        }
    }

    static func decode(_ value: Any, line: Int) throws -> DumpValue {
        switch value {
        case is NSNull: return .null
        case let text as String: return .text(text)
        case let object as [String: Any]:
            guard object.count == 1, let hex = object["hex"] as? String, let bytes = Hex.bytes(hex) else {
                throw FormatError(description: "line \(line): an object value is {\"hex\": \"…\"}")
            }
            return .blob(bytes)
        case let number as NSNumber:
            // The store has no real columns: every number is a whole one.
            guard number.doubleValue.rounded() == number.doubleValue else {
                throw FormatError(description: "line \(line): \(number) is not a whole number")
            }
            return .integer(number.int64Value)
        default:
            throw FormatError(description: "line \(line): unexpected value \(value)")
        }
    }
}

/// A value in a dumped row, whatever the backend: the stores keep whole numbers, text and bytes.
public enum DumpValue: Hashable, Sendable {
    /// NULL.
    case null
    /// An integer.
    case integer(Int64)
    /// Text.
    case text(String)
    /// Bytes (base64 in the file).
    case blob([UInt8])
}

/// A store that can be written out and read back as a ``StoreDump``. Rows are exchanged in the
/// dump's columns (``StoreDump/tables``), whatever the backend keeps.
public protocol DumpableStore: Store {
    /// Calls `visit` with every row, table by table in the dump's order, from one snapshot.
    func dumpRows(_ visit: (_ table: String, _ row: [DumpValue]) throws -> Void) throws
    /// Inserts `rows` in one transaction; throws (and writes nothing) when the store is not empty.
    func loadRows(_ rows: [(table: String, row: [DumpValue])]) throws
}

extension StoreDump {
    static let notEmpty = FormatError(description: "the store is not empty; import into a new data folder or database")
}

extension DumpableStore {
    /// Writes every row to `path` (which must not exist), from one snapshot; returns the rows
    /// written per table.
    public func export(to path: String) throws -> [String: Int] {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreDump.FormatError(description: "\(path) exists; choose a new file")
        }
        // Every account's password hash and every list: 0600, created exclusively.
        do {
            try PrivateFile.createExclusively(path)
        } catch {
            throw StoreDump.FormatError(description: "cannot create \(path): \(error)")
        }
        guard let file = FileHandle(forWritingAtPath: path) else {
            throw StoreDump.FormatError(description: "cannot create \(path)")
        }
        defer { try? file.close() }
        var counts: [String: Int] = [:]
        var out = Data()
        func line(_ object: [String: Any]) throws {
            out.append(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            out.append(UInt8(ascii: "\n"))
            if out.count > 1 << 20 {
                file.write(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        try line(["format": StoreDump.format, "version": StoreDump.version])
        for (table, _) in StoreDump.tables { counts[table] = 0 }
        try dumpRows { table, row in
            try line(["table": table, "row": row.map(StoreDump.encode)])
            counts[table, default: 0] += 1
        }
        file.write(out)
        return counts
    }

    /// Reads a dump into this store, which must be empty, in one transaction; returns the rows
    /// read per table. A malformed dump changes nothing.
    public func importDump(from path: String) throws -> [String: Int] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StoreDump.FormatError(description: "cannot read \(path)")
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard let first = lines.first,
            let header = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any],
            header["format"] as? String == StoreDump.format, let version = header["version"] as? Int,
            (1...StoreDump.version).contains(version)
        else {
            throw StoreDump.FormatError(
                description: "\(path) is not a \(StoreDump.format) dump, version \(StoreDump.version)")
        }
        let columns = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, $0.columns) })
        var rows: [(table: String, row: [DumpValue])] = []
        var counts = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, 0) })
        for (index, raw) in lines.enumerated().dropFirst() {
            let number = index + 1
            guard let object = try? JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any],
                let table = object["table"] as? String, columns[table] != nil,
                let expected = StoreDump.columns(table, version: version),
                let row = object["row"] as? [Any], row.count == expected
            else { throw StoreDump.FormatError(description: "line \(number): not a row of a known table") }
            let decoded = try row.map { try StoreDump.decode($0, line: number) }
            let stored = version == StoreDump.version ? decoded : StoreDump.upgrade(table, decoded, from: version)
            guard let stored else { continue }
            rows.append((table, stored))
            counts[table, default: 0] += 1
        }
        if version < 3 { StoreDump.makersFromOwners(&rows) }
        try loadRows(rows)
        return counts
    }
}

extension SQLiteStore: DumpableStore {
    public func dumpRows(_ visit: (String, [DumpValue]) throws -> Void) throws {
        try locked { db in
            try db.execute("BEGIN")
            defer { try? db.execute("COMMIT") }
            for (table, columns) in StoreDump.tables {
                if table == "ops" {
                    let statement = try db.prepare("SELECT list, received, ops FROM pushes ORDER BY list, last_seq")
                    while let row = try statement.step() {
                        try row.withBlob(2) {
                            try PushRecords.dumpRows(list: row.int64(0), received: row.int64(1), $0) {
                                try visit(table, $0)
                            }
                        }
                    }
                    continue
                }
                let statement = try db.prepare(
                    "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(columns[0])")
                while let row = try statement.step() {
                    try visit(table, (0..<columns.count).map { Self.dumpValue(row.value(Int32($0))) })
                }
            }
        }
    }

    public func loadRows(_ rows: [(table: String, row: [DumpValue])]) throws {
        let columns = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, $0.columns) })
        try locked { db in
            try db.transaction {
                let existing = try db.scalar("SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM lists)")
                guard existing?.integerValue == 0 else { throw StoreDump.notEmpty }
                var operations: [[DumpValue]] = []
                for (table, row) in rows {
                    if table == "ops" {
                        operations.append(row)
                        continue
                    }
                    let names = columns[table]!
                    let placeholders = names.map { _ in "?" }.joined(separator: ", ")
                    let insert = try db.cached(
                        "INSERT INTO \(table)(\(names.joined(separator: ", "))) VALUES (\(placeholders))")
                    for (position, value) in row.enumerated() {
                        try insert.bind(Self.sqlValue(value), at: Int32(position + 1))
                    }
                    do {
                        try insert.runToCompletion()
                    } catch let error as SQLiteError {
                        throw StoreDump.FormatError(description: "a \(table) row cannot be stored: \(error)")
                    }
                }
                let (packed, usage) = try PushRecords.pack(operations)
                do {
                    try Self.insert(packed, db)
                } catch let error as SQLiteError {
                    throw StoreDump.FormatError(description: "an ops row cannot be stored: \(error)")
                }
                for (list, usage) in usage {
                    try db.run(
                        "UPDATE lists SET items = ?, bytes = ? WHERE no = ?", .integer(usage.items),
                        .integer(usage.bytes), .integer(list))
                }
                try db.execute(PushRecords.recountDropped)
            }
        }
    }
}

extension PostgresStore: DumpableStore {
    /// Per dump column: how PostgreSQL keeps it ("i" bigint, "t" text, "b" bytea, "v" the two value columns).
    static let dumpKinds: [String: [Character]] = [
        "accounts": ["i", "t", "t"], "tokens": ["t", "t", "i", "t", "i", "i"],
        "lists": ["i", "b", "t", "i", "i", "i", "i"], "members": ["i", "i", "t"],
        "invites": ["t", "t", "i", "t", "i", "i", "i", "i", "t"], "invite_uses": ["t", "i"],
        "signup_invites": ["t", "i", "i", "i"], "replicas": ["i", "i", "i"],
    ]

    static func dumpColumns(_ table: String, _ columns: [String]) -> [String] {
        columns.map { $0 == "value" ? "value_text, value_bool" : $0 }
    }

    public func dumpRows(_ visit: (String, [DumpValue]) throws -> Void) throws {
        try connected { db in
            try db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            defer { try? db.execute("COMMIT") }
            for (table, columns) in StoreDump.tables {
                if table == "ops" {
                    try dumpOperations(db) { try visit(table, $0) }
                    continue
                }
                let kinds = Self.dumpKinds[table]!
                try db.execute(
                    "DECLARE dump NO SCROLL CURSOR FOR SELECT \(Self.dumpColumns(table, columns).joined(separator: ", "))"
                        + " FROM \(table) ORDER BY \(columns[0])")
                while true {
                    let rows = try db.query("FETCH 10000 FROM dump")
                    if rows.count == 0 { break }
                    for index in 0..<rows.count {
                        var row: [DumpValue] = []
                        var column = 0
                        for kind in kinds {
                            defer { column += 1 }
                            if kind == "v" {
                                if let text = rows.string(index, column) {
                                    row.append(.text(text))
                                } else if let flag = rows.bool(index, column + 1) {
                                    row.append(.integer(flag ? 1 : 0))
                                } else {
                                    row.append(.null)
                                }
                                column += 1
                            } else if rows.isNull(index, column) {
                                row.append(.null)
                            } else if kind == "i" {
                                row.append(.integer(rows.int64(index, column)))
                            } else if kind == "b" {
                                row.append(.blob(rows.bytes(index, column) ?? []))
                            } else {
                                row.append(.text(rows.string(index, column)!))
                            }
                        }
                        try visit(table, row)
                    }
                }
                try db.execute("CLOSE dump")
            }
        }
    }

    /// The log's operations as the dump's `ops` rows, by list and sequence number.
    private func dumpOperations(_ db: PostgresConnection, _ visit: ([DumpValue]) throws -> Void) throws {
        try db.execute(
            "DECLARE dump NO SCROLL CURSOR FOR SELECT list, received, ops FROM pushes ORDER BY list, last_seq")
        while true {
            let rows = try db.query("FETCH 1000 FROM dump")
            if rows.count == 0 { break }
            for index in 0..<rows.count {
                guard let ops = rows.bytes(index, 2) else { throw PushRecords.damaged }
                try ops.withUnsafeBytes {
                    try PushRecords.dumpRows(list: rows.int64(index, 0), received: rows.int64(index, 1), $0, visit)
                }
            }
        }
        try db.execute("CLOSE dump")
    }

    /// Writes a dump's `ops` rows as rows of `pushes` (`PushRecords/pack(_:)`), and sets each
    /// list's items and bytes.
    private func loadOperations(_ rows: [[DumpValue]], _ db: PostgresConnection) throws {
        let (packed, usage) = try PushRecords.pack(rows)
        for row in packed {
            do {
                _ = try db.prepared(
                    "INSERT INTO pushes(list, last_seq, first_seq, count, received, ops) VALUES ($1, $2, $3, $4, $5, $6)",
                    binding: [
                        .text("\(row.list)"), .text("\(row.lastSeq)"), .text("\(row.firstSeq)"), .text("\(row.count)"),
                        .text("\(row.received)"), .binary(row.ops),
                    ])
            } catch let error as PostgresError {
                throw StoreDump.FormatError(description: "an ops row cannot be stored: \(error.message)")
            }
        }
        for (list, usage) in usage {
            _ = try db.prepared(
                "UPDATE lists SET items = $2, bytes = $3 WHERE no = $1",
                ["\(list)", "\(usage.items)", "\(usage.bytes)"])
        }
    }

    public func loadRows(_ rows: [(table: String, row: [DumpValue])]) throws {
        let columns = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, $0.columns) })
        try connected { db in
            try db.transaction {
                let existing = try db.query("SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM lists)")
                guard existing.int64(0, 0) == 0 else { throw StoreDump.notEmpty }
                var operations: [[DumpValue]] = []
                for (table, row) in rows {
                    if table == "ops" {
                        operations.append(row)
                        continue
                    }
                    let names = Self.dumpColumns(table, columns[table]!)
                    var parameters: [String?] = []
                    for (kind, value) in zip(Self.dumpKinds[table]!, row) {
                        switch (kind, value) {
                        case (_, .null) where kind == "v": parameters += [nil, nil]
                        case (_, .null): parameters.append(nil)
                        case ("v", .integer(let n)) where n == 0 || n == 1: parameters += [nil, n == 1 ? "t" : "f"]
                        case ("v", .text(let text)): parameters += [text, nil]
                        case ("i", .integer(let n)): parameters.append(String(n))
                        case ("t", .text(let text)): parameters.append(text)
                        case ("b", .blob(let bytes)): parameters.append(PostgresConnection.bytea(bytes))
                        default:
                            throw StoreDump.FormatError(description: "a \(table) row has \(value) where it cannot")
                        }
                    }
                    let placeholders = (1...parameters.count).map { "$\($0)" }.joined(separator: ", ")
                    do {
                        _ = try db.prepared(
                            "INSERT INTO \(table)(\(names.joined(separator: ", "))) VALUES (\(placeholders))",
                            parameters)
                    } catch let error as PostgresError {
                        throw StoreDump.FormatError(description: "a \(table) row cannot be stored: \(error.message)")
                    }
                }
                try loadOperations(operations, db)
                // Later accounts and lists continue after the imported numbers.
                try db.execute(
                    PushRecords.recountDropped + ";\n"
                        + """
                        SELECT setval(pg_get_serial_sequence('accounts', 'id'), coalesce(max(id), 0) + 1, false) FROM accounts;
                        SELECT setval(pg_get_serial_sequence('lists', 'no'), coalesce(max(no), 0) + 1, false) FROM lists;
                        """)
            }
        }
    }
}
