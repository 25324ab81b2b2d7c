import BasketCore
import BasketServer
import Foundation
import HTTPServer
import Postgres
import SQLite
import TestServers
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A backend the store tests run on.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    var description: String { rawValue }

    /// The backends this run can test: SQLite always, PostgreSQL when BASKET_TEST_POSTGRES is set.
    static var available: [Backend] { TestPostgres.url == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// The backend the service tests use: BASKET_TEST_STORE=postgres (Scripts/test.sh runs the
    /// server tests a second time so), SQLite otherwise.
    static var configured: Backend { TestPostgres.serversOnPostgres ? .postgres : .sqlite }
}

/// A new, empty store on `backend`: a SQLite file in a temporary folder or a new PostgreSQL
/// database, both removed when the last reference goes.
final class TestStore: Sendable {
    let backend: Backend
    let directory = TemporaryDirectory("store-test")
    let database: TestDatabase?

    init(_ backend: Backend) throws {
        self.backend = backend
        database = backend == .postgres ? try TestDatabase() : nil
    }

    /// Opens the store (another call opens another handle on the same data, as another server
    /// instance would).
    func open() throws -> any DumpableStore {
        switch backend {
        case .sqlite: try SQLiteStore(path: directory.file("store.sqlite"), fsyncEveryCommit: false)
        case .postgres: try PostgresStore(url: database!.url, connections: 4)
        }
    }

    /// `count` handles opened at once from as many threads (instances starting together), and
    /// the errors of those that failed.
    func openAtOnce(_ count: Int) -> (stores: [any DumpableStore], failures: [String]) {
        let opened = Locked([any DumpableStore]())
        let failures = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: count) { _ in
            do {
                let store = try open()
                opened.withLock { $0.append(store) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        return (opened.withLock { $0 }, failures.withLock { $0 })
    }

    /// Runs SQL on the store's data directly, behind the store's back: `sqlite` on the file or
    /// `postgres` on the database.
    func execute(sqlite: String, postgres: String) throws {
        switch backend {
        case .sqlite: try SQLite.Connection(path: directory.file("store.sqlite")).execute(sqlite)
        case .postgres: try PostgresConnection(url: database!.url).execute(postgres)
        }
    }

    /// The operations the store's log holds, counted in its tables (the records of its `pushes` rows).
    func operationCount() throws -> Int {
        let sql = "SELECT coalesce(sum(count), 0) FROM pushes"
        switch backend {
        case .sqlite:
            return Int(try SQLite.Connection(path: directory.file("store.sqlite")).scalar(sql)?.integerValue ?? -1)
        case .postgres:
            return Int(try PostgresConnection(url: database!.url).query(sql).int64(0, 0))
        }
    }

    /// The schema version recorded in the store (`user_version`, or the one row of `basket_schema`).
    func schemaVersion() throws -> Int {
        switch backend {
        case .sqlite:
            return try SQLite.Connection(path: directory.file("store.sqlite")).userVersion
        case .postgres:
            let rows = try PostgresConnection(url: database!.url).query("SELECT version FROM basket_schema")
            guard rows.count == 1 else { throw TestDatabaseError(message: "basket_schema has \(rows.count) rows") }
            return Int(rows.int64(0, 0))
        }
    }
}

/// The service on a real HTTP server on 127.0.0.1 (ephemeral port), with a real store: a SQLite
/// file, or a PostgreSQL database when BASKET_TEST_STORE=postgres (``Backend/configured``).
final class Harness: Sendable {
    let directory = TemporaryDirectory("server-test")
    let storage: TestStore
    let store: any DumpableStore
    let service: BasketService
    let http: HTTPListener
    let clock: ManualClock

    /// `sharing` another harness's store gives a second server instance on the same data.
    init(
        backend: Backend = .configured, sharing other: Harness? = nil,
        configure: (inout BasketService.Configuration) -> Void = { _ in },
        listen: (inout HTTPListener.Configuration) -> Void = { _ in }
    ) throws {
        clock = other?.clock ?? ManualClock(milliseconds: HybridClock.wallClockMilliseconds())
        storage = try other?.storage ?? TestStore(backend)
        store = try storage.open()
        var configuration = BasketService.Configuration()
        configuration.passwordIterations = 1_000
        let clock = self.clock
        configuration.clock = { clock.milliseconds }
        configure(&configuration)
        service = BasketService(store: store, configuration: configuration)
        var listener = HTTPListener.Configuration(host: "127.0.0.1", port: 0)
        listener.checkHead = service.checkHead
        listener.headersForEveryAnswer = BasketService.headersForEveryAnswer
        listen(&listener)
        http = HTTPListener(configuration: listener, handler: service.router().handle)
        try http.start()
    }

    deinit {
        service.shutdown()
        http.stop()
        store.close()
    }

    struct Answer {
        var status: Int
        var body: Data
        var headers: [String: String]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var error: String? { json["error"] as? String }
    }

    func call(
        _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil, raw: [UInt8]? = nil,
        headers extra: [String: String] = [:]
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(http.port)\(path)")!, timeoutInterval: 60)
        request.httpMethod = method
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json { request.httpBody = try JSONSerialization.data(withJSONObject: json) }
        if let raw { request.httpBody = Data(raw) }
        // As every client must (URLSession would otherwise send application/x-www-form-urlencoded).
        if request.httpBody != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            headers[String(describing: key).lowercased()] = String(describing: value)
        }
        return Answer(status: http.statusCode, body: data, headers: headers)
    }

    /// Creates an account and returns a token for it.
    func signUp(_ name: String) async throws -> String {
        let created = try await call("POST", "/v1/accounts", json: ["name": name, "password": "\(name)-password"])
        precondition(created.status == 201, "signup failed: \(created.status)")
        let login = try await call("POST", "/v1/tokens", json: ["name": name, "password": "\(name)-password"])
        return login.json["token"] as! String
    }

    func newList(_ token: String) async throws -> ListID {
        let list = ListID.random()
        let answer = try await call("POST", "/v1/lists", token: token, json: ["id": list.description])
        precondition(answer.status == 201)
        return list
    }

    /// An invite of `role` to `list` redeemed by `token`.
    func join(_ list: ListID, owner: String, member: String, role: String) async throws {
        let invite = try await call("POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": role])
        let code = invite.json["code"] as! String
        let joined = try await call("POST", "/v1/invites", token: member, json: ["code": code])
        precondition(joined.status == 200)
    }

    /// Operations on `list` stamped near the server's clock.
    /// A replica id of its own for the device called `name` (the same in every run).
    static func replica(_ name: String) -> UInt64 { name.utf8.reduce(1_000) { $0 &* 31 &+ UInt64($1) } }

    func operations(_ list: ListID, names: [String], offset: Int64 = 0, replica: UInt64 = 7) -> [Op] {
        var ops: [Op] = []
        for (i, name) in names.enumerated() {
            let ms = UInt64(Int64(clock.milliseconds) + offset)
            let version = Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: UInt16(i)), replica: ReplicaID(rawValue: replica))
            ops.append(
                .init(
                    list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name,
                    value: .text(name), version: version))
        }
        return ops
    }

    func push(_ ops: [Op], to list: ListID, token: String) async throws -> Answer {
        try await call(
            "POST", "/v1/lists/\(list)/ops", token: token,
            json: ["ops": String(decoding: OperationCodec.encode(ops), as: UTF8.self)])
    }

    func pulled(_ answer: Answer, sealed: Bool = false) throws -> [Op] {
        try OperationCodec.decode(Array((answer.json["ops"] as? String ?? "").utf8), sealed: sealed)
    }
}
