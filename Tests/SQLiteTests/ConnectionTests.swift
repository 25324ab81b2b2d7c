import Foundation
import SQLite
import Testing

struct ConnectionTests {
    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-test-\(UUID().uuidString).sqlite").path
    }

    @Test func writesAndReadsBackEveryValueType() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let db = try Connection(path: path)
        try db.configure(synchronous: .normal)
        try db.execute("CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n)")
        try db.run(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)", .integer(-7), .real(1.5), .text("Crème ✓"), .blob([0, 1, 255]),
            .null)
        try db.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", .integer(1), .real(0), .text(""), .blob([]), .null)
        let rows = try db.query("SELECT i, r, s, b, n FROM t ORDER BY i") { row in
            [row.value(0), row.value(1), row.value(2), row.value(3), row.value(4)]
        }
        #expect(rows[0] == [.integer(-7), .real(1.5), .text("Crème ✓"), .blob([0, 1, 255]), .null])
        #expect(rows[1] == [.integer(1), .real(0), .text(""), .blob([]), .null])
        #expect(try db.scalar("PRAGMA journal_mode")?.textValue == "wal")
    }

    @Test func aThrowingTransactionRollsBack() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t(x INTEGER PRIMARY KEY)")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try db.scalar("SELECT count(*) FROM t")?.integerValue == 0)
    }

    @Test func errorsCarryCodeMessageAndSQL() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t(x INTEGER PRIMARY KEY)")
        try db.run("INSERT INTO t VALUES (1)")
        do {
            try db.run("INSERT INTO t VALUES (1)")
            Issue.record("a duplicate key was accepted")
        } catch let error as SQLiteError {
            #expect(error.resultCode.rawValue == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY, an extended code
            #expect(ResultCode.constraint ~= error)
            #expect(!(ResultCode.busy ~= error))
            #expect(error.sql == "INSERT INTO t VALUES (1)")
            #expect(error.message.contains("UNIQUE"))
        }
        #expect(throws: SQLiteError.self) { try db.execute("SELEKT 1") }
        // The connection still works after errors.
        #expect(try db.scalar("SELECT count(*) FROM t")?.integerValue == 1)
    }

    @Test func userVersionIsReadAndWritten() throws {
        let db = try Connection(path: ":memory:")
        #expect(try db.userVersion == 0)
        try db.setUserVersion(3)
        #expect(try db.userVersion == 3)
    }

    /// Each migration runs once: a new file gets all of them, reopening applies none, a build
    /// with one more applies only that one, a file from a later build is refused untouched, and
    /// a migration that fails leaves the file at its old version.
    @Test func migrationsAreAppliedOnceInOrder() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = ["CREATE TABLE a(x)", "CREATE TABLE b(y); INSERT INTO a VALUES (1)"]
        #expect(try Connection(path: path).migrate(first) == 0..<2)
        #expect(try Connection(path: path).migrate(first) == 2..<2)
        let db = try Connection(path: path)
        #expect(try db.migrate(first + ["INSERT INTO a VALUES (2)"]) == 2..<3)
        #expect(try db.scalar("SELECT count(*) FROM a")?.integerValue == 2)
        #expect(try db.userVersion == 3)
        #expect(throws: SchemaTooNewError.self) { try Connection(path: path).migrate(first) }
        #expect(throws: (any Error).self) { try db.migrate(first + ["INSERT INTO a VALUES (2)", "NOT SQL"]) }
        #expect(try db.userVersion == 3)
        #expect(try db.scalar("SELECT count(*) FROM a")?.integerValue == 2)
    }

    @Test func openingADirectoryFails() {
        #expect(throws: SQLiteError.self) { try Connection(path: "/") }
    }
}
