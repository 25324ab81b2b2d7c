import Foundation
import Postgres

/// The PostgreSQL the tests may use: `BASKET_TEST_POSTGRES` holds the URL of a server whose user
/// may create databases (Scripts/test.sh starts one with Scripts/postgres.sh and sets it). Each
/// test gets a database of its own.
public enum TestPostgres {
    public static var url: String? {
        guard let url = ProcessInfo.processInfo.environment["BASKET_TEST_POSTGRES"], !url.isEmpty else { return nil }
        return url
    }

    /// Whether servers in this run use PostgreSQL (BASKET_TEST_STORE=postgres, with a URL): the
    /// service tests' harness and the end-to-end suite's ServerProcess then do.
    public static var serversOnPostgres: Bool {
        ProcessInfo.processInfo.environment["BASKET_TEST_STORE"] == "postgres" && url != nil
    }

    /// Why PostgreSQL tests do not run, for the disabled message.
    public static let unavailable = "BASKET_TEST_POSTGRES is not set (Scripts/test.sh starts a PostgreSQL and sets it)"

    /// `url` with its database name replaced.
    public static func url(_ base: String, database: String) -> String {
        var parts = URLComponents(string: base)!
        parts.path = "/" + database
        return parts.string!
    }
}

/// A new, empty database, dropped when this object goes away.
public final class TestDatabase: Sendable {
    public let name: String
    public let url: String
    private let server: String

    public init() throws {
        guard let server = TestPostgres.url else { throw TestDatabaseError(message: TestPostgres.unavailable) }
        self.server = server
        name = "basket_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try PostgresConnection(url: server).execute("CREATE DATABASE \(name)")
        url = TestPostgres.url(server, database: name)
    }

    deinit {
        try? PostgresConnection(url: server).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

public struct TestDatabaseError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
