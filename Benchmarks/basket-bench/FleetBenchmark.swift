import BasketCore
import Foundation
import Postgres
import Synchronization

/// `basket-bench fleet`: many devices on several basket-server instances sharing one PostgreSQL
/// (woken by LISTEN/NOTIFY), the load from several generator processes (`fleet-generator`, this
/// executable again) so that no process holds more descriptors than this machine allows. Device d
/// connects to instance d mod N from 127.0.0.(2 + d / 10,000) and long-polls one list: the first
/// 1,055 watch three "hot" lists (5, 50 and 1,000 watchers, spread over every instance), the rest
/// a family list each four devices share (on four instances in turn). One push to each hot list,
/// from an instance in turn, is timed to every watcher on every instance. Needs
/// BASKET_BENCH_POSTGRES (Scripts/bench.sh fleet starts one).
struct FleetBenchmark {
    var devices = 100_000
    var instances = 6
    var generators = 6
    var rounds = 3
    var burst = 5_000
    var firstRate = 50
    var maxRate = 3_200
    var stepSeconds = 3
    var churnSeconds = 10
    /// Seconds measured at rest, before the first push (renewals and the sweeps' reads of heads),
    /// after as many seconds of settling: at least a wait (30 s) for the renewals to run.
    var restSeconds = 30

    static let hotSizes = [5, 50, 1_000]

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--devices": devices = n
            case "--instances": instances = n
            case "--generators": generators = n
            case "--rounds": rounds = n
            case "--burst": burst = n
            case "--first-rate": firstRate = n
            case "--max-rate": maxRate = n
            case "--step-seconds": stepSeconds = n
            case "--churn-seconds": churnSeconds = n
            case "--rest-seconds": restSeconds = n
            default: return false
            }
            return true
        }
        guard devices >= Self.hotSizes.reduce(0, +) + 4 else { throw BenchError("--devices is at least 1,059") }
    }

    /// Which list device `d` watches: a hot list's index (0, 1, 2) or a family list's (3…).
    static func list(of device: Int) -> Int {
        var start = 0
        for (index, size) in hotSizes.enumerated() {
            if device < start + size { return index }
            start += size
        }
        return hotSizes.count + (device - start) / 4
    }

    static func listCount(_ devices: Int) -> Int { list(of: devices - 1) + 1 }

    struct Round {
        var p50: [Double] = []
        var p99: [Double] = []
        var max: [Double] = []
    }

    /// What one run measured: its table, the fan-out p99 to each hot list (the median over the
    /// rounds, seconds) and the errors the devices saw.
    struct Measured {
        var table: Table
        var fanOutP99: [Double]
        var errors: Int
    }

    func run() throws {
        let measured = try measure(load: true)
        print(measured.table.render())
        guard measured.errors == 0 else { throw BenchError("\(measured.errors) devices saw an error") }
    }

    /// Runs the fleet: connects every device, times the fan-out to the hot lists, and with
    /// `load` the burst, the rising push rate and the churn.
    func measure(load withLoad: Bool) throws -> Measured {
        raiseOpenFileLimit()
        guard let postgres = ProcessInfo.processInfo.environment["BASKET_BENCH_POSTGRES"], !postgres.isEmpty else {
            throw BenchError("set BASKET_BENCH_POSTGRES to a PostgreSQL URL (Scripts/bench.sh fleet starts one)")
        }
        let perInstance = devices / instances + 1_000
        print(
            "Fleet benchmark: \(devices) devices on \(instances) basket-server instances (release) sharing one"
                + " PostgreSQL, load from \(generators) generator processes; up to \(perInstance) connections each")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("basket-bench-fleet-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = "basket_fleet_\(getpid())"
        let admin = try PostgresConnection(url: postgres)
        try admin.execute("DROP DATABASE IF EXISTS \(database)")
        try admin.execute("CREATE DATABASE \(database)")
        defer { try? PostgresConnection(url: postgres).execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        var parts = URLComponents(string: postgres)!
        parts.path = "/" + database
        let servers = try (0..<instances).map { index in
            try ServerUnderTest(
                data: directory.appendingPathComponent("data-\(index)").path,
                arguments: [
                    "--store", parts.string!, "--max-connections", "\(perInstance)", "--max-watches",
                    "\(devices + 1_000)",
                    "--max-lists", "\(Self.listCount(devices) + 10)", "--connections", "4",
                ])
        }
        defer { for server in servers { server.stop() } }
        let ports = servers.map(\.port)
        let idleRSS = servers.map { residentBytes(pid: $0.pid) }

        // The lists, made on every instance in turn from four threads.
        let setup = try RawConnection(port: ports[0])
        let session = try BenchSession(setup)
        let lists = Mutex([ListID](repeating: ListID(raw: ID128(high: 0, low: 0)), count: Self.listCount(devices)))
        let count = Self.listCount(devices)
        let token = session.token
        _ = try ServerBenchmark().parallel(4) { thread in
            var mine: [(Int, ListID)] = []
            let connection = try RawConnection(port: ports[thread % ports.count])
            for index in stride(from: thread, to: count, by: 4) {
                let list = ListID.random()
                let answer = try connection.call(
                    "POST", "/v1/lists", token: token, body: Array("{\"id\":\"\(list)\"}".utf8))
                guard answer.status == 201 else { throw BenchError("list creation: \(answer.status)") }
                mine.append((index, list))
            }
            lists.withLock { for (index, list) in mine { $0[index] = list } }
        }
        let ids = lists.withLock { $0 }
        let listFile = directory.appendingPathComponent("lists").path
        try ids.map(\.description).joined(separator: "\n").write(toFile: listFile, atomically: true, encoding: .utf8)

        // The generators connect their devices; "parked" when all of theirs are sent.
        let started = monotonicNanoseconds()
        let fleet = try (0..<generators).map { index in
            try GeneratorProcess(arguments: [
                "fleet-generator", "--generator", "\(index)", "--generators", "\(generators)", "--devices",
                "\(devices)",
                "--ports", ports.map(String.init).joined(separator: ","), "--token", session.token, "--lists", listFile,
            ])
        }
        defer { for generator in fleet { generator.stop() } }
        for generator in fleet { try generator.waitFor("parked", seconds: 300) }
        let setups = try ports.map { try RawConnection(port: $0) }
        try ServerBenchmark().waitForWatchers(devices, setups: setups)
        let connectSeconds = Double(monotonicNanoseconds() - started) / 1e9
        let held = try setups.map { try watcherCount($0) }
        let parkedRSS = servers.map { residentBytes(pid: $0.pid) }
        let postgresConnections = try admin.query("SELECT count(*) FROM pg_stat_activity").string(0, 0) ?? "?"
        // Proportional (PSS): each process's RSS counts the shared buffers again.
        let postgresMemory = processesNamed("postgres").reduce(0) { $0 + proportionalBytes(pid: $1) }

        let load = Fleet(
            ports: ports, lists: ids, token: session.token, generators: fleet, servers: servers, admin: admin,
            devices: devices)
        // At rest: the devices renew their long-polls and nothing is pushed. Each renewal reads
        // its page, the membership checked in the same statement; every wait that runs out is
        // answered from the instance's memory, but the sweep reads the heads of those lists from
        // PostgreSQL (one statement per sweep and instance), so that a push whose notification
        // was lost is caught. Both are PostgreSQL's CPU and transactions here.
        let rest = try Self.atRest(seconds: Double(restSeconds), fleet: load)

        // Fan-out: one push to each hot list per round, from the instances in turn.
        var results = Array(repeating: Round(), count: Self.hotSizes.count)
        let pusher = try ports.map { try RawConnection(port: $0) }
        for round in 0..<rounds {
            for (hot, size) in Self.hotSizes.enumerated() {
                for generator in fleet { generator.clearDeliveries() }
                let begin = monotonicNanoseconds()
                let answer = try pusher[(round + hot) % ports.count].call(
                    "POST", "/v1/lists/\(ids[hot])/ops", token: session.token,
                    body: ServerBenchmark().singleOpBody(ids[hot], name: "Hot \(round)", counter: UInt16(round)))
                guard answer.status == 200 else { throw BenchError("a hot push answered \(answer.status)") }
                var times: [Double] = []
                let deadline = Date().addingTimeInterval(20)
                while times.count < size && Date() < deadline {
                    usleep(2_000)
                    times = fleet.flatMap { $0.deliveries(of: hot) }
                }
                guard times.count >= size else {
                    throw BenchError("\(times.count) of \(size) watchers of a hot list were answered within 20 s")
                }
                let latencies = times.map { max(0, $0 - Double(begin) / 1e9) }.sorted()
                results[hot].p50.append(latencies[latencies.count / 2])
                results[hot].p99.append(latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
                results[hot].max.append(latencies.last!)
                // Every watcher parks again before the next push.
                try ServerBenchmark().waitForWatchers(devices, setups: setups)
            }
        }
        // Under load: a burst, a rising push rate, and devices reconnecting.
        let descriptors = servers.reduce(0) { $0 + openDescriptors(pid: $1.pid) }
        var loadTable = Table(title: "", header: ["measure", "value", "target"])
        if withLoad {
            try Self.burst(pushes: burst, fleet: load, table: &loadTable)
            try Self.ramp(
                first: firstRate, max: maxRate, seconds: Double(stepSeconds), fleet: load, table: &loadTable)
            try Self.churn(seconds: churnSeconds, fleet: load, descriptorsBefore: descriptors, table: &loadTable)
        }

        var errors = 0
        for generator in fleet { errors += try generator.finish() }

        var table = Table(
            title: "A fleet: \(devices) devices on \(instances) instances and one PostgreSQL",
            header: ["measure", "value", "target"])
        table.add("time to connect every device (all parked)", String(format: "%.1f s", connectSeconds), "≤ 60 s")
        table.add(
            "connections held per instance", held.map { "\($0)" }.joined(separator: " / "), "")
        table.add("connections held in all", "\(held.reduce(0, +))", "\(devices)")
        table.add(
            "RSS per instance, idle → with its devices",
            zip(idleRSS, parkedRSS).map { String(format: "%.0f→%.0f", Double($0) / 1e6, Double($1) / 1e6) }
                .joined(separator: " / ") + " MB", "")
        let perPoll = zip(idleRSS, parkedRSS).map { Double($1 - $0) }.reduce(0, +) / Double(max(1, held.reduce(0, +)))
        table.add("server memory per parked long-poll", String(format: "%.1f kB", perPoll / 1e3), "≤ 12 kB")
        table.add("PostgreSQL connections (pg_stat_activity)", postgresConnections, "")
        table.add(
            "PostgreSQL memory (PSS of all its processes)", String(format: "%.0f MB", Double(postgresMemory) / 1e6), "")
        table.add(
            "at rest for \(Int(restSeconds)) s (renewals, no push): CPU (cores) instances / PostgreSQL / generators",
            String(format: "%.2f / %.2f / %.2f", rest.instances, rest.postgres, rest.generators), "")
        table.add(
            "at rest: PostgreSQL transactions per second (renewals' page reads, the sweeps' reads of heads)",
            String(format: "%.0f", rest.transactions), "")
        for (hot, size) in Self.hotSizes.enumerated() {
            let round = results[hot]
            table.add(
                "fan-out to \(size) watchers on \(min(size, instances)) instances: p50 / p99 / max (median of \(rounds))",
                "\(formatMillis(median(round.p50))) / \(formatMillis(median(round.p99))) / \(formatMillis(median(round.max)))",
                size == 1_000 ? "p99 ≤ 250 ms" : "")
        }
        table.rows += loadTable.rows
        table.add("errors (refused, closed or non-200 answers)", "\(errors)", "0")
        return Measured(table: table, fanOutP99: results.map { median($0.p99) }, errors: errors)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// The pids of the processes whose command is `name` (from /proc).
func processesNamed(_ name: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
        guard let pid = Int32(entry),
            let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
        else { return nil }
        return pid
    }
}

/// A `basket-bench fleet-generator` child: its lines ("parked", "delivered LIST SECONDS",
/// "churned N ERRORS", "errors N") read on a thread of their own; it takes commands on its
/// standard input ("churn PER_SECOND SECONDS"), and closing that ends it.
final class GeneratorProcess: @unchecked Sendable {
    // `@unchecked Sendable`: `state` is behind its lock; `process` and the pipes are set once.
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private let state = Mutex(State())

    struct State {
        var lines: [String] = []
        var delivered: [Int: [Double]] = [:]
        var deliveredCount = 0
        var ended = false
    }

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let reader = output.fileHandleForReading
        Thread { [self] in
            var pending = ""
            while case let data = reader.availableData, !data.isEmpty {
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    state.withLock { state in
                        let words = line.split(separator: " ")
                        if words.first == "delivered", words.count == 3, let list = Int(words[1]),
                            let seconds = Double(words[2])
                        {
                            state.delivered[list, default: []].append(seconds)
                            state.deliveredCount += 1
                        } else {
                            state.lines.append(line)
                        }
                    }
                }
            }
            state.withLock { $0.ended = true }
        }.start()
    }

    func waitFor(_ prefix: String, seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (found, ended, lines) = state.withLock {
                ($0.lines.contains { $0.hasPrefix(prefix) }, $0.ended, $0.lines)
            }
            if found { return }
            if ended { throw BenchError("a generator ended: \(lines.suffix(5).joined(separator: "; "))") }
            usleep(20_000)
        }
        throw BenchError("a generator did not say \(prefix) within \(Int(seconds)) s")
    }

    func clearDeliveries() {
        state.withLock {
            $0.delivered = [:]
            $0.deliveredCount = 0
        }
    }

    func deliveries(of list: Int) -> [Double] { state.withLock { $0.delivered[list] ?? [] } }

    /// Answers received since the last ``clearDeliveries()``.
    func deliveredCount() -> Int { state.withLock { $0.deliveredCount } }

    /// Writes one command line to its standard input.
    func send(_ command: String) {
        try? input.fileHandleForWriting.write(contentsOf: Array((command + "\n").utf8))
    }

    /// Waits for the end of its churn: the reconnects it made and the errors among them.
    func churned(seconds: Double) throws -> (reconnects: Int, errors: Int) {
        try waitFor("churned", seconds: seconds)
        let words =
            (state.withLock { state -> String? in
                defer { state.lines.removeAll { $0.hasPrefix("churned") } }
                return state.lines.last { $0.hasPrefix("churned") }
            } ?? "").split(separator: " ")
        guard words.count == 3, let done = Int(words[1]), let failed = Int(words[2]) else {
            throw BenchError("a generator's churn line is malformed")
        }
        return (done, failed)
    }

    /// Closes its input and returns the errors it counted.
    func finish() throws -> Int {
        try? input.fileHandleForWriting.close()
        try waitFor("errors", seconds: 60)
        let line = state.withLock { $0.lines.last { $0.hasPrefix("errors") } } ?? "errors 0"
        return Int(line.split(separator: " ").last ?? "0") ?? 0
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
