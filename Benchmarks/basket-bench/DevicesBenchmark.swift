import BasketCore
import Foundation
import Synchronization

/// `basket-bench devices`: many connected devices on one basket-server. Parks `devices` long-polls
/// (spread over `lists` lists, `hot` of them on one list) from loopback source addresses
/// 127.0.0.x, measures the server's memory, then pushes one operation to the hot list and times
/// its delivery to every watcher of it, with the server's CPU per delivered operation.
struct DevicesBenchmark {
    var devices = 100_000
    var hot = 10_000
    var lists = 1_000
    var rounds = 3

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--devices": devices = n
            case "--hot": hot = n
            case "--lists": lists = n
            case "--rounds": rounds = n
            default: return false
            }
            return true
        }
        guard hot <= devices, lists >= 2 else { throw BenchError("--hot is at most --devices, --lists at least 2") }
    }

    struct Result {
        var parkSeconds: Double
        var idleRSS: Int
        var parkedRSS: Int
        var p50: Double
        var p99: Double
        var last: Double
        var cpuPerDelivery: Double
        var errors: Int
    }

    func run() throws {
        var bench = self
        // One descriptor per device on each side, and room for the rest: the server inherits the
        // limit. Where it cannot be raised (no CAP_SYS_RESOURCE), as many devices as it allows.
        if let allowed = raiseOpenFileLimit(to: devices + 2_000), allowed < devices + 2_000 {
            bench.devices = max(bench.hot, allowed - 2_000)
            print(
                "Devices benchmark: the open-file limit is \(allowed) and cannot be raised here: "
                    + "\(bench.devices) devices instead of \(devices)")
        }
        try bench.runMeasured()
    }

    func runMeasured() throws {
        print(
            "Devices benchmark: basket-server (release); \(devices) long-polls from 127.0.0.x over "
                + "\(lists) lists, \(hot) of them on one list; load from this process")
        let result = try measured()
        var table = Table(
            title: "Connected devices: \(devices) parked long-polls on one instance",
            header: ["measure", "value", "target"])
        table.add("time to park them (connect, send, parked)", String(format: "%.1f s", result.parkSeconds), "")
        table.add("server RSS, idle (baseline)", String(format: "%.0f MB", Double(result.idleRSS) / 1e6), "")
        table.add(
            "server RSS with \(devices) parked", String(format: "%.0f MB", Double(result.parkedRSS) / 1e6), "≤ 1,500 MB"
        )
        table.add(
            "  per parked long-poll",
            String(format: "%.1f kB", Double(result.parkedRSS - result.idleRSS) / Double(devices) / 1e3), "")
        table.add(
            "fan-out to \(hot) watchers of one list, one push: p50 (median of \(rounds))", formatMillis(result.p50), "")
        table.add(
            "fan-out to \(hot) watchers of one list, one push: p99 (median of \(rounds))", formatMillis(result.p99),
            "≤ 250 ms")
        table.add("fan-out to \(hot) watchers of one list, one push: last", formatMillis(result.last), "")
        table.add(
            "server CPU per delivered operation", String(format: "%.1f µs", result.cpuPerDelivery * 1e6), "")
        table.add("errors (refused, closed or non-200 answers)", "\(result.errors)", "0")
        print(table.render())
        guard result.errors == 0 else { throw BenchError("\(result.errors) devices saw an error") }
    }

    /// One run on a new server process of its own.
    func measured() throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "basket-bench-devices-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServerUnderTest(
            data: directory.appendingPathComponent("data").path,
            arguments: [
                "--max-connections", "\(devices + 1_000)", "--max-watches", "\(devices + 1_000)", "--max-lists",
                "\(lists + 10)",
            ])
        defer { server.stop() }
        return try measure(server)
    }

    func measure(_ server: ServerUnderTest) throws -> Result {
        let setup = try RawConnection(port: server.port)
        let session = try BenchSession(setup)
        let token = session.token
        let ids = try (0..<lists).map { _ in try session.newList() }
        // Every list gets one operation, so a long-poll after 1 waits for the next.
        let pushes = ServerBenchmark()
        let pusher = try RawConnection(port: server.port)
        for list in ids {
            let answer = try pusher.call(
                "POST", "/v1/lists/\(list)/ops", token: token,
                body: pushes.singleOpBody(list, name: "First", counter: 0))
            guard answer.status == 200 else { throw BenchError("push answered \(answer.status)") }
        }
        let idleRSS = residentBytes(pid: server.pid)

        // Device i watches the hot list (ids[0]) when i < hot, else one of the others in turn.
        // Threads connect in parallel; device i comes from 127.0.0.(2 + i / 10,000) (connect picks
        // from half the ephemeral ports: 14,000 here).
        let threads = 4
        let port = server.port
        let start = DispatchTime.now().uptimeNanoseconds
        let built = Built(threads)
        _ = try pushes.parallel(threads) { thread in
            var mine: [RawConnection] = []
            mine.reserveCapacity(devices / threads + 1)
            for i in stride(from: thread, to: devices, by: threads) {
                let list = i < hot ? ids[0] : ids[1 + (i - hot) % (lists - 1)]
                let connection = try RawConnection(port: port, source: "127.0.0.\(2 + i / 10_000)")
                try connection.send(RawConnection.request("GET", "/v1/lists/\(list)/ops?after=1&wait=30", token: token))
                mine.append(connection)
            }
            built.set(thread, mine)
        }
        let connections = built.all
        try pushes.waitForWatchers(devices, setups: [setup])
        let parkSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let parkedRSS = residentBytes(pid: server.pid)

        // The hot list's watchers, in order: connection i of thread t is device t + i × threads.
        var watchers: [RawConnection] = []
        for i in 0..<hot { watchers.append(connections[i % threads][i / threads]) }
        var fds = watchers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var p50: [Double] = []
        var p99: [Double] = []
        var last: [Double] = []
        var errors = 0
        var cpu = 0.0
        var cursor: Int64 = 1
        // Between rounds, the hot watchers park again; the others may have run out their 30 s.
        var parkedBefore = devices
        for round in 0..<rounds {
            if round > 0 {
                for (i, watcher) in watchers.enumerated() {
                    try watcher.send(
                        RawConnection.request("GET", "/v1/lists/\(ids[0])/ops?after=\(cursor)&wait=30", token: token))
                    fds[i].events = Int16(POLLIN)
                }
                try pushes.waitForWatchers(parkedBefore, setups: [setup])
            }
            parkedBefore = try watcherCount(setup)
            let cpuBefore = processCPUSeconds(pid: server.pid)
            let begin = DispatchTime.now().uptimeNanoseconds
            try pusher.send(
                RawConnection.request(
                    "POST", "/v1/lists/\(ids[0])/ops", token: token,
                    body: pushes.singleOpBody(ids[0], name: "Hot \(round)", counter: UInt16(round + 1))))
            var latencies: [Double] = []
            latencies.reserveCapacity(hot)
            var pending = Set(0..<hot)
            let deadline = Date().addingTimeInterval(20)
            while !pending.isEmpty && Date() < deadline {
                _ = poll(&fds, nfds_t(fds.count), 1_000)
                for i in pending where fds[i].revents != 0 {
                    do {
                        guard let answer = try watchers[i].readAvailable() else { continue }
                        latencies.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
                        if answer.status != 200 || integerField("count", in: answer.body) != 1 { errors += 1 }
                    } catch {
                        errors += 1
                    }
                    pending.remove(i)
                    fds[i].events = 0
                }
            }
            errors += pending.count
            cpu += processCPUSeconds(pid: server.pid) - cpuBefore
            let pushed = try pusher.readResponse()
            guard pushed.status == 200 else { throw BenchError("the hot push answered \(pushed.status)") }
            cursor += 1
            latencies.sort()
            guard !latencies.isEmpty else { throw BenchError("no watcher of the hot list was answered") }
            p50.append(latencies[latencies.count / 2])
            p99.append(latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
            last.append(latencies.last!)
        }
        // The other devices were never woken by a push: none may have had an operation (an empty
        // answer is a long-poll that ran out its 30 s).
        var idleAnswered = 0
        for (t, list) in connections.enumerated() {
            for (i, connection) in list.enumerated() where t + i * threads >= hot {
                if let answer = try? connection.readAvailable(),
                    answer.status != 200 || integerField("count", in: answer.body) != 0
                {
                    idleAnswered += 1
                }
            }
        }
        errors += idleAnswered
        return Result(
            parkSeconds: parkSeconds, idleRSS: idleRSS, parkedRSS: parkedRSS, p50: median(p50), p99: median(p99),
            last: median(last), cpuPerDelivery: cpu / Double(hot * rounds), errors: errors)
    }
}

/// Each thread's connections, handed over once it is done.
private final class Built: @unchecked Sendable {
    // `@unchecked Sendable`: `connections` is only touched under `lock`, and each thread's slot
    // by that thread alone before it finishes.
    private let lock = NSLock()
    private var connections: [[RawConnection]]

    init(_ threads: Int) { connections = Array(repeating: [], count: threads) }

    func set(_ thread: Int, _ list: [RawConnection]) { lock.withLock { connections[thread] = list } }

    var all: [[RawConnection]] { lock.withLock { connections } }
}

/// CPU seconds (user + system) another process used so far, from /proc.
func processCPUSeconds(pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = text.lastIndex(of: ")")
    else { return 0 }
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    let fields = text[text.index(after: end)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// The long-polls the server holds now (its /metrics).
func watcherCount(_ setup: RawConnection) throws -> Int {
    let metrics = String(decoding: try setup.call("GET", "/metrics").body, as: UTF8.self)
    guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix("basket_watchers ") }),
        let value = Double(line.split(separator: " ")[1])
    else { throw BenchError("no basket_watchers in /metrics") }
    return Int(value)
}
