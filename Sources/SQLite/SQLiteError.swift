/// An error reported by SQLite, with the result code, SQLite's message and the SQL that failed.
///
/// Match a kind of failure by its code, in a `catch` or a `switch`:
/// ```swift
/// do { try db.execute(sql) } catch ResultCode.full { … } catch ResultCode.busy { … }
/// ```
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (``ResultCode/primary`` gives its primary code).
    public let resultCode: ResultCode
    /// SQLite's own message for the failure.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    /// An error with SQLite's result code, its message and the SQL that failed.
    public init(_ resultCode: ResultCode, message: String, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    /// Whether another connection holds the lock (``ResultCode/busy`` or ``ResultCode/locked``).
    public var isBusy: Bool { self.resultCode.primary == .busy || self.resultCode.primary == .locked }

    public var description: String {
        if let sql { return "SQLite error \(resultCode.rawValue): \(message) (in \(sql))" }
        return "SQLite error \(resultCode.rawValue): \(message)"
    }
}

/// An SQLite result code, named (https://sqlite.org/rescode.html). Extended codes carry their
/// primary code in the low byte; matching with `~=` compares primary codes, so `ResultCode.busy`
/// matches `SQLITE_BUSY_SNAPSHOT` too.
public struct ResultCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code of an extended one.
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// SQLITE_ERROR: a generic error (bad SQL, a missing table).
    public static let error = ResultCode(rawValue: 1)
    /// SQLITE_BUSY: another connection holds the lock (after the busy timeout).
    public static let busy = ResultCode(rawValue: 5)
    /// SQLITE_LOCKED: a table is locked by this connection's own statement.
    public static let locked = ResultCode(rawValue: 6)
    /// SQLITE_READONLY: the file cannot be written.
    public static let readOnly = ResultCode(rawValue: 8)
    /// SQLITE_IOERR: the operating system failed a read or write.
    public static let ioError = ResultCode(rawValue: 10)
    /// The file is damaged.
    public static let corrupt = ResultCode(rawValue: 11)
    /// The disk or the file system is full.
    public static let full = ResultCode(rawValue: 13)
    /// SQLITE_CANTOPEN: the file cannot be opened.
    public static let cannotOpen = ResultCode(rawValue: 14)
    /// SQLITE_CONSTRAINT: a UNIQUE, NOT NULL or CHECK constraint refused the write.
    public static let constraint = ResultCode(rawValue: 19)
    /// The file is not an SQLite database (its header is damaged).
    public static let notADatabase = ResultCode(rawValue: 26)

    /// Whether `error` is an ``SQLiteError`` whose primary code is `pattern`'s.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.resultCode.primary == pattern.primary
    }

    /// Whether `code`'s primary code is `pattern`'s.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool { code.primary == pattern.primary }
}

/// A database file whose schema is newer than this build knows (``Connection/migrate(_:code:)``).
public struct SchemaTooNewError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file's schema version, and the newest this build knows.
    public let found: Int
    /// The newest schema version this build knows.
    public let supported: Int

    public var description: String { "the file has schema \(found); this build knows \(supported)" }
}
