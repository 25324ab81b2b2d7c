import Foundation

/// A minimal HTTP/1.1 client over a blocking loopback socket, for load generation: URLSession's
/// own cost per request would hide the server's.
final class RawConnection {
    let fd: Int32
    /// The server's port.
    let port: Int
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from the loopback address `source` when given (127.0.0.x:
    /// each source address has its own ephemeral ports, so 100,000 connections fit).
    init(port: Int, source: String? = nil) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        if let source {
            // The port is chosen at connect (by the whole 4-tuple), not at bind: binding port 0
            // on a busy address searches the bound ports one by one.
            var one: Int32 = 1
            setsockopt(
                fd, Int32(IPPROTO_IP), 24 /* IP_BIND_ADDRESS_NO_PORT */, &one, socklen_t(MemoryLayout<Int32>.size))
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let message = String(cString: strerror(errno))
                close(fd)
                throw BenchError("bind \(source): \(message)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BenchError("connect: \(message)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    static func request(_ method: String, _ path: String, token: String? = nil, body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if !body.isEmpty || method == "POST" {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    /// Reads one whole response (blocking).
    func readResponse() throws -> (status: Int, body: [UInt8]) {
        while true {
            if let response = Self.parse(&buffer) { return response }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw BenchError("the server closed the connection") }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Reads what is available without blocking; returns a response once one is complete.
    func readAvailable() throws -> (status: Int, body: [UInt8])? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n == 0 { throw BenchError("the server closed the connection") }
        if n > 0 { buffer.append(contentsOf: chunk[0..<n]) }
        return Self.parse(&buffer)
    }

    func call(_ method: String, _ path: String, token: String? = nil, body: [UInt8] = []) throws -> (
        status: Int, body: [UInt8]
    ) {
        try send(Self.request(method, path, token: token, body: body))
        return try readResponse()
    }

    /// Takes one complete response off the front of `buffer`.
    static func parse(_ buffer: inout [UInt8]) -> (status: Int, body: [UInt8])? {
        guard buffer.count >= 16 else { return nil }
        var headerEnd = -1
        var i = 3
        while i < buffer.count {
            if buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
                headerEnd = i + 1
                break
            }
            i += 1
        }
        guard headerEnd > 0 else { return nil }
        let head = String(decoding: buffer[0..<headerEnd], as: UTF8.self)
        let status = Int(head.split(separator: " ", maxSplits: 2)[1]) ?? 0
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        guard buffer.count >= headerEnd + length else { return nil }
        let body = Array(buffer[headerEnd..<(headerEnd + length)])
        buffer.removeFirst(headerEnd + length)
        return (status, body)
    }
}

func jsonObject(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}

/// Raises this process's open-file limit to its hard limit (thousands of sockets).
func raiseOpenFileLimit() { _ = raiseOpenFileLimit(to: Int(Int32.max)) }

/// Raises this process's open-file limit (soft, and hard where allowed: root with
/// CAP_SYS_RESOURCE) to `count`; children inherit it. Returns the soft limit now in force.
func raiseOpenFileLimit(to count: Int) -> Int? {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    if limit.rlim_cur >= rlim_t(count) { return Int(limit.rlim_cur) }
    var wanted = limit
    wanted.rlim_cur = rlim_t(count)
    wanted.rlim_max = max(limit.rlim_max, rlim_t(count))
    if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &wanted) == 0 { return count }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_max)
}

/// Resident memory of a process, in bytes.
func residentBytes(pid: Int32) -> Int { procBytes(pid: pid, file: "status", field: "VmRSS:") }

/// A process's proportional set size in bytes: its private pages and its share of shared ones
/// (the resident size counts shared memory once in every process that maps it).
func proportionalBytes(pid: Int32) -> Int { procBytes(pid: pid, file: "smaps_rollup", field: "Pss:") }

/// A "FIELD: N kB" line of /proc/PID/FILE, in bytes (0 when absent).
func procBytes(pid: Int32, file: String, field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field) {
        let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
        return kb * 1024
    }
    return 0
}

/// CPU seconds (user + system) this process used so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}
