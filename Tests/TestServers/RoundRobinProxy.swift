import Foundation
import Spawn
import Synchronization
import TestSupport

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
