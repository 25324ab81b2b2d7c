import BasketCore
import SQLite

/// The SQLite backend's rows in the dump's columns (``StoreDump``): the log's pushes unpacked
/// into `ops` rows on the way out, packed again on the way in.
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
