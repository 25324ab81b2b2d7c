internal import CSQLite
import PrivateFiles

/// One SQLite database connection. Not thread-safe: share it through an actor or a lock.
///
/// ```swift
/// let db = try Connection(path: "/tmp/example.sqlite")
/// try db.execute("CREATE TABLE t(x INTEGER)")
/// try db.transaction { try db.run("INSERT INTO t VALUES (?)", .integer(1)) }
/// ```
public final class Connection {
    /// How much SQLite waits on disk before a commit returns (`PRAGMA synchronous`).
    public enum Synchronous: String, Sendable {
        /// fsync at every commit: a committed transaction survives power loss.
        case full = "FULL"
        /// In WAL mode, commits survive a process crash; a power loss may lose the last ones.
        case normal = "NORMAL"
        /// No fsync: for tests and throw-away data.
        case off = "OFF"
    }

    let handle: OpaquePointer
    /// The path the connection was opened with.
    public let path: String
    private var cache: [String: Statement] = [:]

    /// Opens (and creates) the database at `path`; `":memory:"` gives a private in-memory database.
    /// A new file is created with mode 0600 (its journal and WAL files take the same mode), and
    /// an existing one of this user that others may read is made private: databases hold lists
    /// and secrets.
    /// - Throws: `SQLiteError` when the file cannot be opened; the handle is closed again.
    public init(path: String, readOnly: Bool = false) throws {
        if !readOnly && path != ":memory:" && !path.isEmpty && !path.hasPrefix("file:") {
            try? PrivateFile.prepare(path)
        }
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(ResultCode(rawValue: rc), message: message, sql: nil)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
    }

    private var isClosed = false

    /// Closes the connection now, its cached statements first, instead of when it is released
    /// (a store that stops before its file is replaced). Nothing may use it afterwards.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    deinit { close() }

    /// Runs one or more statements that take no parameters and return no rows of interest.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(ResultCode(rawValue: rc), message: message, sql: sql)
        }
    }

    /// Prepares a statement. Prefer ``cached(_:)`` for statements run many times.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// Returns a prepared statement for `sql`, reset and with its bindings cleared, preparing it once.
    public func cached(_ sql: String) throws -> Statement {
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        cache[sql] = statement
        return statement
    }

    /// Runs a statement with parameters, ignoring rows.
    public func run(_ sql: String, _ values: SQLValue...) throws {
        let statement = try cached(sql)
        try statement.bind(values)
        try statement.runToCompletion()
    }

    /// Runs a query and maps every row.
    public func query<T>(_ sql: String, _ values: SQLValue..., map: (Row) throws -> T) throws -> [T] {
        let statement = try cached(sql)
        try statement.bind(values)
        var result: [T] = []
        while let row = try statement.step() {
            result.append(try map(row))
        }
        return result
    }

    /// The first column of the first row, or nil when the query returns no rows.
    public func scalar(_ sql: String, _ values: SQLValue...) throws -> SQLValue? {
        let statement = try cached(sql)
        try statement.bind(values)
        defer { statement.reset() }
        guard let row = try statement.step() else { return nil }
        return row.value(0)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `BEGIN IMMEDIATE` takes the write lock at once, so two writers never deadlock on upgrade.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one read transaction (`BEGIN` deferred): its statements see one snapshot,
    /// and a WAL database takes its read lock once for all of them instead of once each.
    public func reading<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            try? run("ROLLBACK")
            throw error
        }
    }

    /// `PRAGMA user_version`, the schema version ``migrate(_:code:)`` keeps.
    public var userVersion: Int {
        get throws { Int(try scalar("PRAGMA user_version")?.integerValue ?? 0) }
    }

    /// Sets `PRAGMA user_version` (the schema version migrations keep).
    public func setUserVersion(_ version: Int) throws {
        try execute("PRAGMA user_version = \(version)")
    }

    /// Brings the schema to version `migrations.count`: migration `n` (SQL, any number of
    /// statements) takes it from version `n` to `n + 1`, all the missing ones in one transaction,
    /// with `PRAGMA user_version` as the version. Several processes may migrate one file at once:
    /// the version is read again under the write lock, so exactly one of them applies each
    /// migration. `code` runs after each migration's SQL, in the same transaction, with its
    /// number, for what SQL cannot do. Returns the versions this call applied (empty when there
    /// was nothing to do).
    /// - Throws: ``SchemaTooNewError`` when the file has a newer schema than `migrations` know
    ///   (it was written by a later build); the file is not touched.
    @discardableResult
    public func migrate(_ migrations: [String], code: (_ migration: Int) throws -> Void = { _ in }) throws -> Range<Int>
    {
        let found = try userVersion
        if found > migrations.count { throw SchemaTooNewError(found: found, supported: migrations.count) }
        guard found < migrations.count else { return migrations.count..<migrations.count }
        return try transaction {
            let current = try userVersion
            guard current < migrations.count else { return migrations.count..<migrations.count }
            for version in current..<migrations.count {
                try execute(migrations[version])
                try code(version)
            }
            try setUserVersion(migrations.count)
            return current..<migrations.count
        }
    }

    /// Turns on write-ahead logging and sets how commits reach the disk.
    public func configure(synchronous: Synchronous) throws {
        if path != ":memory:" {
            // Several processes opening a new file at once race to switch it to WAL; SQLite answers
            // the losers SQLITE_BUSY without waiting on the busy handler. Try again, boundedly.
            var attempts = 0
            while true {
                do {
                    _ = try scalar("PRAGMA journal_mode = WAL")
                    break
                } catch ResultCode.busy where attempts < 100 {
                    attempts += 1
                    sqlite3_sleep(50)
                }
            }
        }
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        try execute("PRAGMA foreign_keys = ON")
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// The version of the linked SQLite library.
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

@available(*, unavailable)
extension Connection: Sendable {}
