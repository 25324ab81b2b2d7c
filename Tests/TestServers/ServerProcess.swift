// Real processes for the end-to-end tests: the package's executables, test ports, a
// basket-server (one process on SQLite, or two instances on PostgreSQL behind a proxy).
public import Foundation
import Postgres
import SQLite
public import Spawn
import Synchronization
import TestSupport

/// The result of a finished process.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutBytes: Data
    /// The most memory the process held at once (its peak resident set), in KiB.
    public var peakResidentKiB = 0
}

/// Runs the package's executables as real processes.
public enum Executables {
    /// The directory holding the built products (`.build/debug` or `.build/release`).
    public static var productsDirectory: URL {
        // The test bundle lives in the products directory.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String {
        productsDirectory.appendingPathComponent(name).path
    }

    /// Runs `name` with `arguments` to completion, feeding `stdin`.
    @discardableResult
    public static func run(
        _ name: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double = 180
    ) throws -> ProcessResult {
        try run(executable: path(name), arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// Runs the program at `executable` to completion, feeding `stdin`; one that runs longer than
    /// `timeout` seconds is killed and the run throws.
    public static func run(
        executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double = 180
    ) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        let process = try Subprocess(executable, arguments, environment: env, stdin: stdin ?? Data())
        let termination = try process.finish(timeout: timeout)
        return ProcessResult(
            status: termination.status, stdout: process.stdout, stderr: process.stderr,
            stdoutBytes: process.stdoutData, peakResidentKiB: termination.peakResidentKiB)
    }
}

extension Executables {
    /// Runs a `/bin/sh -c` script (for what Foundation's Process cannot pass, like invalid UTF-8).
    public static func runShell(_ script: String, environment: [String: String] = [:]) throws -> ProcessResult {
        try run(executable: "/bin/sh", ["-c", script], environment: environment)
    }
}

/// Ports for test servers, below Linux's ephemeral range (32768–60999 by default), so that no
/// outgoing connection of a parallel test can take a killed server's port before it restarts on
/// it; each handed out once per test process.
public enum TestPorts {
    private static let next = Mutex(20_000 + Int(UInt32.random(in: 0..<4_000)))

    /// A port no other server of this test process was given (the server may still find it taken
    /// by another process: ``ServerProcess`` then asks again).
    public static func fresh() -> Int {
        next.withLock { port in
            defer { port = port + 1 >= 32_768 ? 20_000 : port + 1 }
            return port
        }
    }
}

/// A real `basket-server` on 127.0.0.1: by default one process with its SQLite file in
/// `dataDirectory`; with BASKET_TEST_STORE=postgres (and BASKET_TEST_POSTGRES), two instances on
/// a new PostgreSQL database behind a ``RoundRobinProxy``, so consecutive connections alternate
/// between them. `url` is what clients use either way.
public final class ServerProcess: @unchecked Sendable {
    // `@unchecked Sendable`: `processes` and the ports change only in start/stop, called by one test.
    public let dataDirectory: String
    /// The port clients connect to (the proxy's, with two instances).
    public private(set) var port: Int
    private var instancePorts: [Int]
    private var processes: [Subprocess] = []
    /// Whether the servers started once: clients may have the URL since.
    private var hasStarted = false
    /// The database the instances share (nil for SQLite).
    public let database: TestDatabase?
    private let proxy: RoundRobinProxy?

    /// Whether servers run as two instances on PostgreSQL in this test run.
    public static var pairOnPostgres: Bool { TestPostgres.serversOnPostgres }

    /// Options every instance gets after the test defaults (which they override).
    private let extraArguments: [String]
    /// Environment variables over the test defaults.
    private let extraEnvironment: [String: String]
    /// Environment variables of one instance only, by index.
    private let instanceEnvironment: [Int: [String: String]]

    /// Starts the server on `port` (0: a fresh one from ``TestPorts``) and waits until it listens.
    /// A server killed or stopped and started again comes back on the same port, which no
    /// outgoing connection can have taken meanwhile (clients keep their configured URL).
    public convenience init(
        dataDirectory: String, port: Int = 0, arguments: [String] = [], environment: [String: String] = [:]
    ) throws {
        try self.init(
            dataDirectory: dataDirectory, port: port, arguments: arguments, environment: environment,
            database: Self.pairOnPostgres ? try TestDatabase() : nil, instances: 2)
    }

    /// `instances` servers on a new PostgreSQL database (BASKET_TEST_POSTGRES) behind a
    /// ``RoundRobinProxy``, whatever BASKET_TEST_STORE says; each may have environment variables
    /// of its own (`instanceEnvironment[index]`), and is reached alone at ``instanceURL(_:)``.
    public convenience init(
        onPostgres instances: Int, dataDirectory: String, arguments: [String] = [],
        environment: [String: String] = [:], instanceEnvironment: [Int: [String: String]] = [:]
    ) throws {
        try self.init(
            dataDirectory: dataDirectory, port: 0, arguments: arguments, environment: environment,
            database: try TestDatabase(), instances: instances, instanceEnvironment: instanceEnvironment)
    }

    private init(
        dataDirectory: String, port: Int, arguments: [String], environment: [String: String],
        database: TestDatabase?, instances: Int, instanceEnvironment: [Int: [String: String]] = [:]
    ) throws {
        self.dataDirectory = dataDirectory
        extraArguments = arguments
        extraEnvironment = environment
        self.instanceEnvironment = instanceEnvironment
        if let database {
            self.database = database
            instancePorts = Array(repeating: 0, count: instances)
            proxy = try RoundRobinProxy(backends: [], port: port)
            self.port = proxy!.port
        } else {
            self.database = nil
            proxy = nil
            instancePorts = [port]
            self.port = port
        }
        try start()
    }

    public var url: String { "http://127.0.0.1:\(port)" }

    /// The address of instance `index` alone (not through the proxy).
    public func instanceURL(_ index: Int) -> String { "http://127.0.0.1:\(instancePorts[index])" }

    /// Instance `index`'s process, while it runs.
    public func instance(_ index: Int) -> Subprocess? { index < processes.count ? processes[index] : nil }

    /// How many server processes serve `url`.
    public var instances: Int { instancePorts.count }

    /// Starts every instance (on the ports they had, after a stop or kill).
    public func start() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BASKET_QUIET"] = "1"
        // Test servers: cheap password hashes (the abuse tests start theirs at the real count),
        // and no per-address connection limit (every test client is 127.0.0.1).
        environment["BASKET_PASSWORD_ITERATIONS"] = environment["BASKET_PASSWORD_ITERATIONS"] ?? "10000"
        environment["BASKET_CONNECTIONS_PER_ADDRESS"] = environment["BASKET_CONNECTIONS_PER_ADDRESS"] ?? "0"
        // Tests read /metrics from the instances' own ports.
        environment["BASKET_PUBLIC_METRICS"] = environment["BASKET_PUBLIC_METRICS"] ?? "1"
        environment.merge(extraEnvironment) { $1 }
        var started: [Subprocess] = []
        for index in instancePorts.indices {
            // Instances behind the proxy take a fresh port at every start; one server without a
            // proxy keeps its port (clients have its URL), and gets a fresh one only the first time.
            if proxy != nil || instancePorts[index] == 0 { instancePorts[index] = TestPorts.fresh() }
            try startInstance(
                index, environment: environment.merging(instanceEnvironment[index] ?? [:]) { $1 }, started: &started)
        }
        if let proxy {
            proxy.setBackends(instancePorts)
        } else {
            port = instancePorts[0]
        }
        hasStarted = true
    }

    private func startInstance(_ index: Int, environment: [String: String], started: inout [Subprocess]) throws {
        for attempt in 0..<10 {
            let instancePort = instancePorts[index]
            var arguments = ["--listen", "127.0.0.1:\(instancePort)", "--data", dataDirectory]
            if let database { arguments += ["--store", database.url, "--connections", "4"] }
            arguments += extraArguments
            let process = try Subprocess(
                Executables.path("basket-server"), arguments, environment: environment, stderr: .mergeWithOutput)
            processes = started + [process]
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if process.stdout.contains("listening on http://127.0.0.1:\(instancePort)") {
                    started.append(process)
                    return
                }
                if !process.isRunning { break }
                usleep(10_000)
            }
            process.kill()
            // Another process holds the port: a fresh one, unless clients expect this one.
            let taken = process.stdout.contains("in use")
            guard taken && attempt < 9 && (proxy != nil || !hasStarted) else { break }
            instancePorts[index] = TestPorts.fresh()
        }
        throw ServerError(message: "basket-server did not start: \(log)")
    }

    /// Everything the servers printed since they last started.
    public var log: String {
        processes.count == 1
            ? processes[0].stdout
            : processes.enumerated().map { "[instance \($0)]\n\($1.stdout)" }.joined(separator: "\n")
    }

    /// SIGTERM to every instance, and waits for clean exits; returns the first non-zero exit
    /// status (-1 if one had to be killed after 30 s).
    @discardableResult
    public func stop() -> Int32 {
        for process in processes where process.termination == nil { process.signal(SIGTERM) }
        var status: Int32 = 0
        for process in processes {
            var code: Int32
            if let ended = process.wait(timeout: 30) {
                code = ended.signaled ? 128 + ended.status : ended.status
            } else {
                process.kill()
                code = -1
            }
            if status == 0 { status = code }
        }
        return status
    }

    /// SIGKILL to every instance: they get no chance to clean up.
    public func kill() {
        for process in processes { process.kill() }
    }

    public var isRunning: Bool { !processes.isEmpty && processes.allSatisfy(\.isRunning) }

    /// Runs `basket-server compact` on the store while the servers run: superseded operations
    /// received more than `retentionDays` ago are dropped.
    public func compact(retentionDays: Double) throws -> ProcessResult {
        let store = database.map { ["--store", $0.url] } ?? ["--data", dataDirectory]
        return try Executables.run("basket-server", store + ["--retention-days", "\(retentionDays)", "compact"])
    }

    /// Runs a `basket-server` command (`rotate-push-key`) against this server's store.
    public func command(_ arguments: String...) throws -> ProcessResult {
        let store = database.map { ["--store", $0.url] } ?? ["--data", dataDirectory]
        return try Executables.run("basket-server", store + arguments)
    }

    /// Backs the store up to `path` the way docs/deploy.md says: `basket-server backup` for
    /// SQLite, pg_dump for PostgreSQL (both while the server runs).
    public func backup(to path: String) throws -> ProcessResult {
        if let database {
            return try Executables.runShell("pg_dump --format=custom --file='\(path)' '\(database.url)'")
        }
        return try Executables.run("basket-server", ["--data", dataDirectory, "backup", path])
    }

    /// Restores the backup at `path` (servers stopped): `basket-server restore` for SQLite;
    /// pg_restore, then `basket-server renew-epochs`, for PostgreSQL.
    public func restore(from path: String) throws -> ProcessResult {
        if let database {
            let restored = try Executables.runShell(
                "pg_restore --clean --if-exists --single-transaction --dbname='\(database.url)' '\(path)'")
            if restored.status != 0 { return restored }
            return try Executables.run("basket-server", ["--store", database.url, "renew-epochs"])
        }
        return try Executables.run("basket-server", ["--data", dataDirectory, "restore", path])
    }

    /// Rows in the store's log (read from the SQLite file or the database directly).
    public func storedOperationRows() throws -> Int {
        if let database {
            return Int(
                try PostgresConnection(url: database.url).query("SELECT coalesce(sum(count), 0) FROM pushes").int64(
                    0, 0))
        }
        let store = try Connection(path: dataDirectory + "/basket-server.sqlite")
        return Int(try store.scalar("SELECT coalesce(sum(count), 0) FROM pushes")?.integerValue ?? -1)
    }

    /// A gauge or counter of `/metrics` (the sample without labels), or nil when absent: an
    /// instance's own figures (requests, watchers) summed over the instances, the store's
    /// (operations, lists, accounts, bytes) read once.
    public func metric(_ name: String) throws -> Int? {
        let storeWide = ["basket_operations_stored", "basket_lists", "basket_accounts", "basket_database_bytes"]
        var total: Int?
        for instancePort in storeWide.contains(name) ? [instancePorts[0]] : instancePorts {
            let text = try Executables.runShell("curl -s http://127.0.0.1:\(instancePort)/metrics").stdout
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }),
                let value = Double(line.split(separator: " ")[1])
            else { continue }
            total = (total ?? 0) + Int(value)
        }
        return total
    }

    /// Waits (polling, at most `seconds`) until `metric(name)` is at least `value`; returns
    /// whether it got there. Tests wait for the state they need (a long-poll parked) this way
    /// instead of sleeping for a guessed time.
    @discardableResult
    public func waitForMetric(_ name: String, atLeast value: Int, seconds: Double = 20) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let current = try metric(name), current >= value { return true }
            usleep(20_000)
        }
        return false
    }

    /// The first instance's process id, while it runs.
    public var pid: Int32? { processes.first?.isRunning == true ? processes.first?.pid : nil }

    /// The instances' resident memory in bytes (VmRSS), summed, while they run.
    public var residentBytes: Int? {
        var total = 0
        for process in processes {
            guard process.isRunning,
                let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
            else { return nil }
            total += kilobytes * 1024
        }
        return processes.isEmpty ? nil : total
    }

    deinit {
        kill()
        for process in processes { _ = process.wait(timeout: 10) }
        proxy?.stop()
    }

    public struct ServerError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
