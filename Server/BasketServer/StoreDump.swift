import BasketCore
import Foundation
import SQLite

/// A whole store as JSON lines, the same for every backend, for moving a store between backends
/// or machines (`basket-server export` / `import`). The first line is
/// `{"format":"basket-store","version":1}`; then one line per row, `{"table":T,"row":[…]}`, table
/// by table in the order of ``StoreDump/tables`` (referenced rows first). Integers are JSON
/// numbers, text is a string, bytes are `{"hex":"…"}`, NULL is null.
public enum StoreDump {
    public static let format = "basket-store"
    public static let version = 1

    /// The tables and their columns, in the order rows are written and read back.
    public static let tables: [(name: String, columns: [String])] = [
        ("accounts", ["id", "name", "password"]),
        ("tokens", ["hash", "account", "created"]),
        ("lists", ["no", "id", "epoch", "last_seq", "compacted_through"]),
        ("members", ["list", "account", "role"]),
        ("invites", ["code", "list", "role", "created_by", "expires"]),
        ("ops", ["list", "seq", "item", "field", "ts", "replica", "value", "received"]),
    ]

    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    static func encode(_ value: SQLValue) -> Any {
        switch value {
        case .null: NSNull()
        case .integer(let n): NSNumber(value: n)
        case .real(let d): NSNumber(value: d)
        case .text(let s): s
        case .blob(let bytes): ["hex": Secrets.hex(bytes)]
        }
    }

    static func decode(_ value: Any, line: Int) throws -> SQLValue {
        switch value {
        case is NSNull: return .null
        case let text as String: return .text(text)
        case let object as [String: Any]:
            guard object.count == 1, let hex = object["hex"] as? String, let bytes = Secrets.bytes(hex: hex) else {
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

extension SQLiteStore {
    /// Writes every row to `path` (which must not exist), in one read transaction; returns the
    /// rows written per table.
    public func export(to path: String) throws -> [String: Int] {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreDump.FormatError(description: "\(path) exists; choose a new file")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { throw StoreDump.FormatError(description: "cannot create \(path)") }
        defer { try? file.close() }
        var counts: [String: Int] = [:]
        try locked { db in
            try db.execute("BEGIN")
            defer { try? db.execute("COMMIT") }
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
            for (table, columns) in StoreDump.tables {
                let statement = try db.prepare(
                    "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(columns[0])"
                        + (table == "ops" ? ", seq" : ""))
                var count = 0
                while let row = try statement.step() {
                    try line([
                        "table": table, "row": (0..<columns.count).map { StoreDump.encode(row.value(Int32($0))) },
                    ])
                    count += 1
                }
                counts[table] = count
            }
            file.write(out)
        }
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
            header["format"] as? String == StoreDump.format, header["version"] as? Int == StoreDump.version
        else {
            throw StoreDump.FormatError(
                description: "\(path) is not a \(StoreDump.format) dump, version \(StoreDump.version)")
        }
        let columns = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, $0.columns) })
        var counts: [String: Int] = [:]
        try locked { db in
            try db.transaction {
                let existing = try db.scalar("SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM lists)")
                guard existing?.integerValue == 0 else {
                    throw StoreDump.FormatError(description: "the store is not empty; import into a new data folder")
                }
                for (index, raw) in lines.enumerated().dropFirst() {
                    let number = index + 1
                    guard let object = try? JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any],
                        let table = object["table"] as? String, let names = columns[table],
                        let row = object["row"] as? [Any], row.count == names.count
                    else { throw StoreDump.FormatError(description: "line \(number): not a row of a known table") }
                    let placeholders = names.map { _ in "?" }.joined(separator: ", ")
                    let insert = try db.cached(
                        "INSERT INTO \(table)(\(names.joined(separator: ", "))) VALUES (\(placeholders))")
                    for (position, value) in row.enumerated() {
                        try insert.bind(try StoreDump.decode(value, line: number), at: Int32(position + 1))
                    }
                    try insert.runToCompletion()
                    counts[table, default: 0] += 1
                }
            }
        }
        return counts
    }
}
