import Foundation
import Gzip
import HTTPServer
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real server on 127.0.0.1 with an ephemeral port, driven over real HTTP.
final class TestServer: Sendable {
    let server: HTTPListener
    let parked = Locked<[Responder]>([])
    /// Parked requests whose client hung up (their hang-up handler ran).
    let hungUp = Locked(0)
    let log = Locked<[HTTPListener.CompletedRequest]>([])

    init(
        maxBodyBytes: Int = 1_000, maxBufferedBodyBytes: Int = 256 << 20, threads: Int = 2,
        connectionLimit: Int = 20_000, idleWakeMilliseconds: Int = 60_000,
        configure: (inout HTTPListener.Configuration) -> Void = { _ in }
    ) throws {
        let parked = self.parked
        let hungUp = self.hungUp
        let router = Router { r in
            r.on("GET", "/healthz") { _ in .body(Array("ok".utf8), contentType: "text/plain") }
            r.on("POST", "/echo/{name}") { request in
                let name = request.pathParameters["name"] ?? "?"
                let q = request.query["q"] ?? "-"
                var body = Array("\(name):\(q):".utf8)
                body += request.body
                return .body(body, contentType: "text/plain")
            }
            r.on("GET", "/big") { _ in
                .body(Array(repeating: UInt8(ascii: "a"), count: 50_000), contentType: "text/plain")
            }
            r.on("GET", "/fail") { _ in throw HTTPError(422, "nope", "this route always fails") }
            r.on("GET", "/crash") { _ in throw CocoaError(.fileReadCorruptFile, userInfo: ["secret": "/srv/db"]) }
            r.on("GET", "/wait") { _, responder in
                parked.withLock { $0.append(responder) }
                responder.onHangUp { hungUp.withLock { $0 += 1 } }
            }
            r.on("POST", "/wake") { request in
                let waiting = parked.withLock { list -> [Responder] in
                    defer { list.removeAll() }
                    return list
                }
                for responder in waiting { responder.respond(.body(request.body, contentType: "text/plain")) }
                return .body(Array("\(waiting.count)".utf8), contentType: "text/plain")
            }
        }
        var configuration = HTTPListener.Configuration(host: "127.0.0.1", port: 0)
        configuration.maxBodyBytes = maxBodyBytes
        configuration.maxBufferedBodyBytes = maxBufferedBodyBytes
        configuration.threads = threads
        configuration.connectionLimit = connectionLimit
        // A lost wake-up then shows as a minute's wait, not the default second.
        configuration.idleWakeMilliseconds = idleWakeMilliseconds
        let log = self.log
        configuration.onRequestCompleted = { record in log.withLock { $0.append(record) } }
        configure(&configuration)
        server = HTTPListener(configuration: configuration, handler: router.handle)
        try server.start()
    }

    var base: String { "http://127.0.0.1:\(server.port)" }

    func request(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:]) async throws
        -> (status: Int, body: String, headers: [String: String])
    {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            fields[String(describing: key).lowercased()] = String(describing: value)
        }
        return (http.statusCode, String(decoding: data, as: UTF8.self), fields)
    }
}

@Suite(.serialized)
struct HTTPServerTests {
    @Test func servesRoutesWithParametersQueryAndBody() async throws {
        let test = try TestServer()
        defer { test.server.stop() }
        #expect(try await test.request("GET", "/healthz").body == "ok")
        let echo = try await test.request("POST", "/echo/milk?q=cr%C3%A8me", body: Array("hello".utf8))
        #expect(echo.status == 200 && echo.body == "milk:crème:hello")
    }

    @Test func errorsAreJSONWithCodeAndMessage() async throws {
        let test = try TestServer()
        defer { test.server.stop() }
        let failed = try await test.request("GET", "/fail")
        #expect(failed.status == 422 && failed.body == #"{"error":"nope","message":"this route always fails"}"#)
        let missing = try await test.request("GET", "/nothing")
        #expect(missing.status == 404 && missing.body.contains(#""error":"not_found""#))
        let wrongMethod = try await test.request("DELETE", "/healthz")
        #expect(wrongMethod.status == 405)
        // Any other error is a 500 that tells the client nothing of it; the operator's log has it.
        let reported = Locked<[String]>([])
        Router.onInternalError { text in reported.withLock { $0.append(text) } }
        let crashed = try await test.request("GET", "/crash")
        #expect(crashed.status == 500 && crashed.body == #"{"error":"internal","message":"internal error"}"#)
        #expect(reported.withLock { $0.contains { $0.contains("GET /crash") } })
    }

    /// Sends `bytes` on a raw connection.
    static func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The head of a POST to /echo/slow announcing `length` bytes of body.
    static func slowHead(_ length: Int) -> [UInt8] {
        Array("POST /echo/slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(length)\r\n\r\n".utf8)
    }

    /// Waits up to a second for `condition`.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<100 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    /// Bodies being read hold the bytes received so far of a server-wide budget (never what a
    /// header announces): past it a request is answered 503 and its body is not kept, and the
    /// budget comes back when the holder finishes.
    @Test func bufferedBodiesShareABoundedBudget() async throws {
        // The slow body takes as long as the steps below (two requests of their own): on a loaded
        // machine more than the 10 s a body of 1,500 bytes is given, which is not what this tests.
        let test = try TestServer(maxBodyBytes: 1_500, maxBufferedBodyBytes: 2_000) { $0.bodyGraceSeconds = 300 }
        defer { test.server.stop() }
        let slow = Loopback.connect(port: test.server.port)
        #expect(slow >= 0)
        defer { close(slow) }
        Self.write(slow, Self.slowHead(1_500) + Array(repeating: UInt8(ascii: "a"), count: 100))
        try await Self.eventually { test.server.bufferedBodies > 0 }
        #expect(test.server.bufferedBodies == 100)
        Self.write(slow, Array(repeating: UInt8(ascii: "a"), count: 1_200))
        try await Self.eventually { test.server.bufferedBodies == 1_300 }
        #expect(test.server.bufferedBodies == 1_300)
        let refused = try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 1_000))
        #expect(refused.status == 503 && refused.body.contains("busy") && refused.headers["retry-after"] == "1")
        #expect(try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 400)).status == 200)
        Self.write(slow, Array(repeating: UInt8(ascii: "a"), count: 200))
        var answer = [UInt8](repeating: 0, count: 4_096)
        let n = answer.withUnsafeMutableBytes { recv(slow, $0.baseAddress, $0.count, 0) }
        #expect(n > 0 && String(decoding: answer[0..<max(0, n)], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        try await Self.eventually { test.server.bufferedBodies == 0 }
        #expect(test.server.bufferedBodies == 0)
        #expect(try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 1_000)).status == 200)
    }

    /// Announced bodies cost nothing until their bytes come: 64 connections announcing the largest
    /// body and sending none leave the budget empty, and another request is served at once.
    @Test func announcedBodiesHoldNothing() async throws {
        let test = try TestServer(maxBodyBytes: 4_096, maxBufferedBodyBytes: 8_192)
        defer { test.server.stop() }
        let held = (0..<64).map { _ in Loopback.connect(port: test.server.port) }
        defer { for fd in held { close(fd) } }
        for fd in held { Self.write(fd, Self.slowHead(4_096)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(test.server.bufferedBodies == 0)
        #expect(try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 4_000)).status == 200)
    }

    /// One client address holds at most its share of the budget; another address is served.
    @Test func oneAddressHoldsAtMostItsShare() async throws {
        // A long grace, as above: on a loaded machine the slow body's deadline must not release
        // its bytes before the second request from its address arrives.
        let test = try TestServer(maxBodyBytes: 1_500, maxBufferedBodyBytes: 10_000) {
            $0.maxBufferedBodyBytesPerAddress = 1_000
            $0.bodyGraceSeconds = 300
        }
        defer { test.server.stop() }
        let slow = Loopback.connect(port: test.server.port, from: "127.0.0.5")
        defer { close(slow) }
        Self.write(slow, Self.slowHead(1_500) + Array(repeating: UInt8(ascii: "a"), count: 900))
        try await Self.eventually { test.server.bufferedBodies == 900 }
        #expect(test.server.bufferedBodies == 900)
        let mine = try RawHTTP.request(
            port: test.server.port, from: "127.0.0.5", "POST", "/echo/x", body: Array(repeating: 65, count: 500))
        #expect(mine.status == 503)
        let other = try RawHTTP.request(
            port: test.server.port, from: "127.0.0.6", "POST", "/echo/x", body: Array(repeating: 65, count: 500))
        #expect(other.status == 200)
    }

    /// Requests of one share (an account, as the application names it from the head) hold at
    /// most its part of the budget whatever addresses they come from; another share is served.
    @Test func oneShareHoldsAtMostItsPartFromAnyAddress() async throws {
        let test = try TestServer(maxBodyBytes: 1_500, maxBufferedBodyBytes: 10_000) {
            $0.maxBufferedBodyBytesPerShare = 1_000
            $0.bodyGraceSeconds = 300
            $0.checkHead = { .read(maxBodyBytes: 1_500, share: $0.headers["x-share"]) }
        }
        defer { test.server.stop() }
        let slow = Loopback.connect(port: test.server.port, from: "127.0.0.5")
        defer { close(slow) }
        let head = Array("POST /echo/x HTTP/1.1\r\nHost: x\r\nX-Share: mallory\r\nContent-Length: 1500\r\n\r\n".utf8)
        Self.write(slow, head + Array(repeating: UInt8(ascii: "a"), count: 900))
        try await Self.eventually { test.server.bufferedBodies == 900 }
        #expect(test.server.bufferedBodies == 900)
        let sameShare = try RawHTTP.request(
            port: test.server.port, from: "127.0.0.7", "POST", "/echo/x", headers: ["X-Share": "mallory"],
            body: Array(repeating: 65, count: 500))
        #expect(sameShare.status == 503)
        let otherShare = try RawHTTP.request(
            port: test.server.port, from: "127.0.0.7", "POST", "/echo/x", headers: ["X-Share": "alice"],
            body: Array(repeating: 65, count: 500))
        #expect(otherShare.status == 200)
    }

    /// A request with both Content-Length and Transfer-Encoding (two framings: the stuff of
    /// request smuggling) is answered 400 and its connection closed, so the request pipelined
    /// behind it is never served (RFC 9112 §6.3).
    @Test func twoFramingsAreRefusedAndTheConnectionClosed() async throws {
        let test = try TestServer(maxBodyBytes: 10_000)
        defer { test.server.stop() }
        let fd = Loopback.connect(port: test.server.port)
        defer { close(fd) }
        var wait = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        Self.write(
            fd,
            Array(
                ("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }  // closed by the server (or the 10 s timeout: then it fails below)
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 400"), "\(text)")
        #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "more than one answer: \(text)")
        #expect(!text.contains("\r\n\r\nok"), "the pipelined request was served: \(text)")
        #expect(try await test.request("GET", "/healthz").status == 200)
    }

    /// A body slower than the minimum rate has its connection closed at its deadline, with what it
    /// held; a body that stops coming is closed after the grace period's idle timeout.
    @Test func aBodyMustArriveByItsDeadline() async throws {
        let test = try TestServer(maxBodyBytes: 10_000) {
            $0.bodyGraceSeconds = 1
            $0.minimumBodyBytesPerSecond = 100_000
        }
        defer { test.server.stop() }
        let drip = Loopback.connect(port: test.server.port)
        defer { close(drip) }
        var wait = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(drip, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let started = Date()
        Self.write(drip, Self.slowHead(10_000))
        // A byte every 300 ms: never idle for the grace period, but far below the rate.
        var closedAfter: Double?
        for _ in 0..<20 {
            Self.write(drip, [UInt8(ascii: "a")])
            var byte: UInt8 = 0
            var poll = pollfd(fd: drip, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&poll, 1, 300) > 0, recv(drip, &byte, 1, 0) <= 0 {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
        }
        let seconds = try #require(closedAfter, "the dripping body's connection stayed open for 6 s")
        #expect(seconds >= 0.9 && seconds < 3, "closed after \(seconds) s")
        #expect(test.server.bufferedBodies == 0)
        // Silent after its head: closed by the idle timeout of the grace period.
        let silent = Loopback.connect(port: test.server.port)
        defer { close(silent) }
        setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let quiet = Date()
        Self.write(silent, Self.slowHead(10_000))
        var byte: UInt8 = 0
        #expect(recv(silent, &byte, 1, 0) <= 0)
        #expect(Date().timeIntervalSince(quiet) < 4)
    }

    /// `checkHead` refuses a request from its head: the answer comes without any of the body kept.
    @Test func aHeadCanBeRefusedBeforeItsBodyIsRead() async throws {
        let test = try TestServer(maxBodyBytes: 100_000) {
            $0.checkHead = { head in
                head.headers["authorization"] == "yes"
                    ? .read(maxBodyBytes: 50_000) : .refuse(.error(status: 401, code: "unauthorized", message: "no"))
            }
        }
        defer { test.server.stop() }
        let refused = try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 60_000))
        #expect(refused.status == 401 && refused.body.contains("unauthorized"))
        let tooLarge = try await test.request(
            "POST", "/echo/x", body: Array(repeating: 65, count: 60_000), headers: ["Authorization": "yes"])
        #expect(tooLarge.status == 413 && tooLarge.body.contains("50000"))
        let taken = try await test.request(
            "POST", "/echo/x", body: Array(repeating: 65, count: 40_000), headers: ["Authorization": "yes"])
        #expect(taken.status == 200 && taken.body.count == 40_000 + "x:-:".count)
        #expect(test.server.bufferedBodies == 0)
    }

    @Test func bodiesOverTheCapAreRefusedWith413AndTheServerKeepsServing() async throws {
        let test = try TestServer(maxBodyBytes: 1_000)
        defer { test.server.stop() }
        let big = try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 5_000))
        #expect(big.status == 413 && big.body.contains("body_too_large"))
        #expect(try await test.request("POST", "/echo/x", body: Array(repeating: 65, count: 1_000)).status == 200)
        #expect(try await test.request("GET", "/healthz").status == 200)
    }

    @Test func largeAnswersAreGzippedForClientsThatAcceptIt() async throws {
        let test = try TestServer()
        defer { test.server.stop() }
        // URLSession asks for gzip and decodes it transparently.
        let answer = try await test.request("GET", "/big")
        #expect(answer.body.count == 50_000)
        // The completion record is written after the answer went out: give it a moment.
        var record = test.log.withLock { $0.last { $0.path == "/big" } }
        for _ in 0..<100 where record == nil {
            try await Task.sleep(for: .milliseconds(10))
            record = test.log.withLock { $0.last { $0.path == "/big" } }
        }
        #expect(
            record.map { $0.responseBytes < 1_000 } == true,
            "the body went out uncompressed: \(String(describing: record))")
        #expect(Gzip.decompress(Gzip.compress(Array("round trip".utf8))!) == Array("round trip".utf8))
    }

    @Test func aLongPollWaitsWithoutAThreadAndIsAnsweredFromAnother() async throws {
        let test = try TestServer()
        defer { test.server.stop() }
        async let first = test.request("GET", "/wait")
        async let second = test.request("GET", "/wait")
        // Wait until both are parked, while the server still answers other requests.
        for _ in 0..<200 where test.parked.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(test.server.suspendedCount == 2)
        #expect(try await test.request("GET", "/healthz").body == "ok")
        let woke = try await test.request("POST", "/wake", body: Array("news".utf8))
        #expect(woke.body == "2")
        #expect(try await first.body == "news")
        #expect(try await second.body == "news")
    }

    /// A long-poll whose client goes away is let go at once: its hang-up handler runs, the
    /// connection is completed (499 in the access log) and closed, and nothing of it stays
    /// suspended. Before, it stayed until its answer came (a wait of 30 s for a watcher): devices
    /// reconnecting piled up connections a server counts against its limit. Another parked
    /// request on the same server is untouched and still answered.
    @Test(arguments: [1, 2])
    func aParkedRequestWhoseClientHangsUpIsLetGo(threads: Int) async throws {
        let test = try TestServer(threads: threads)
        defer { test.server.stop() }
        async let stays = test.request("GET", "/wait")
        let leaving = (0..<3).map { _ in Loopback.connect(port: test.server.port) }
        for fd in leaving {
            let request = Array("GET /wait HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            #expect(send(fd, request, request.count, 0) == request.count)
        }
        for _ in 0..<300 where test.server.suspendedCount < 4 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(test.server.suspendedCount == 4)
        #expect(test.server.openConnections == 4)
        for fd in leaving { close(fd) }
        for _ in 0..<300 where test.server.suspendedCount > 1 || test.server.openConnections > 1 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(test.server.suspendedCount == 1)
        #expect(test.server.openConnections == 1)
        #expect(test.hungUp.withLock { $0 } == 3)
        let records = test.log.withLock { $0.filter { $0.path == "/wait" } }
        #expect(records.count == 3 && records.allSatisfy { $0.status == 499 }, "\(records)")
        // The one that stayed is still parked and answered.
        #expect(try await test.request("POST", "/wake", body: Array("news".utf8)).body == "4")
        #expect(try await stays.body == "news")
        #expect(test.hungUp.withLock { $0 } == 3)
    }

    /// Hundreds of keep-alive long-polls answered at once, each asking again at once on its
    /// connection, as watchers do after a push: every answer arrives (within 10 s; a lost
    /// wake-up waits for the loop's idle timeout, a minute here) and every new request is read
    /// and parked. On libmicrohttpd's own thread pool a wait that returned exactly 128 ready
    /// connections left them unread until some later event (30 s in the fan-out benchmark, 90 s
    /// here).
    @Test(arguments: [1, 2])
    func longPollsAskingAgainTogetherAreAllRead(threads: Int) throws {
        let test = try TestServer(threads: threads)
        defer { test.server.stop() }
        let watchers = 300
        let connections = (0..<watchers).map { _ in Loopback.connect(port: test.server.port) }
        defer { connections.forEach { close($0) } }
        #expect(connections.allSatisfy { $0 >= 0 })
        var wait = timeval(tv_sec: 10, tv_usec: 0)
        for fd in connections { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size)) }
        let ask = Array("GET /wait HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        func parkAll() throws {
            for fd in connections { #expect(send(fd, ask, ask.count, Int32(MSG_NOSIGNAL)) == ask.count) }
            let deadline = Date().addingTimeInterval(5)
            while test.parked.withLock({ $0.count }) < watchers && Date() < deadline { usleep(5_000) }
            let parked = test.parked.withLock { $0.count }
            try #require(parked == watchers, "\(watchers - parked) of \(watchers) requests unread after 5 s")
        }
        try parkAll()
        for round in 0..<24 {
            let news = Array("round \(round)".utf8)
            #expect(
                try RawHTTP.request(port: test.server.port, "POST", "/wake", body: news).body
                    == Array("\(watchers)".utf8))
            for fd in connections {
                #expect(try Self.readAnswer(fd).body == news)
            }
            try parkAll()
        }
    }

    /// The connection limit holds over every HTTP thread's daemon (each counts only its own): with
    /// four open, a fifth is closed unanswered, and once one of the four goes another is served.
    @Test func theConnectionLimitCountsEveryThread() throws {
        let test = try TestServer(threads: 3, connectionLimit: 4)
        defer { test.server.stop() }
        let ask = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        func served(_ fd: Int32) -> Bool {
            var wait = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            guard send(fd, ask, ask.count, Int32(MSG_NOSIGNAL)) == ask.count else { return false }
            return (try? Self.readAnswer(fd).body) == Array("ok".utf8)
        }
        let held = (0..<4).map { _ in Loopback.connect(port: test.server.port) }
        defer { held.dropFirst().forEach { close($0) } }
        #expect(held.allSatisfy { served($0) })
        #expect(test.server.openConnections == 4)
        let fifth = Loopback.connect(port: test.server.port)
        #expect(!served(fifth), "a fifth connection was served past the limit of 4")
        close(fifth)
        close(held[0])
        let deadline = Date().addingTimeInterval(5)
        while test.server.openConnections > 3 && Date() < deadline { usleep(5_000) }
        let another = Loopback.connect(port: test.server.port)
        defer { close(another) }
        #expect(served(another))
        #expect(held.dropFirst().allSatisfy { served($0) })
    }

    /// One answer from a keep-alive connection: its head and `Content-Length` bytes of body.
    static func readAnswer(_ fd: Int32) throws -> (head: String, body: [UInt8]) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let separator = Array("\r\n\r\n".utf8)
        while received.count < 1 << 20 {
            if let end = (0..<max(0, received.count - 3)).first(where: { Array(received[$0..<($0 + 4)]) == separator })
            {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count >= end + 4 + length { return (head, Array(received[(end + 4)..<(end + 4 + length)])) }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw RawHTTP.Failure(description: "the connection ended or timed out mid-answer") }
            received += buffer[0..<n]
        }
        throw RawHTTP.Failure(description: "an answer over 1 MiB")
    }

    @Test func stoppingAnswersSuspendedRequests() async throws {
        let test = try TestServer()
        async let waiting = test.request("GET", "/wait")
        for _ in 0..<200 where test.parked.withLock({ $0.count }) < 1 { try await Task.sleep(for: .milliseconds(10)) }
        test.server.stop()
        let answer = try await waiting
        #expect(answer.status == 503 && answer.body.contains("shutting_down"))
    }

    @Test func listeningOnABadAddressFailsClearly() {
        let server = HTTPListener(configuration: .init(host: "not-an-ip", port: 0)) { _, r in
            r.respond(HTTPResponse(status: 200))
        }
        #expect(throws: HTTPListener.StartError.self) { try server.start() }
    }
}

/// Counts the process's descriptors, so it runs alone: Scripts/test.sh runs it in the pass of
/// suites that run one at a time, where no other suite starts servers meanwhile.
@Suite(.serialized)
struct DescriptorTests {
    /// Starting and stopping a listener, with a keep-alive connection left open, leaves no
    /// descriptor behind: each thread's daemon has an epoll set and an eventfd of its own, so ten
    /// listeners of three threads that leaked either would leave 30 more.
    @Test func stoppingReleasesEveryDescriptor() throws {
        func openDescriptors() -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.filter { name in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? ""
                return target == "anon_inode:[eventfd]" || target == "anon_inode:[eventpoll]"
            }.count
        }
        let before = openDescriptors()
        for _ in 0..<10 {
            let test = try TestServer(threads: 3)
            let fd = Loopback.connect(port: test.server.port)
            let ask = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            #expect(send(fd, ask, ask.count, Int32(MSG_NOSIGNAL)) == ask.count)
            #expect(try HTTPServerTests.readAnswer(fd).body == Array("ok".utf8))
            test.server.stop()
            // The server closed its side: the client reads the end of the stream.
            var byte: UInt8 = 0
            #expect(recv(fd, &byte, 1, 0) == 0)
            close(fd)
        }
        let leaked = openDescriptors() - before
        #expect(leaked < 10, "\(leaked) more epoll sets and eventfds after ten listeners stopped")
    }
}
