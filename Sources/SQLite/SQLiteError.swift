/// An error reported by SQLite, with the result code, SQLite's message and the SQL that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary or extended SQLite result code (`SQLITE_BUSY` is 5, `SQLITE_CONSTRAINT` 19, …).
    public let code: Int32
    /// SQLite's own message for the failure.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of an extended code).
    public var primaryCode: Int32 { code & 0xFF }

    public var isBusy: Bool { primaryCode == 5 || primaryCode == 6 }
    public var isConstraint: Bool { primaryCode == 19 }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) (in \(sql))" }
        return "SQLite error \(code): \(message)"
    }
}
