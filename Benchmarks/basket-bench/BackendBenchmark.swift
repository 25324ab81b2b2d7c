import BasketCore
import Foundation
import Postgres

/// `basket-bench backends`: the same load on the three ways to run the server — SQLite with one
/// instance (the baseline), PostgreSQL with one instance, and PostgreSQL with two instances
/// sharing the database (pushes spread over both, watchers spread over both, so half the
/// wake-ups travel through LISTEN/NOTIFY). Needs BASKET_BENCH_POSTGRES: the URL of a
/// PostgreSQL whose user may create databases (Scripts/bench.sh starts one).
struct BackendBenchmark {
    var clients = 4
    var batches = 100
    var watchers = 1_000

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--batches": batches = n
            case "--clients": clients = n
            case "--watchers": watchers = n
            default: return false
            }
            return true
        }
    }

    struct Configuration {
        var name: String
        var postgres: Bool
        var instances: Int
    }

    struct Result {
        var ingest: Double
        var fanOut: ServerBenchmark.FanOut
    }

    func run() throws {
        raiseOpenFileLimit()
        guard let server = ProcessInfo.processInfo.environment["BASKET_BENCH_POSTGRES"], !server.isEmpty else {
            throw BenchError("set BASKET_BENCH_POSTGRES to a PostgreSQL URL (Scripts/bench.sh backends starts one)")
        }
        let version = try PostgresConnection(url: server).query("SHOW server_version").string(0, 0) ?? "?"
        print(
            "Backend benchmark: \(clients) clients × \(batches) pushes of 1,000 ops; fan-out to \(watchers) watchers;"
                + " PostgreSQL \(version) on loopback (fsync on, synchronous_commit on)")
        let configurations = [
            Configuration(name: "SQLite, 1 instance (baseline)", postgres: false, instances: 1),
            Configuration(name: "PostgreSQL, 1 instance", postgres: true, instances: 1),
            Configuration(name: "PostgreSQL, 2 instances", postgres: true, instances: 2),
        ]
        var table = Table(
            title: "Server backends: ingest and fan-out",
            header: ["store", "push ingest", "vs SQLite", "fan-out p50", "fan-out p99", "p99 vs SQLite"])
        var baseline: Result?
        for configuration in configurations {
            let result = try measure(configuration, server: server)
            let base = baseline ?? result
            baseline = base
            table.add(
                configuration.name, formatRate(result.ingest) + " ops/s",
                String(format: "%.2fx", result.ingest / base.ingest), formatMillis(result.fanOut.p50),
                formatMillis(result.fanOut.p99), String(format: "%.2fx", result.fanOut.p99 / base.fanOut.p99))
        }
        print(table.render())
    }

    func measure(_ configuration: Configuration, server: String) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "basket-bench-backend-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments: [String] = []
        let database = "basket_bench_\(getpid())"
        var parts = URLComponents(string: server)!
        parts.path = "/" + database
        if configuration.postgres {
            let admin = try PostgresConnection(url: server)
            try admin.execute("DROP DATABASE IF EXISTS \(database)")
            try admin.execute("CREATE DATABASE \(database)")
            arguments = ["--store", parts.string!]
        }
        defer {
            if configuration.postgres {
                try? PostgresConnection(url: server).execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            }
        }
        let instances = try (0..<configuration.instances).map { _ in
            try ServerUnderTest(data: directory.appendingPathComponent("data").path, arguments: arguments)
        }
        defer { for instance in instances { instance.stop() } }
        let ports = instances.map(\.port)

        let setup = try RawConnection(port: ports[0])
        let session = try BenchSession(setup)
        let token = session.token
        func newList() throws -> ListID { try session.newList() }

        // Ingest: each client pushes its own list through the instances in turn.
        var bench = ServerBenchmark()
        bench.batchesPerClient = batches
        bench.watchers = watchers
        let lists = try (0..<clients).map { _ in try newList() }
        let bodies = lists.map { list in (0..<batches).map { bench.pushBody(list, batch: $0) } }
        let accepted = Counter()
        let seconds = try bench.parallel(clients) { client in
            let connection = try RawConnection(port: ports[client % ports.count])
            for body in bodies[client] {
                let answer = try connection.call("POST", "/v1/lists/\(lists[client])/ops", token: token, body: body)
                guard answer.status == 200 else { throw BenchError("push answered \(answer.status)") }
                accepted.add(jsonObject(answer.body)["accepted"] as? Int ?? 0)
            }
        }
        let total = clients * batches * bench.batchSize
        guard accepted.value == total else { throw BenchError("accepted \(accepted.value) of \(total)") }

        let setups = try ports.map { try RawConnection(port: $0) }
        let fan = try bench.fanOut(ports: ports, token: token, list: try newList(), setups: setups, burst: 0)
        return Result(ingest: Double(total) / seconds, fanOut: fan)
    }
}
