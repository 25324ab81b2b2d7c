internal import CPostgres
import Foundation

/// An error from PostgreSQL (or from libpq talking to it), with its SQLSTATE when the server sent one.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE ("23505" unique_violation, "53100" disk_full, …); empty for
    /// connection failures.
    public var sqlState: String
    /// The server's message (or libpq's).
    public var message: String
    /// Whether the connection is unusable afterwards (it must be dropped, not reused).
    public var connectionLost: Bool

    /// An error with its SQLSTATE, its message, and whether the connection was lost.
    public init(sqlState: String, message: String, connectionLost: Bool) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
    }

    public var description: String { sqlState.isEmpty ? message : "\(message) (SQLSTATE \(sqlState))" }
}

/// One libpq connection. Not thread-safe: one thread at a time (``ConnectionPool`` hands them out).
/// Parameters and results travel in PostgreSQL's text format; a nil parameter is SQL NULL.
///
/// ```swift
/// let db = try PostgresConnection(url: "postgresql://postgres@127.0.0.1:5432/postgres")
/// let rows = try db.query("SELECT $1::int + 1", ["41"])
/// rows.int64(0, 0)  // 42
/// ```
public final class PostgresConnection {
    let handle: OpaquePointer
    /// Statements prepared on this connection, by text, and the names they were given.
    private var prepared: [String: String] = [:]

    /// Connects to the database at `url` (libpq's URL syntax).
    public init(url: String) throws {
        guard let handle = PQconnectdb(url) else {
            throw PostgresError(sqlState: "", message: "libpq: out of memory", connectionLost: true)
        }
        self.handle = handle
        guard PQstatus(handle) == CONNECTION_OK else {
            // Every property is set, so deinit runs and closes the handle.
            let message = Self.message(handle)
            throw PostgresError(sqlState: "", message: "cannot connect to PostgreSQL: \(message)", connectionLost: true)
        }
        // Notices (such as "relation already exists, skipping", or the FATAL that precedes a cut
        // connection, which the next call reports as an error anyway) are not printed to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Text travels as UTF-8 whatever the database's encoding (a UTF8 database is expected).
        try execute("SET client_min_messages = warning; SET client_encoding = 'UTF8'")
    }

    deinit { PQfinish(handle) }

    static func message(_ handle: OpaquePointer) -> String {
        String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the connection still talks to the server.
    public var isUsable: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The socket, for waiting on notifications with poll(2).
    public var socket: Int32 { PQsocket(handle) }

    /// Runs statements without parameters (several, separated by semicolons, in one round trip).
    public func execute(_ sql: String) throws {
        _ = try check(PQexec(handle, sql))
    }

    /// Runs one statement with parameters ($1, $2, …) and returns its rows.
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> Rows {
        try withParameters(parameters) { values, count in
            try check(PQexecParams(handle, sql, count, nil, values, nil, nil, 0))
        }
    }

    /// Like ``query(_:_:)``, but the statement is prepared once per connection and reused.
    public func prepared(_ sql: String, _ parameters: [String?] = []) throws -> Rows {
        let name = try statement(sql, parameters: parameters.count)
        return try withParameters(parameters) { values, count in
            try check(PQexecPrepared(handle, name, count, values, nil, nil, 0))
        }
    }

    /// Like ``prepared(_:_:)``, with parameters that may be bytes in binary format (a bytea sent
    /// as it is, not as twice as many hex digits).
    /// With `binaryResults` the rows come in binary format (``Rows`` reads either; a bytea then
    /// arrives as it is, not as hex digits).
    public func prepared(_ sql: String, binding parameters: [PostgresParameter], binaryResults: Bool = false) throws
        -> Rows
    {
        let name = try statement(sql, parameters: parameters.count)
        // Each value copied to memory of its own, as ``withParameters(_:_:)`` does for text.
        var values: [UnsafeMutablePointer<CChar>?] = []
        defer { for value in values { free(value) } }
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            switch parameter {
            case .text(let text):
                values.append(text.map { strdup($0)! })
                lengths.append(0)
                formats.append(0)
            case .binary(let bytes):
                // Never a null pointer (that is NULL), even for no bytes.
                let copy = malloc(max(1, bytes.count))!.assumingMemoryBound(to: CChar.self)
                bytes.withUnsafeBytes { source in
                    if let start = source.baseAddress {
                        UnsafeMutableRawPointer(copy).copyMemory(from: start, byteCount: source.count)
                    }
                }
                values.append(copy)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        return try check(
            PQexecPrepared(
                handle, name, Int32(parameters.count), values.map { $0.map { UnsafePointer($0) } }, lengths, formats,
                binaryResults ? 1 : 0),
            binary: binaryResults)
    }

    /// The name of `sql`'s prepared statement on this connection, prepared on first use.
    private func statement(_ sql: String, parameters: Int) throws -> String {
        if let known = prepared[sql] { return known }
        let name = "s\(prepared.count)"
        _ = try check(PQprepare(handle, name, sql, Int32(parameters), nil))
        prepared[sql] = name
        return name
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isUsable { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Reads what the server sent and returns the notifications received (channel, payload).
    public func notifications() throws -> [(channel: String, payload: String)] {
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(sqlState: "", message: Self.message(handle), connectionLost: !isUsable)
        }
        var found: [(String, String)] = []
        while let notification = PQnotifies(handle) {
            found.append(
                (String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return found
    }

    private func withParameters(_ parameters: [String?], _ body: ([UnsafePointer<CChar>?], Int32) throws -> Rows)
        rethrows -> Rows
    {
        let copies = parameters.map { $0.map { strdup($0)! } }
        defer { for copy in copies { free(copy) } }
        return try body(copies.map { $0.map { UnsafePointer($0) } }, Int32(parameters.count))
    }

    private func check(_ result: OpaquePointer?, binary: Bool = false) throws -> Rows {
        guard let result else {
            throw PostgresError(sqlState: "", message: Self.message(handle), connectionLost: !isUsable)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Rows(result, binary: binary)
        default:
            let state = basket_pq_sqlstate(result).map { String(cString: $0) } ?? ""
            let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQclear(result)
            throw PostgresError(
                sqlState: state, message: message.isEmpty ? Self.message(handle) : message, connectionLost: !isUsable)
        }
    }
}

/// A statement's parameter: text (nil is SQL NULL), or bytes in binary format.
public enum PostgresParameter {
    /// Text (nil: NULL).
    case text(String?)
    /// Bytes, sent in binary format (bytea).
    case binary([UInt8])
}

/// The rows of a result, in text format or (from ``PostgresConnection/prepared(_:binding:binaryResults:)``)
/// binary format, for columns of the types read here.
public final class Rows {
    private let result: OpaquePointer
    private let binary: Bool

    init(_ result: OpaquePointer, binary: Bool = false) {
        self.result = result
        self.binary = binary
    }
    deinit { PQclear(result) }

    /// The number of rows.
    public var count: Int { Int(PQntuples(result)) }
    /// The number of columns.
    public var columns: Int { Int(PQnfields(result)) }
    /// Rows changed by an INSERT, UPDATE or DELETE.
    public var changed: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// Whether the value at `row`, `column` (0-based) is NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

    /// The value's bytes as they came (text's are its UTF-8 in both formats).
    private func raw(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            start: PQgetvalue(result, Int32(row), Int32(column)),
            count: Int(PQgetlength(result, Int32(row), Int32(column))))
    }

    /// The value at `row`, `column` as text; nil for NULL.
    public func string(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : String(decoding: raw(row, column), as: UTF8.self)
    }

    /// A bigint column (in binary format: 8 bytes, big-endian; an integer or int of 4 or 2 too).
    public func int64(_ row: Int, _ column: Int) -> Int64 {
        guard !isNull(row, column) else { return 0 }
        guard binary else { return Int64(string(row, column)!) ?? 0 }
        let bytes = raw(row, column)
        guard bytes.count <= 8, !bytes.isEmpty else { return 0 }
        var value: UInt64 = bytes[0] >= 0x80 ? .max : 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value)
    }

    /// The value at `row`, `column` as a boolean; nil for NULL.
    public func bool(_ row: Int, _ column: Int) -> Bool? {
        guard !isNull(row, column), let first = raw(row, column).first else { return nil }
        return binary ? first != 0 : first == UInt8(ascii: "t")
    }

    /// A bytea column (in text format: `\x` and hex digits).
    public func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column) else { return nil }
        let text = raw(row, column)
        if binary { return Array(text) }
        let length = text.count
        guard length >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity((length - 2) / 2)
        func nibble(_ c: UInt8) -> UInt8 {
            c <= UInt8(ascii: "9") ? c &- UInt8(ascii: "0") : (c | 0x20) &- UInt8(ascii: "a") &+ 10
        }
        var i = 2
        while i + 1 < length {
            bytes.append(nibble(text[i]) << 4 | nibble(text[i + 1]))
            i += 2
        }
        return bytes
    }
}

extension PostgresConnection {
    /// A bytea parameter in text format.
    public static func bytea(_ bytes: some Sequence<UInt8>) -> String {
        "\\x" + hex(bytes)
    }

    static let digits = Array("0123456789abcdef".utf8)

    // The module stands alone (as the SQLite wrapper does), so it spells bytea's hex itself.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An array parameter in text format (`{…}`): every element quoted, nil as NULL.
    public static func array(_ elements: some Sequence<String?>) -> String {
        var out = "{"
        var first = true
        for element in elements {
            if !first { out += "," }
            first = false
            guard let element else {
                out += "NULL"
                continue
            }
            out += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { out += "\\" }
                out.unicodeScalars.append(character)
            }
            out += "\""
        }
        return out + "}"
    }
}
