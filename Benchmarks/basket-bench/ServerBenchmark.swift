import BasketCore
import BasketServer
import Foundation
import HTTPServer
import PlatformCrypto
import Synchronization

/// `basket-bench server`: the real basket-server (release) as a separate process on loopback,
/// and the load from this process: push throughput, small requests, long-poll fan-out, memory.
struct ServerBenchmark {
    var pushClients = 4
    var batchesPerClient = 50
    var batchSize = 1_000
    var healthzPerThread = 25_000
    var watchers = 1_000
    var burst = 5_000
    var idleWatchers = 10_000
    /// With `--together N`: a shopping status on every list, and N browsers' push subscriptions
    /// (at most 20, an account's limit) to the fan-out list, posted to a receiver in this process.
    var together = 0

    init() {}

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--batches": batchesPerClient = n
            case "--clients": pushClients = n
            case "--watchers": watchers = n
            case "--idle-watchers": idleWatchers = n
            case "--burst": burst = n
            case "--requests": healthzPerThread = n
            case "--together": together = n
            default: return false
            }
            return true
        }
    }

    func run() throws {
        raiseOpenFileLimit()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("basket-bench-server-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // With --together: a push service of this process's own, which takes every message (201).
        let received = Counter()
        let receiver = HTTPListener(configuration: .init(host: "127.0.0.1", port: 0)) { _, responder in
            received.add(1)
            responder.respond(HTTPResponse(status: 201))
        }
        if together > 0 { try receiver.start() }
        defer { if together > 0 { receiver.stop() } }
        let server = try ServerUnderTest(
            data: directory.appendingPathComponent("data").path,
            // A message per list a second at most (not a minute): the messages go while the fan-out runs.
            arguments: together > 0
                ? ["--push-allow-endpoint", "http://127.0.0.1:\(receiver.port)/", "--push-interval", "1"] : [])
        defer { server.stop() }
        print(
            "Server benchmark: basket-server (release) pid \(server.pid) on 127.0.0.1:\(server.port), load from this process"
        )

        // Accounts and lists.
        let setup = try RawConnection(port: server.port)
        let session = try BenchSession(setup)
        let token = session.token
        func newList() throws -> ListID {
            let list = try session.newList()
            if together > 0 {
                let answer = try RawConnection(port: setup.port).call(
                    "PUT", "/v1/lists/\(list)/shopping", token: token, body: Array(#"{"shop":"Lidl"}"#.utf8))
                guard answer.status == 200 else { throw BenchError("shopping status: \(answer.status)") }
            }
            return list
        }

        var table = Table(title: "Server: basket-server on loopback", header: ["measure", "value", "vs baseline"])

        var phase = "push"
        do {
            // 1. Push throughput, against raw SQLite inserts of the same number of rows.
            let lists = try (0..<pushClients).map { _ in try newList() }
            let bodies = lists.map { list in (0..<batchesPerClient).map { batch in pushBody(list, batch: batch) } }
            let total = pushClients * batchesPerClient * batchSize
            let accepted = Counter()
            let port = server.port
            let pushSeconds = try parallel(pushClients) { client in
                let connection = try RawConnection(port: port)
                for body in bodies[client] {
                    let answer = try connection.call("POST", "/v1/lists/\(lists[client])/ops", token: token, body: body)
                    guard answer.status == 200 else {
                        throw BenchError(
                            "push answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
                    }
                    accepted.add(jsonObject(answer.body)["accepted"] as? Int ?? 0)
                }
            }
            guard accepted.value == total else { throw BenchError("accepted \(accepted.value) of \(total)") }
            let baseline = try ReplicaBenchmark.rawInsertRate(
                rows: total, path: directory.appendingPathComponent("baseline.sqlite").path)
            let storeRate = try storeAppendRate(lists: lists, directory: directory)
            let ingest = Double(total) / pushSeconds
            table.add(
                "raw SQLite insert, same rows, 1 transaction (baseline)", formatRate(baseline) + " rows/s", "1.00x")
            table.add(
                "store append alone: same batches, no HTTP, one thread", formatRate(storeRate) + " ops/s",
                String(format: "%.2fx", storeRate / baseline))
            table.add(
                "push ingest: \(pushClients) clients × \(batchesPerClient) batches of \(batchSize) ops (fsync per push)",
                formatRate(ingest) + " ops/s", String(format: "%.2fx", ingest / baseline))

            phase = "healthz"
            // 2. Small requests: GET /healthz on keep-alive connections, against a bare HTTPListener.
            let bare = HTTPListener(configuration: .init(host: "127.0.0.1", port: 0)) { _, responder in
                responder.respond(.body(Array(#"{"status":"ok"}"#.utf8), contentType: "application/json"))
            }
            try bare.start()
            let (bareRate, _) = try healthzRate(port: bare.port)
            bare.stop()
            let (rate, cpuPerRequest) = try healthzRate(port: server.port)
            table.add(
                "GET /healthz, bare HTTPListener in this process (baseline)", formatRate(bareRate) + " req/s", "1.00x")
            table.add(
                "GET /healthz, basket-server, 4 keep-alive connections", formatRate(rate) + " req/s",
                String(format: "%.2fx", rate / bareRate))
            table.add("  load generator's own CPU per request", String(format: "%.1f µs", cpuPerRequest * 1e6), "")

            phase = "fan-out"
            // 3. Fan-out: watchers long-polling one list; one push; time until each has it.
            let fanList = try newList()
            if together > 0 {
                // The subscriptions are another member's: nobody is told of their own pushes.
                let member = Array(#"{"name":"listener","password":"listener-password"}"#.utf8)
                let connection = try RawConnection(port: setup.port)
                _ = try connection.call("POST", "/v1/accounts", body: member)
                let listener =
                    jsonObject(try connection.call("POST", "/v1/tokens", body: member).body)["token"] as? String
                let invite = try connection.call(
                    "POST", "/v1/lists/\(fanList)/invites", token: token, body: Array(#"{"role":"editor"}"#.utf8))
                let code = jsonObject(invite.body)["code"] as? String ?? ""
                _ = try connection.call(
                    "POST", "/v1/invites", token: listener, body: Array("{\"code\":\"\(code)\"}".utf8))
                for index in 0..<min(together, 20) {
                    let key = try P256Key.generate()
                    let body: [String: Any] = [
                        "endpoint": "http://127.0.0.1:\(receiver.port)/push/\(index)",
                        "keys": [
                            "p256dh": Base64URL.encode(key.publicKeyBytes),
                            "auth": Base64URL.encode((0..<16).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }),
                        ],
                        "lists": [fanList.description], "kinds": ["added", "shopping", "done"],
                    ]
                    let answer = try connection.call(
                        "POST", "/v1/push/subscriptions", token: listener,
                        body: Array(try JSONSerialization.data(withJSONObject: body)))
                    guard answer.status == 201, (jsonObject(answer.body)["lists"] as? [String])?.count == 1 else {
                        throw BenchError("push subscription: \(answer.status)")
                    }
                }
                // Going shopping again: the listener's 20 browsers are told, while the fan-out runs.
                let again = try connection.call(
                    "PUT", "/v1/lists/\(fanList)/shopping", token: token, body: Array(#"{"shop":"Rewe"}"#.utf8))
                guard again.status == 200 else { throw BenchError("shopping status: \(again.status)") }
                print(
                    "With a shopping status on every list and \(min(together, 20)) push subscriptions to the fan-out list"
                )
            }
            let fan = try fanOut(ports: [server.port], token: token, list: fanList, setups: [setup])
            if together > 0 { print("push messages the receiver took so far: \(received.value)") }
            table.add("fan-out to \(watchers) watchers, one push: p50 (median of 5 rounds)", formatMillis(fan.p50), "")
            table.add("fan-out to \(watchers) watchers, one push: p99 (median of 5 rounds)", formatMillis(fan.p99), "")
            table.add(
                "fan-out to \(watchers) watchers, one push: last (median of 5 rounds)", formatMillis(fan.last), "")
            table.add(
                "deliveries/s, burst of \(burst) ops to \(watchers) re-polling watchers",
                formatRate(fan.deliveriesPerSecond) + " ops/s", "")

            phase = "idle watchers"
            // 4. Memory with idle watchers.
            let idle = try idleMemory(server: server, token: token, list: try newList())
            table.add("server RSS, idle (baseline)", String(format: "%.1f MB", Double(idle.before) / 1e6), "1.00x")
            table.add(
                "server RSS with \(idleWatchers) idle watchers", String(format: "%.1f MB", Double(idle.with) / 1e6),
                String(format: "%.2fx", Double(idle.with) / Double(max(idle.before, 1))))
        } catch {
            print(table.render())
            throw BenchError("during the \(phase) phase: \(error)")
        }
        print(table.render())
    }

    /// The store's append alone (decode included), in this process, on its own file.
    func storeAppendRate(lists: [ListID], directory: URL) throws -> Double {
        let store = try SQLiteStore(path: directory.appendingPathComponent("store-only.sqlite").path)
        let account = try store.createAccount(name: "bench", passwordHash: "-")
        for list in lists { _ = try store.createList(list, owner: account.id) }
        let batches = lists.flatMap { list in (0..<batchesPerClient).map { (list, pushOps(list, batch: $0)) } }
        let seconds = try seconds {
            for (list, ops) in batches { _ = try store.append(ops, to: list, receivedAt: 0) }
        }
        return Double(batches.count * batchSize) / seconds
    }

    func pushOps(_ list: ListID, batch: Int) -> [Op] {
        let now = HybridClock.wallClockMilliseconds()
        let replica = ReplicaID(rawValue: UInt64(0x1000 + batch))
        return (0..<batchSize).map { i in
            let name = "Item \(batch)-\(i)"
            let id = ItemID(list: list, key: ItemKey.normalize(name))
            let version = Version(timestamp: HybridTimestamp(milliseconds: now, counter: UInt16(i)), replica: replica)
            return .init(
                list: list, item: id, field: i % 2 == 0 ? .name : .checked,
                value: i % 2 == 0 ? .text(name) : .bool(true), version: version)
        }
    }

    func pushBody(_ list: ListID, batch: Int) -> [UInt8] { pushJSON(pushOps(list, batch: batch)) }

    /// The body of a push: `{"ops": "<encoded operations>"}`.
    func pushJSON(_ ops: [Op]) -> [UInt8] {
        var body = Array(#"{"ops":"#.utf8)
        JSONText.appendQuoted(bytes: OperationCodec.encode(ops), to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }

    func healthzRate(port: Int) throws -> (Double, Double) {
        let threads = 4
        let request = RawConnection.request("GET", "/healthz")
        let cpuBefore = processCPUSeconds()
        let seconds = try parallel(threads) { _ in
            let connection = try RawConnection(port: port)
            for _ in 0..<healthzPerThread {
                try connection.send(request)
                _ = try connection.readResponse()
            }
        }
        let requests = Double(threads * healthzPerThread)
        return (requests / seconds, (processCPUSeconds() - cpuBefore) / requests)
    }

    struct FanOut {
        var p50: Double
        var p99: Double
        var last: Double
        var deliveriesPerSecond: Double
    }

    /// Waits until the instances behind `setups` hold `count` parked long-polls between them.
    /// On a timeout the error says which counts it saw and what the watchers' connections got
    /// meanwhile (an empty page: a long-poll that ran out before the others were parked).
    func waitForWatchers(_ count: Int, setups: [RawConnection], watching: [RawConnection] = []) throws {
        let deadline = Date().addingTimeInterval(60)
        var seen: [Int] = []
        while Date() < deadline {
            let total = try setups.reduce(0) { $0 + (try watcherCount($1)) }
            if total >= count { return }
            if seen.last != total { seen.append(total) }
            usleep(20_000)
        }
        var answers: [String: Int] = [:]
        for connection in watching {
            do {
                if let answer = try connection.readAvailable() {
                    let body = String(decoding: answer.body, as: UTF8.self)
                    let kind =
                        answer.status == 200 && body.contains("\"count\":0")
                        ? "200 empty" : "\(answer.status) \(body.prefix(200))"
                    answers[kind, default: 0] += 1
                }
            } catch {
                answers["\(error)", default: 0] += 1
            }
        }
        let answered = answers.map { "\($0.value) × \($0.key)" }.joined(separator: "; ")
        throw BenchError(
            "the server never held \(count) watchers (counts seen: \(seen.suffix(12).map(String.init).joined(separator: ", ")))"
                + (answered.isEmpty ? "" : "; answered meanwhile: \(answered)"))
    }

    /// Watchers spread over the instances at `ports` (in turn) long-poll one list; pushes go to
    /// the first instance. Five rounds of one push (latency until each watcher has it), then a
    /// burst (deliveries per second) unless `burst` is 0.
    func fanOut(ports: [Int], token: String, list: ListID, setups: [RawConnection], burst: Int? = nil) throws
        -> FanOut
    {
        let burst = burst ?? self.burst
        let connections = try (0..<watchers).map { try RawConnection(port: ports[$0 % ports.count]) }
        var cursors = [Int64](repeating: 0, count: watchers)
        for (i, connection) in connections.enumerated() {
            try connection.send(
                RawConnection.request("GET", "/v1/lists/\(list)/ops?after=\(cursors[i])&wait=30", token: token))
        }
        try waitForWatchers(watchers, setups: setups, watching: connections)

        // One push; when does each watcher have it? Five rounds, each with every watcher parked again.
        let pusher = try RawConnection(port: ports[0])
        var fds = connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var roundP50: [Double] = []
        var roundP99: [Double] = []
        var roundLast: [Double] = []
        for round in 0..<5 {
            if round > 0 {
                for (i, connection) in connections.enumerated() {
                    try connection.send(
                        RawConnection.request("GET", "/v1/lists/\(list)/ops?after=\(cursors[i])&wait=30", token: token))
                    fds[i].events = Int16(POLLIN)
                }
                try waitForWatchers(watchers, setups: setups, watching: connections)
            }
            let one = singleOpBody(list, name: "Fan-out \(round)", counter: 0)
            let start = DispatchTime.now().uptimeNanoseconds
            try pusher.send(RawConnection.request("POST", "/v1/lists/\(list)/ops", token: token, body: one))
            var latencies: [Double] = []
            var pending = Set(0..<watchers)
            while !pending.isEmpty {
                _ = poll(&fds, nfds_t(fds.count), 5_000)
                for i in pending where fds[i].revents != 0 {
                    if let response = try connections[i].readAvailable() {
                        // Time first; the generator's own parsing must not count as the server's latency.
                        latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                        cursors[i] = integerField("cursor", in: response.body) ?? cursors[i]
                        pending.remove(i)
                        fds[i].events = 0
                    }
                }
            }
            _ = try pusher.readResponse()
            latencies.sort()
            roundP50.append(latencies[latencies.count / 2])
            roundP99.append(latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
            roundLast.append(latencies.last ?? 0)
        }

        if burst == 0 {
            return FanOut(p50: median(roundP50), p99: median(roundP99), last: median(roundLast), deliveriesPerSecond: 0)
        }
        // A burst: watchers re-poll after every answer until each has every operation.
        let target = cursors[0] + Int64(burst)
        for (i, connection) in connections.enumerated() {
            try connection.send(
                RawConnection.request("GET", "/v1/lists/\(list)/ops?after=\(cursors[i])&wait=30", token: token))
            fds[i].events = Int16(POLLIN)
        }
        try waitForWatchers(watchers, setups: setups, watching: connections)
        let burstStart = DispatchTime.now().uptimeNanoseconds
        let bodies = (0..<(burst / 100)).map { burstBody(list, batch: $0) }
        let port = ports[0]
        let pushThread = Thread {
            guard let connection = try? RawConnection(port: port) else { return }
            for body in bodies {
                _ = try? connection.call("POST", "/v1/lists/\(list)/ops", token: token, body: body)
            }
        }
        pushThread.start()
        var done = Set<Int>()
        var delivered = 0
        while done.count < watchers {
            _ = poll(&fds, nfds_t(fds.count), 5_000)
            for i in 0..<watchers where fds[i].revents != 0 && !done.contains(i) {
                while let response = try connections[i].readAvailable() {
                    delivered += Int(integerField("count", in: response.body) ?? 0)
                    cursors[i] = integerField("cursor", in: response.body) ?? cursors[i]
                    if cursors[i] >= target {
                        done.insert(i)
                        fds[i].events = 0
                        break
                    }
                    try connections[i].send(
                        RawConnection.request("GET", "/v1/lists/\(list)/ops?after=\(cursors[i])&wait=30", token: token))
                }
            }
        }
        let burstSeconds = Double(DispatchTime.now().uptimeNanoseconds - burstStart) / 1e9
        return FanOut(
            p50: median(roundP50), p99: median(roundP99), last: median(roundLast),
            deliveriesPerSecond: Double(delivered) / burstSeconds)
    }

    func singleOpBody(_ list: ListID, name: String, counter: UInt16) -> [UInt8] {
        let op = Op(
            list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name, value: .text(name),
            version: Version(
                timestamp: HybridTimestamp(milliseconds: HybridClock.wallClockMilliseconds(), counter: counter),
                replica: ReplicaID(rawValue: 77)))
        return pushJSON([op])
    }

    func burstBody(_ list: ListID, batch: Int) -> [UInt8] {
        let now = HybridClock.wallClockMilliseconds()
        let ops = (0..<100).map { i -> Op in
            let name = "Burst \(batch)-\(i)"
            return .init(
                list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name, value: .text(name),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: now, counter: UInt16(i)), replica: ReplicaID(rawValue: 88))
            )
        }
        return pushJSON(ops)
    }

    func idleMemory(server: ServerUnderTest, token: String, list: ListID) throws -> (before: Int, with: Int) {
        let setup = try RawConnection(port: server.port)
        let before = residentBytes(pid: server.pid)
        var connections: [RawConnection] = []
        connections.reserveCapacity(idleWatchers)
        let request = RawConnection.request("GET", "/v1/lists/\(list)/ops?after=0&wait=30", token: token)
        for _ in 0..<idleWatchers {
            let connection = try RawConnection(port: server.port)
            try connection.send(request)
            connections.append(connection)
        }
        try waitForWatchers(idleWatchers, setups: [setup], watching: connections)
        let with = residentBytes(pid: server.pid)
        connections.removeAll()
        return (before, with)
    }

    /// Runs `body` on `count` threads at once; returns the wall time until all finished.
    func parallel(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
        let failure = Mutex<String?>(nil)
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<count {
            group.enter()
            Thread {
                do { try body(index) } catch { failure.withLock { $0 = "\(error)" } }
                group.leave()
            }.start()
        }
        group.wait()
        if let message = failure.withLock({ $0 }) { throw BenchError(message) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// A top-level integer field of a page answer (`"count":12`), found without a JSON parser: the
/// load generator must stay cheap next to the server it measures.
func integerField(_ name: String, in body: [UInt8]) -> Int64? {
    let key = Array("\"\(name)\":".utf8)
    guard body.count > key.count else { return nil }
    var i = 0
    while i + key.count <= body.count {
        if body[i] == key[0] && Array(body[i..<(i + key.count)]) == key {
            var j = i + key.count
            var value: Int64 = 0
            var digits = 0
            while j < body.count, body[j] >= 48, body[j] <= 57 {
                value = value * 10 + Int64(body[j] - 48)
                j += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        i += 1
    }
    return nil
}

/// The account "bench", signed up and logged in through `setup`; makes lists as it.
struct BenchSession {
    let setup: RawConnection
    let token: String

    init(_ setup: RawConnection) throws {
        self.setup = setup
        let credentials = Array(#"{"name":"bench","password":"bench-password"}"#.utf8)
        _ = try setup.call("POST", "/v1/accounts", body: credentials)
        let login = try setup.call("POST", "/v1/tokens", body: credentials)
        guard let token = jsonObject(login.body)["token"] as? String else { throw BenchError("login failed") }
        self.token = token
    }

    /// A new list, made over a new connection: `setup` may have sat idle past the server's
    /// 90-second keep-alive timeout during a long phase.
    func newList() throws -> ListID {
        let list = ListID.random()
        let answer = try RawConnection(port: setup.port).call(
            "POST", "/v1/lists", token: token, body: Array("{\"id\":\"\(list)\"}".utf8))
        guard answer.status == 201 else { throw BenchError("list creation: \(answer.status)") }
        return list
    }
}

/// A thread-safe running total.
final class Counter: Sendable {
    private let total = Mutex(0)
    func add(_ n: Int) { total.withLock { $0 += n } }
    var value: Int { total.withLock { $0 } }
}

/// The release basket-server, started next to this executable.
final class ServerUnderTest {
    let process = Process()
    var port = 0
    /// The server's HTTP threads (its default).
    let threads = 4
    var pid: Int32 { process.processIdentifier }

    /// With `accessLog`, the server writes its access log (its standard output) to that file;
    /// otherwise it runs `--quiet`.
    init(data: String, arguments extra: [String] = [], accessLog: String? = nil) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("basket-server")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchError("build basket-server next to basket-bench (Scripts/bench.sh does)")
        }
        process.executableURL = executable
        // Every load connection comes from 127.0.0.1: no per-address limit. The load is one list
        // and one account far past a family's: the quotas would refuse it.
        let limits = ["--max-items", "100000000", "--max-list-mb", "100000", "--max-watches", "100000"]
        process.arguments =
            ["--listen", "127.0.0.1:0", "--data", data, "--connections-per-address", "0", "--public-metrics"]
            + (accessLog == nil ? ["--quiet"] : []) + limits + extra
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
                if let accessLog {
                    // The log is copied to its file as it comes, as a shell redirect would.
                    _ = FileManager.default.createFile(atPath: accessLog, contents: nil)
                    let file = FileHandle(forWritingAtPath: accessLog)
                    let reader = pipe.fileHandleForReading
                    Thread {
                        while case let data = reader.availableData, !data.isEmpty { file?.write(data) }
                    }.start()
                }
                return
            }
        }
        throw BenchError("basket-server did not start: \(text)")
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
