public import BasketCore
public import Foundation
import Synchronization

/// A temporary directory, removed when the value is deinitialised.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String = "basket-test") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public var path: String { url.path }

    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The tests' deterministic random generator: the same seed gives the same test case.
public typealias SeededGenerator = SplitMix64

/// A wall clock that tests move by hand.
public final class ManualClock: Sendable {
    private let now: Mutex<UInt64>

    public init(milliseconds: UInt64 = 1_764_400_000_000) { now = Mutex(milliseconds) }

    public var milliseconds: UInt64 { now.withLock { $0 } }

    public func advance(by delta: UInt64) { now.withLock { $0 += delta } }

    public func set(_ value: UInt64) { now.withLock { $0 = value } }
}

/// The result of a finished process.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutBytes: Data
}

/// Runs the package's executables as real processes.
public enum Executables {
    /// The directory holding the built products (`.build/debug` or `.build/release`).
    public static var productsDirectory: URL {
        // The test bundle lives in the products directory.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String {
        productsDirectory.appendingPathComponent(name).path
    }

    /// Runs `name` with `arguments` to completion, feeding `stdin`.
    @discardableResult
    public static func run(
        _ name: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double = 180
    ) throws -> ProcessResult {
        try run(executable: path(name), arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// Runs the program at `executable` to completion, feeding `stdin`; one that runs longer than
    /// `timeout` seconds is killed and the run throws.
    public static func run(
        executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double = 180
    ) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        let process = try Subprocess(executable, arguments, environment: env, stdin: stdin ?? Data())
        let termination = try process.finish(timeout: timeout)
        return ProcessResult(
            status: termination.status, stdout: process.stdout, stderr: process.stderr,
            stdoutBytes: process.stdoutData)
    }
}

extension Executables {
    /// Runs a `/bin/sh -c` script (for what Foundation's Process cannot pass, like invalid UTF-8).
    public static func runShell(_ script: String, environment: [String: String] = [:]) throws -> ProcessResult {
        try run(executable: "/bin/sh", ["-c", script], environment: environment)
    }
}

/// A value behind a lock, shareable between threads.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try mutex.withLock { try body(&$0) }
    }
}

/// A real `basket-server` process on 127.0.0.1.
public final class ServerProcess: @unchecked Sendable {
    // `@unchecked Sendable`: `process` and `port` change only in start/stop, called by one test.
    public let dataDirectory: String
    public private(set) var port: Int
    private var process: Subprocess?

    /// Starts the server on `port` (0 picks a free one) and waits until it listens.
    public init(dataDirectory: String, port: Int = 0) throws {
        self.dataDirectory = dataDirectory
        self.port = port
        try start()
    }

    public var url: String { "http://127.0.0.1:\(port)" }

    public func start() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BASKET_QUIET"] = "1"
        let process = try Subprocess(
            Executables.path("basket-server"), ["--listen", "127.0.0.1:\(port)", "--data", dataDirectory],
            environment: environment, stderr: .mergeWithOutput)
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let text = process.stdout
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                port = Int(digits) ?? port
                return
            }
            if !process.isRunning { break }
            usleep(10_000)
        }
        throw ServerError(message: "basket-server did not start: \(log)")
    }

    /// Everything the server printed since it last started.
    public var log: String { process?.stdout ?? "" }

    /// SIGTERM, and waits for a clean exit; returns the exit status (-1 if it had to be killed after 30 s).
    @discardableResult
    public func stop() -> Int32 {
        guard let process else { return 0 }
        if let ended = process.termination { return ended.status }
        process.signal(SIGTERM)
        if let ended = process.wait(timeout: 30) { return ended.signaled ? 128 + ended.status : ended.status }
        process.kill()
        return -1
    }

    /// SIGKILL: the process gets no chance to clean up.
    public func kill() {
        process?.kill()
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    /// A gauge or counter of `/metrics` (the sample without labels), or nil when absent.
    public func metric(_ name: String) throws -> Int? {
        let text = try Executables.runShell("curl -s \(url)/metrics").stdout
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }) else { return nil }
        return Double(line.split(separator: " ")[1]).map { Int($0) }
    }

    /// The server's process id, while it runs.
    public var pid: Int32? { process?.isRunning == true ? process?.pid : nil }

    /// The server's resident memory in bytes (VmRSS), while it runs.
    public var residentBytes: Int? {
        guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { return nil }
        return kilobytes * 1024
    }

    deinit { kill() }

    public struct ServerError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
