import BasketCore
import Foundation
import PrivateFiles

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
    /// invites with a title. 4: whether each list is encrypted end to end. 5: accounts' key pairs
    /// (wrapped) and members' envelopes of lists' keys. 6: each list's key epochs.
    /// Version 1 to 5 dumps are still read (their lists are plain, their accounts without keys): version 1's tokens get a new id, its plain-text
    /// invites are left out (as the schema 3 migration drops them); lists of both get their maker
    /// as the migrations do (an owner), and no replica id has an owner yet.
    public static let version = 6

    /// The tables and their columns, in the order rows are written and read back.
    public static let tables: [(name: String, columns: [String])] = [
        ("accounts", ["id", "name", "password", "public_key", "wrapped_key", "recovery_key", "recovery_hash"]),
        ("tokens", ["hash", "id", "account", "device", "created", "last_used"]),
        (
            "lists",
            [
                "no", "id", "epoch", "last_seq", "compacted_through", "created_by", "epoch_started", "encrypted",
                "key_epoch", "push_epoch",
            ]
        ),
        ("members", ["list", "account", "role"]),
        ("envelopes", ["list", "account", "envelope"]),
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
        case (..<5, "envelopes"): return nil
        case (..<5, "accounts"): return 3
        case (1, "tokens"): return 3
        case (1, "invites"): return 5
        case (1, "lists"), (2, "lists"): return 5
        case (3, "lists"): return 7
        case (4, "lists"), (5, "lists"): return 8
        case (2, "invites"): return 8
        default: return current
        }
    }

    /// A row of a version 1 to 5 dump as version 6 has it; nil for rows it leaves out. A list's
    /// maker is filled in after the members are read (``makersFromOwners``).
    static func upgrade(_ table: String, _ row: [DumpValue], from version: Int) -> [DumpValue]? {
        switch (version, table) {
        case (1, "tokens"): [row[0], .text(Secrets.randomHex(bytes: 8)), row[1], .text(""), row[2], row[2]]
        case (1, "invites"): nil
        case (..<5, "accounts"): row + [.null, .null, .null, .null]
        case (4, "lists"), (5, "lists"): row + [.integer(0), .integer(0)]
        case (3, "lists"): row + [.integer(0), .integer(0), .integer(0)]
        case (_, "lists"): row + [.null, .integer(0), .integer(0), .integer(0), .integer(0)]
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

    /// The first line of a dump.
    struct Header: Codable {
        var format: String
        var version: Int
    }

    /// Every other line: a row of a table, in the table's columns.
    struct Line: Codable {
        var table: String
        var row: [DumpValue]
    }
}

/// A value in a dumped row, whatever the backend: the stores keep whole numbers, text and bytes.
/// In the file: a JSON number, a string, `{"hex": "…"}` or null.
public enum DumpValue: Hashable, Sendable, Codable {
    /// NULL.
    case null
    /// An integer.
    case integer(Int64)
    /// Text.
    case text(String)
    /// Bytes (hexadecimal in the file).
    case blob([UInt8])

    /// Bytes as the file writes them.
    struct Hexadecimal: Codable {
        var hex: String
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .integer(let n): try c.encode(n)
        case .text(let s): try c.encode(s)
        case .blob(let bytes): try c.encode(Hexadecimal(hex: Hex.encode(bytes)))
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let text = try? c.decode(String.self) {
            self = .text(text)
        } else if let number = try? c.decode(Int64.self) {
            // The store has no real columns: a number that is not a whole one is refused.
            self = .integer(number)
        } else if let object = try? c.decode(Hexadecimal.self), let bytes = Hex.bytes(object.hex) {
            self = .blob(bytes)
        } else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "a value is a whole number, a string, {\"hex\": \"…\"} or null")
        }
    }
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func line(_ value: some Encodable) throws {
            out.append(try encoder.encode(value))
            out.append(UInt8(ascii: "\n"))
            if out.count > 1 << 20 {
                file.write(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        try line(StoreDump.Header(format: StoreDump.format, version: StoreDump.version))
        for (table, _) in StoreDump.tables { counts[table] = 0 }
        try dumpRows { table, row in
            try line(StoreDump.Line(table: table, row: row))
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
        let decoder = JSONDecoder()
        guard let first = lines.first,
            let header = try? decoder.decode(StoreDump.Header.self, from: Data(first)),
            header.format == StoreDump.format, (1...StoreDump.version).contains(header.version)
        else {
            throw StoreDump.FormatError(
                description: "\(path) is not a \(StoreDump.format) dump, version \(StoreDump.version)")
        }
        let columns = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, $0.columns) })
        var rows: [(table: String, row: [DumpValue])] = []
        var counts = Dictionary(uniqueKeysWithValues: StoreDump.tables.map { ($0.name, 0) })
        let version = header.version
        for (index, raw) in lines.enumerated().dropFirst() {
            let number = index + 1
            let line: StoreDump.Line
            do {
                line = try decoder.decode(StoreDump.Line.self, from: Data(raw))
            } catch {
                throw StoreDump.FormatError(
                    description: "line \(number): not a row of values (whole numbers, strings, {\"hex\": …}, null)")
            }
            let table = line.table
            guard columns[table] != nil, let expected = StoreDump.columns(table, version: version),
                line.row.count == expected
            else { throw StoreDump.FormatError(description: "line \(number): not a row of a known table") }
            let decoded = line.row
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
