import BasketCore
import Foundation

/// `basket-bench http`: small requests per second, measured by `wrk` (Debian's) against the
/// release basket-server and against nginx (Debian's, two workers) answering the same bytes from
/// its configuration, in alternating runs of the same minutes. Both write an access log to a file.
/// Routes: `GET /healthz`, an authenticated `GET /v1/lists`, and an authenticated empty pull.
struct HTTPBenchmark {
    var runs = 3
    var seconds = 5
    var connections = 32

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--runs": runs = n
            case "--seconds": seconds = n
            case "--connections": connections = n
            default: return false
            }
            return true
        }
    }

    struct Route {
        var name: String
        var path: String
        var authenticated: Bool
    }

    func run() throws {
        let wrk = try Executable.find("wrk", package: "wrk")
        let nginxPath = try Executable.find("nginx", package: "nginx-light")
        raiseOpenFileLimit()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("basket-bench-http-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let server = try ServerUnderTest(
            data: directory.appendingPathComponent("data").path,
            accessLog: directory.appendingPathComponent("access.log").path)
        defer { server.stop() }
        let setup = try RawConnection(port: server.port)
        let session = try BenchSession(setup)
        let list = try session.newList()
        var pushes = ServerBenchmark()
        pushes.batchSize = 10
        let push = try RawConnection(port: server.port).call(
            "POST", "/v1/lists/\(list)/ops", token: session.token, body: pushes.pushBody(list, batch: 0))
        guard push.status == 200, let cursor = integerField("cursor", in: push.body) else {
            throw BenchError("push answered \(push.status): \(String(decoding: push.body, as: UTF8.self))")
        }
        let routes = [
            Route(name: "GET /healthz", path: "/healthz", authenticated: false),
            Route(name: "GET /v1/lists (authenticated)", path: "/v1/lists", authenticated: true),
            Route(
                name: "empty pull (authenticated)", path: "/v1/lists/\(list)/ops?after=\(cursor)", authenticated: true),
        ]
        // nginx answers each route with the bytes basket-server gave.
        var bodies: [String] = []
        for route in routes {
            let answer = try RawConnection(port: server.port).call(
                "GET", route.path, token: route.authenticated ? session.token : nil)
            guard answer.status == 200 else { throw BenchError("\(route.name) answered \(answer.status)") }
            bodies.append(String(decoding: answer.body, as: UTF8.self))
        }
        let nginx = try NginxUnderTest(
            executable: nginxPath, directory: directory.appendingPathComponent("nginx"),
            answers: zip(routes, bodies).map { (path: String($0.path.split(separator: "?")[0]), body: $1) })
        defer { nginx.stop() }
        for (route, body) in zip(routes, bodies) {
            let answer = try RawConnection(port: nginx.port).call(
                "GET", route.path, token: route.authenticated ? session.token : nil)
            guard answer.status == 200, answer.body == Array(body.utf8) else {
                throw BenchError(
                    "nginx answered \(route.name) with other bytes: \(String(decoding: answer.body, as: UTF8.self))")
            }
        }

        print(
            "HTTP benchmark: wrk -t2 -c\(connections) -d\(seconds)s, \(runs) alternating runs; basket-server (release, "
                + "\(server.threads) threads, access log to a file) pid \(server.pid), nginx (2 workers, access log to a file)"
        )
        var serverRates = [[Double]](repeating: [], count: routes.count)
        var nginxRates = [[Double]](repeating: [], count: routes.count)
        for _ in 0..<runs {
            for (index, route) in routes.enumerated() {
                let header = route.authenticated ? ["-H", "Authorization: Bearer \(session.token)"] : []
                nginxRates[index].append(
                    try Self.wrk(wrk, url: "http://127.0.0.1:\(nginx.port)\(route.path)", header, connections, seconds))
                serverRates[index].append(
                    try Self.wrk(wrk, url: "http://127.0.0.1:\(server.port)\(route.path)", header, connections, seconds)
                )
            }
        }
        var table = Table(
            title: "HTTP: small requests, basket-server against nginx serving the same bytes",
            header: ["route", "nginx req/s (baseline)", "basket-server req/s", "vs nginx"])
        for (index, route) in routes.enumerated() {
            let ratios = zip(serverRates[index], nginxRates[index]).map { $0 / $1 }
            table.add(
                route.name, Self.range(nginxRates[index]), Self.range(serverRates[index]),
                String(format: "%.2f–%.2fx", ratios.min() ?? 0, ratios.max() ?? 0))
        }
        print(table.render())
    }

    static func range(_ values: [Double]) -> String {
        let low = values.min() ?? 0
        let high = values.max() ?? 0
        return values.count > 1 ? "\(formatRate(low))–\(formatRate(high))" : formatRate(low)
    }

    /// One wrk run; its requests per second. Any error or non-2xx answer fails the benchmark.
    static func wrk(_ wrk: String, url: String, _ header: [String], _ connections: Int, _ seconds: Int) throws -> Double
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = ["-t2", "-c\(connections)", "-d\(seconds)s"] + header + [url]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("wrk failed: \(output)") }
        if output.contains("Non-2xx") || output.contains("Socket errors") {
            throw BenchError("wrk saw errors against \(url):\n\(output)")
        }
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
        else { throw BenchError("no rate in wrk's output:\n\(output)") }
        return rate
    }
}

/// Finds a Debian tool by name, in PATH or /usr/sbin.
enum Executable {
    static func find(_ name: String, package: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories: [String] = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        for directory in directories {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError("\(name) is not installed (apt-get install \(package); Scripts/bench.sh does)")
    }
}

/// nginx in the foreground on a free loopback port, answering fixed bodies from its configuration.
final class NginxUnderTest {
    let process = Process()
    let port: Int

    init(executable: String, directory: URL, answers: [(path: String, body: String)]) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        let d = directory.path
        var locations = ""
        for answer in answers {
            guard !answer.body.contains("$") else { throw BenchError("a body nginx cannot return: \(answer.body)") }
            // In a quoted nginx string, a backslash escapes the next character.
            let quoted = answer.body.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "'", with: "\\'")
            locations +=
                "        location = \(answer.path) { default_type application/json; return 200 '\(quoted)'; }\n"
        }
        let configuration = """
            worker_processes 2;
            daemon off;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log;
            events { worker_connections 4096; }
            http {
                access_log \(d)/access.log;
                client_body_temp_path \(d)/body; proxy_temp_path \(d)/proxy; fastcgi_temp_path \(d)/fastcgi;
                uwsgi_temp_path \(d)/uwsgi; scgi_temp_path \(d)/scgi;
                keepalive_requests 1000000;
                server {
                    listen 127.0.0.1:\(port);
            \(locations)
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", file.path, "-p", d]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let connection = try? RawConnection(port: port), (try? connection.call("GET", answers[0].path)) != nil {
                return
            }
            usleep(20_000)
        }
        stop()
        throw BenchError(
            "nginx did not start: \((try? String(contentsOfFile: "\(d)/error.log", encoding: .utf8)) ?? "")")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// A loopback port free now (the kernel's pick for port 0).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw BenchError("no free port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}
