import BasketCore
import Postgres

/// The PostgreSQL backend's rows in the dump's columns (``StoreDump``), read in one repeatable-read
/// snapshot through a cursor, written in one transaction.
extension PostgresStore: DumpableStore {
    /// Per dump column: how PostgreSQL keeps it ("i" bigint, "t" text, "b" bytea, "f" boolean, "v"
    /// the two value columns).
    static let dumpKinds: [String: [Character]] = [
        "accounts": ["i", "t", "t", "t", "t", "t", "t"], "envelopes": ["i", "i", "t"],
        "tokens": ["t", "t", "i", "t", "i", "i"],
        "lists": ["i", "b", "t", "i", "i", "i", "i", "f", "i", "i"], "members": ["i", "i", "t"],
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
                            } else if kind == "f" {
                                row.append(.integer(rows.bool(index, column) == true ? 1 : 0))
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
                        case ("f", .integer(let n)) where n == 0 || n == 1: parameters.append(n == 1 ? "t" : "f")
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
