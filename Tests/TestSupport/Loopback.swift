// Raw TCP on loopback addresses, for tests that speak HTTP themselves.
import Foundation

#if canImport(Glibc)
    public import Glibc
#endif

/// Sockets on 127.0.0.1, for tests that speak TCP themselves.
public enum Loopback {
    /// The IPv4 socket address of 127.0.0.1:`port`.
    public static func address(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// A blocking, close-on-exec TCP connection to 127.0.0.1:`port` from the loopback address
    /// `source` (127.0.0.x: one machine, many client addresses), or -1.
    public static func connect(port: Int, from source: String = "127.0.0.1") -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        if source != "127.0.0.1" {
            var local = address(0)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(fd)
                return -1
            }
        }
        var address = address(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return movedUp(fd)
    }

    /// `fd` moved to a number of 512 or more when the limit allows (else `fd` itself). The kernel
    /// hands out the lowest free number, so numbers this process freed a moment ago are low ones:
    /// a stray second close of one (URLSession's sockets on Linux have closed numbers they no
    /// longer owned, swift-corelibs-foundation #3286) must not close a connection a test holds
    /// and counts on, as it once seemed to in the heavy pass.
    static func movedUp(_ fd: Int32) -> Int32 {
        let high = fcntl(fd, F_DUPFD_CLOEXEC, 512)
        guard high >= 0 else { return fd }
        close(fd)
        return high
    }

    /// The port `fd` is connected to, or nil when it is not a connected IPv4 socket (closed, or
    /// the number now names something else).
    public static func peerPort(_ fd: Int32) -> Int? {
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0, peer.sin_family == sa_family_t(AF_INET) else { return nil }
        return Int(UInt16(bigEndian: peer.sin_port))
    }
}

/// One HTTP/1.1 exchange over its own connection (`Connection: close`), from a chosen loopback
/// address: what URLSession cannot do (it always comes from 127.0.0.1).
public enum RawHTTP {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
        public var error: String? { json["error"] as? String }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Sends the request and reads the whole answer (at most `timeout` seconds, 16 MiB).
    public static func request(
        port: Int, from source: String = "127.0.0.1", _ method: String, _ path: String,
        headers: [String: String] = [:], json: [String: Any]? = nil, body raw: [UInt8]? = nil, timeout: Double = 30
    ) throws -> Answer {
        let fd = Loopback.connect(port: port, from: source)
        guard fd >= 0 else { throw Failure(description: "cannot connect from \(source) to port \(port)") }
        defer { close(fd) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? raw ?? []
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if json != nil { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < 16 << 20 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, received.count - 3)).first(where: { Array(received[$0..<($0 + 4)]) == separator })
        else { throw Failure(description: "no HTTP answer (\(received.count) bytes)") }
        let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line '\(lines[0])'")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: fields, body: Array(received[(end + 4)...]))
    }
}
