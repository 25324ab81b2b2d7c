import Foundation
import Synchronization
import TestServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Malformed requests over raw sockets: each gets the documented 4xx or a closed connection,
/// never a 5xx, and the server keeps serving everyone else.
struct MalformedRequestTests {
    let root = TemporaryDirectory("malformed")

    /// What came back for `bytes` on a new connection: the status (nil when the server closed the
    /// connection without answering).
    static func exchange(
        _ port: Int, _ bytes: [UInt8], pause: useconds_t = 0, closeWriting: Bool = true,
        progress: (Int) -> Void = { _ in }
    ) -> Int? {
        let fd = Loopback.connect(port: port)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let chunk = pause > 0 ? 1 : bytes.count - offset
            let sent = bytes[offset..<(offset + chunk)].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { break }  // the server closed the connection
            offset += sent
            progress(offset)
            if pause > 0 { usleep(pause) }
        }
        if closeWriting { shutdown(fd, Int32(SHUT_WR)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[0..<count]
            if answer.count > 12 && answer.contains(UInt8(ascii: "\n")) { break }
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard text.hasPrefix("HTTP/1."), text.count >= 12 else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }

    static func request(_ head: String, body: [UInt8] = []) -> [UInt8] { Array(head.utf8) + body }
    func request(_ head: String, body: [UInt8] = []) -> [UInt8] { Self.request(head, body: body) }

    @Test func malformedRequestsGetTheirDocumentedAnswerAndTheServerKeepsServing() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let port = server.port
        let signup = try Executables.runShell(
            "curl -s -X POST -H 'Content-Type: application/json' -d '{\"name\":\"alice\",\"password\":\"alice-password\"}' \(server.url)/v1/accounts; "
                + "curl -s -X POST -H 'Content-Type: application/json' -d '{\"name\":\"alice\",\"password\":\"alice-password\"}' \(server.url)/v1/tokens"
        )
        let token = try #require(signup.stdout.split(separator: "\"token\":\"").last?.split(separator: "\"").first)
        let auth = "Authorization: Bearer \(token)\r\n"
        let list = "0123456789abcdef0123456789abcdef"
        // The list exists and Alice owns it: the pull cases below reach their parameter checks (not a 404).
        let created = try Executables.runShell(
            "curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer \(token)' -H 'Content-Type: application/json' -d '{\"id\":\"\(list)\"}' \(server.url)/v1/lists"
        )
        try #require(created.stdout == "201", "creating the list answered \(created.stdout)")
        let deep = Array(
            ("{\"name\":" + String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000) + "}").utf8)
        let corpus: [(String, [UInt8])] = [
            (
                "a truncated body",
                request(
                    "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
                )
            ),
            (
                "a header of 100 KB",
                request("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n")
            ),
            (
                "2,000 headers",
                request(
                    "GET /healthz HTTP/1.1\r\nHost: x\r\n" + (0..<2_000).map { "X-H\($0): v\r\n" }.joined() + "\r\n")
            ),
            ("a garbage request line", request("GARBAGE\r\n\r\n")),
            ("an unknown method", request("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n")),
            (
                "invalid UTF-8 in the body",
                request(
                    "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n",
                    body: Array("{\"name\":\"a\u{00}".utf8) + [0xFF, 0xFE]
                        + Array("\",\"password\":\"12345678\"}".utf8).prefix(19))
            ),
            (
                "invalid UTF-8 in the path",
                request("GET /v1/lists/\u{FFFD}", body: []) + [0xC3, 0x28]
                    + Array("/ops HTTP/1.1\r\nHost: x\r\n\(auth)\r\n".utf8)
            ),
            (
                "JSON nested 50,000 deep",
                request(
                    "POST /v1/lists HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(deep.count)\r\n\r\n",
                    body: deep)
            ),
            (
                "a signup of 5 KB",
                request(
                    "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(deep.count)\r\n\r\n",
                    body: deep)
            ),
            ("a negative cursor", request("GET /v1/lists/\(list)/ops?after=-1 HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")),
            (
                "a huge cursor",
                request("GET /v1/lists/\(list)/ops?after=99999999999999999999999999 HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            ("a negative limit", request("GET /v1/lists/\(list)/ops?limit=-5 HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")),
            ("a wait of 1e99", request("GET /v1/lists/\(list)/ops?wait=1e99 HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")),
            (
                "a huge Content-Length",
                request("POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n{}")
            ),
            (
                "a negative Content-Length",
                request("POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}")
            ),
            (
                "a text/plain body",
                request(
                    "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 39\r\n\r\n{\"name\":\"bob\",\"password\":\"bob-password\"}"
                )
            ),
            (
                "a form body",
                request(
                    "POST /v1/lists/\(list)/ops HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nops=abc"
                )
            ),
            (
                "path traversal in a list id",
                request("GET /v1/lists/../../etc/passwd/ops HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            (
                "encoded path traversal",
                request("GET /v1/lists/%2e%2e%2f%2e%2e%2fetc/ops HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            (
                "traversal in an invite code",
                request("POST /v1/invites/..%2F..%2Fadmin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 0\r\n\r\n")
            ),
            ("a NUL in the path", request("GET /v1/lists/\(list)%00/ops HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")),
            // Decoded, the NUL would cut the path to DELETE /v1/lists/{id}: the owner's list would go.
            (
                "a NUL cutting a DELETE short",
                request("DELETE /v1/lists/\(list)%00/invites/x HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            // The routes of tokens, passwords and invites.
            (
                "an invite code that is not a string",
                request(
                    "POST /v1/invites HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"code\":[1]}"
                )
            ),
            (
                "an invite code of 100 bytes",
                request(
                    "POST /v1/invites HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: 111\r\n\r\n{\"code\":\"\(String(repeating: "A", count: 100))\"}"
                )
            ),
            (
                "uses as a string",
                request(
                    "POST /v1/lists/\(list)/invites HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"uses\":\"9\"}"
                )
            ),
            (
                "uses of 1e300",
                request(
                    "POST /v1/lists/\(list)/invites HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"uses\":1e300}"
                )
            ),
            (
                "traversal in an invite id",
                request("DELETE /v1/lists/\(list)/invites/..%2F..%2Ftokens HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            (
                "a device id of 10 KB",
                request("DELETE /v1/tokens/\(String(repeating: "f", count: 10_000)) HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
            ),
            (
                "a device name with an escape",
                request(
                    "POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 65\r\n\r\n{\"name\":\"alice\",\"password\":\"alice-password\",\"device\":\"\\u001b[2J\"}"
                )
            ),
            (
                "a new password nested 50,000 deep",
                request(
                    "POST /v1/account/password HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(deep.count)\r\n\r\n",
                    body: deep)
            ),
            (
                "a token of 10 KB",
                request(
                    "GET /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(String(repeating: "t", count: 10_000))\r\n\r\n"
                )
            ),
            (
                "a bad chunk size",
                request(
                    "POST /v1/accounts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n"
                )
            ),
            (
                "a body over the cap, chunked",
                request(
                    "POST /v1/lists/\(list)/ops HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                    + Array(
                        (0..<80).map { _ in "10000\r\n" + String(repeating: "a", count: 65_536) + "\r\n" }.joined().utf8
                    ) + Array("0\r\n\r\n".utf8)
            ),
        ]
        // What each gets (nil: the connection is closed without an answer). docs/reliability.md's
        // list of malformed requests holds these; a change here is a change there.
        let expected: [String: Int?] = [
            "a truncated body": nil, "a header of 100 KB": 431, "2,000 headers": 431, "a garbage request line": nil,
            "an unknown method": 405, "invalid UTF-8 in the body": 400, "invalid UTF-8 in the path": 404,
            "JSON nested 50,000 deep": 400, "a signup of 5 KB": 413, "a negative cursor": 400, "a huge cursor": 400,
            "a negative limit": 400,
            "a wait of 1e99": 400, "a huge Content-Length": 413, "a negative Content-Length": 400,
            "a text/plain body": 415, "a form body": 415, "path traversal in a list id": 404,
            "encoded path traversal": 404, "traversal in an invite code": 404, "a NUL in the path": 404,
            "a NUL cutting a DELETE short": 404,
            "an invite code that is not a string": 400, "an invite code of 100 bytes": 400, "uses as a string": 400,
            "uses of 1e300": 400, "traversal in an invite id": 404, "a device id of 10 KB": 404,
            "a device name with an escape": 400, "a new password nested 50,000 deep": 400, "a token of 10 KB": 401,
            "a bad chunk size": 400, "a body over the cap, chunked": 413,
        ]
        #expect(Set(expected.keys) == Set(corpus.map(\.0)), "every case has its expected answer")
        var outcomes: [String] = []
        for (name, bytes) in corpus {
            let status = Self.exchange(port, bytes)
            outcomes.append("\(name): \(status.map(String.init) ?? "closed")")
            #expect(status == expected[name] ?? -1, "\(name) got \(status.map(String.init) ?? "closed")")
            #expect(
                Self.exchange(port, Self.request("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")) == 200, "after \(name)")
        }
        print("malformed requests: " + outcomes.joined(separator: "; "))
        // Nothing above changed Alice's list: it is still there for her.
        #expect(
            Self.exchange(port, Self.request("GET /v1/lists/\(list)/ops HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")) == 200)

        // A slow sender (a byte every 50 ms, for about 5 s) does not hold up anyone else: 20
        // requests meanwhile take about what 20 took before it started on this machine today,
        // nowhere near the 5 s they would wait behind it.
        func twentyRequests() -> TimeInterval {
            let started = Date()
            for _ in 0..<20 {
                #expect(Self.exchange(port, Self.request("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")) == 200)
            }
            return Date().timeIntervalSince(started)
        }
        let calm = twentyRequests()
        let slowSent = Mutex(0)
        let slowRequest = Self.request(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "s", count: 60))\r\n\r\n")
        let slow = Thread {
            _ = Self.exchange(port, slowRequest, pause: 50_000) { sent in slowSent.withLock { $0 = sent } }
        }
        slow.start()
        for _ in 0..<200 where slowSent.withLock({ $0 }) < 5 { usleep(10_000) }  // it has begun
        let meanwhile = twentyRequests()
        #expect(slowSent.withLock { $0 } < slowRequest.count, "the slow request ended before the others ran")
        let bound = max(1.0, 10 * calm)
        #expect(meanwhile < bound, "20 requests took \(meanwhile) s behind a slow sender (\(calm) s before it)")
        #expect(server.isRunning)
    }
}
