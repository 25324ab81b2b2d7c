import Foundation
import Spawn
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP load balancer on 127.0.0.1 for tests: each new connection goes to the next backend
/// port in turn (skipping ones that refuse, as nginx's upstream does), and bytes are relayed
/// both ways until either side closes. One thread, poll(2), non-blocking sockets.
public final class RoundRobinProxy: @unchecked Sendable {
    // `@unchecked Sendable`: the relay state (`next`) is the proxy thread's own; the rest is
    // immutable or in `state`.
    public private(set) var port: Int = 0
    private let listener: Int32
    private struct State {
        var backends: [Int]
        var stopping = false
    }
    private let state: Mutex<State>
    private let finished = DispatchSemaphore(value: 0)
    private var next = 0

    /// Listens on `port` (0 picks a free one) and relays to `backends`.
    public init(backends: [Int], port: Int = 0) throws {
        state = Mutex(State(backends: backends))
        signal(SIGPIPE, SIG_IGN)  // as Subprocess does; the relay's sends also pass MSG_NOSIGNAL
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Loopback.address(port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 512) == 0 else {
            close(listener)
            throw ProxyError(message: "cannot listen on 127.0.0.1:\(port): errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        let thread = Thread { [self] in
            relay()
            finished.signal()
        }
        thread.name = "round-robin-proxy"
        thread.start()
    }

    /// Changes where new connections go (after a backend restarted on another port).
    public func setBackends(_ ports: [Int]) { state.withLock { $0.backends = ports } }

    /// Stops accepting and closes every relayed connection.
    public func stop() {
        let first: Bool = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { finished.wait() }
    }

    deinit { stop() }

    /// A connection to the next backend that accepts one, or -1.
    private func connectUpstream() -> Int32 {
        let ports = state.withLock { $0.backends }
        for _ in 0..<ports.count {
            let port = ports[next % ports.count]
            next += 1
            let fd = Loopback.connect(port: port)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                return fd
            }
        }
        return -1
    }

    /// One side of a relayed connection: its socket, bytes waiting to be written to it, and
    /// whether its peer finished sending.
    private final class Side {
        let fd: Int32
        var pending: [UInt8] = []
        var readEnded = false
        var writeShut = false
        init(_ fd: Int32) { self.fd = fd }
    }

    private func relay() {
        var pairs: [(Side, Side)] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        defer {
            for (a, b) in pairs {
                close(a.fd)
                close(b.fd)
            }
            close(listener)
        }
        while !state.withLock({ $0.stopping }) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for (a, b) in pairs {
                for (side, other) in [(a, b), (b, a)] {
                    var events: Int16 = 0
                    if !side.readEnded && other.pending.count < 1 << 20 { events |= Int16(POLLIN) }
                    if !side.pending.isEmpty { events |= Int16(POLLOUT) }
                    fds.append(pollfd(fd: side.fd, events: events, revents: 0))
                }
            }
            if poll(&fds, nfds_t(fds.count), 100) <= 0 { continue }
            var broken = Set<Int>()
            for (index, (a, b)) in pairs.enumerated() {
                for (offset, (side, other)) in [(a, b), (b, a)].enumerated() {
                    let revents = fds[1 + index * 2 + offset].revents
                    if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !side.readEnded {
                        let count = read(side.fd, &buffer, buffer.count)
                        if count > 0 {
                            other.pending.append(contentsOf: buffer[0..<count])
                        } else if count == 0 {
                            side.readEnded = true
                        } else if errno != EAGAIN && errno != EINTR {
                            broken.insert(index)
                        }
                    }
                    if revents & Int16(POLLOUT) != 0 && !side.pending.isEmpty {
                        // send with MSG_NOSIGNAL: a peer that closed must not SIGPIPE the test process.
                        let count = side.pending.withUnsafeBytes {
                            send(side.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                        }
                        if count > 0 {
                            side.pending.removeFirst(count)
                        } else if errno != EAGAIN && errno != EINTR {
                            broken.insert(index)
                        }
                    }
                }
                // A side whose peer finished and whose bytes are all written is told so.
                for (side, other) in [(a, b), (b, a)] where other.readEnded && side.pending.isEmpty && !side.writeShut {
                    shutdown(side.fd, Int32(SHUT_WR))
                    side.writeShut = true
                }
                if a.writeShut && b.writeShut { broken.insert(index) }
            }
            for index in broken.sorted(by: >) {
                close(pairs[index].0.fd)
                close(pairs[index].1.fd)
                pairs.remove(at: index)
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                while true {
                    let client = accept(listener, nil, nil)
                    if client < 0 { break }
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    let upstream = connectUpstream()
                    if upstream < 0 {
                        close(client)
                        continue
                    }
                    pairs.append((Side(client), Side(upstream)))
                }
            }
        }
    }

    public struct ProxyError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}

/// Sockets on 127.0.0.1, for tests that speak TCP themselves.
public enum Loopback {
    static func address(_ port: Int) -> sockaddr_in {
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
