import BasketTesting
import Foundation
import Spawn

#if canImport(Glibc)
    import Glibc
#endif

/// A `basket-server` child process whose output goes to a log file.
final class ServerChild {
    let process: Subprocess
    let logPath: String

    init(binary: String, arguments: [String], log: String) throws {
        logPath = log
        var environment = ProcessInfo.processInfo.environment
        environment["BASKET_QUIET"] = "1"
        do {
            process = try Subprocess(
                binary, arguments, environment: environment, stdout: .file(log), stderr: .mergeWithOutput)
        } catch {
            throw Lab.Finding(description: "cannot start \(binary): \(error)")
        }
    }

    var pid: pid_t { process.pid }

    var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The port from the server's "listening on" line, within 20 seconds.
    func waitForPort() -> Int? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let text = logText
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                return Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            if exited { return nil }
            usleep(10_000)
        }
        return nil
    }

    var exited: Bool { !process.isRunning }

    /// Waits for the exit status (128 + the signal for a signal); nil (after SIGKILL) when it
    /// takes longer than `seconds`.
    func wait(seconds: Double) -> Int32? {
        guard let ended = process.wait(timeout: seconds) else {
            process.kill()
            return nil
        }
        return ended.signaled ? 128 + ended.status : ended.status
    }

    /// SIGTERM and a clean exit within 30 seconds.
    @discardableResult
    func stop() -> Bool {
        if exited { return true }
        process.signal(SIGTERM)
        return wait(seconds: 30) == 0
    }
}
