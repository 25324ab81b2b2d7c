internal import CSQLite

/// A value bound to or read from SQLite.
public enum SQLValue: Equatable, Sendable {
    /// The SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// The integer, when the value is one.
    public var integerValue: Int64? {
        if case .integer(let v) = self { return v }
        return nil
    }

    /// The text, when the value is text.
    public var textValue: String? {
        if case .text(let v) = self { return v }
        return nil
    }

    /// The bytes, when the value is a blob.
    public var blobValue: [UInt8]? {
        if case .blob(let v) = self { return v }
        return nil
    }
}

/// A prepared statement. Not thread-safe; it belongs to its ``Connection``.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text the statement was prepared from.
    public let sql: String
    private unowned let connection: Connection

    init(connection: Connection, sql: String) throws {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw SQLiteError(ResultCode(rawValue: rc), message: connection.lastErrorMessage, sql: sql)
        }
        self.handle = stmt
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// How many parameters the statement has (its largest `?N`).
    public var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }

    /// Resets the statement so it can run again, and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values to parameters 1, 2, … in order.
    public func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds `value` to parameter `index` (1-based, as SQLite counts).
    public func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = bindText(v, at: index)
        case .blob(let v): rc = bindBlob(v, at: index)
        }
        try check(rc)
    }

    /// Binds an integer to parameter `index`.
    public func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds text to parameter `index`.
    public func bind(_ value: String, at index: Int32) throws {
        try check(bindText(value, at: index))
    }

    /// Binds bytes to parameter `index`; SQLite copies them before this returns.
    public func bind(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        // A nil base address would bind NULL: an empty blob is bound as a zero-length zeroblob.
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            try check(sqlite3_bind_zeroblob(handle, index, 0))
            return
        }
        try check(basket_sqlite_bind_blob(handle, index, base, Int32(bytes.count)))
    }

    /// Binds bytes to parameter `index`.
    public func bind(_ bytes: [UInt8], at index: Int32) throws {
        try bytes.withUnsafeBytes { try bind($0, at: index) }
    }

    /// Binds text, or NULL when nil, to parameter `index`.
    public func bind(_ value: String?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds NULL to parameter `index`.
    public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return basket_sqlite_bind_text(handle, index, "", 0) }
                return basket_sqlite_bind_text(handle, index, base, Int32(chars.count))
            }
        }
    }

    private func bindBlob(_ bytes: [UInt8], at index: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return basket_sqlite_bind_blob(handle, index, base, Int32(buffer.count))
        }
    }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK {
            throw SQLiteError(ResultCode(rawValue: rc), message: connection.lastErrorMessage, sql: sql)
        }
    }

    /// Steps once: a row, or nil when the statement is done. Any other result throws.
    public func step() throws -> Row? {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return Row(handle: handle)
        case SQLITE_DONE: return nil
        default:
            let error = SQLiteError(ResultCode(rawValue: rc), message: connection.lastErrorMessage, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps until done, ignoring rows, then resets.
    public func runToCompletion() throws {
        defer { sqlite3_reset(handle) }
        while try step() != nil {}
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// The current row of a statement; valid only until the next step or reset: do not keep it.
public struct Row {
    let handle: OpaquePointer

    /// How many columns a row of this statement has.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// Whether column `index` (0-based) of the current row is NULL.
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Whether column `index` of the current row holds an integer.
    public func isInteger(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_INTEGER }

    /// Column `index` of the current row as an integer (0 for NULL).
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` of the current row as a floating-point number.
    public func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// Column `index` of the current row as text; nil for NULL.
    public func string(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Calls `body` with the blob's bytes without copying them (empty for NULL).
    public func withBlob<T>(_ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// A 16-byte blob column as two big-endian 64-bit halves; zeros when it is not 16 bytes.
    public func blob128(_ index: Int32) -> (high: UInt64, low: UInt64) {
        withBlob(index) { buffer in
            guard buffer.count == 16 else { return (0, 0) }
            return (
                UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// Column `index` of the current row as bytes (empty for NULL).
    public func blob(_ index: Int32) -> [UInt8] {
        withBlob(index) { Array($0) }
    }

    /// Column `index` of the current row as whatever type it holds.
    public func value(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(index))
        case SQLITE_FLOAT: return .real(double(index))
        case SQLITE_TEXT: return .text(string(index) ?? "")
        case SQLITE_BLOB: return .blob(blob(index))
        default: return .null
        }
    }
}
