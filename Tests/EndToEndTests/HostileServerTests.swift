import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// The `basket` client against a server that lies: Tests/HostileServer/hostile_server.py answers
/// with redirects, answers without the fields a push needs, pages of another list, absurd clocks,
/// endless `more`, a new epoch on every page, cut and oversized bodies, and escape sequences in
/// its error messages. Every `basket sync` ends (within its timeout) with a clear error on
/// stderr, nothing unacknowledged leaves the outbox, and nothing foreign enters the list.
@Suite(.serialized)
struct HostileServerTests {
    let root = TemporaryDirectory("hostile")

    struct StartFailure: Error {
        var output: String
    }

    /// A running hostile server in `mode`, and the file where it logs what it was sent.
    final class Hostile {
        let process: Subprocess
        let port: Int
        let log: String

        init(_ mode: String, in root: TemporaryDirectory) throws {
            log = root.file("\(mode).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("HostileServer/hostile_server.py").path
            process = try Subprocess("/usr/bin/env", ["python3", script, mode, log])
            var found: Int?
            // Up to 30 s: the gzip bomb (1 GiB deflated) is made before the server listens.
            for _ in 0..<600 where found == nil {
                found = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                    .flatMap { Int($0.dropFirst("listening on ".count)) }
                if found == nil { Thread.sleep(forTimeInterval: 0.05) }
            }
            guard let found else { throw StartFailure(output: process.stdout + process.stderr) }
            port = found
        }

        deinit { process.kill() }

        var requests: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    }

    /// A device with two unsent items, pointed at `server` with a token, as `basket login` leaves it.
    func device(_ name: String, server: Hostile) throws -> Device {
        let device = Device(root, name)
        // Plain: the hostile server answers with plain operations.
        try device.ok("list", "new", "Shopping", "--unencrypted")
        // Two names the catalogue does not have: eight writes (the title and language, three per item).
        try device.ok("add", "Garden hose, Balloons")
        let config = #"{"account": "alice", "server": "http://127.0.0.1:\#(server.port)", "token": "t0k3n"}"#
        try Data(config.utf8).write(to: URL(fileURLWithPath: device.directory + "/config.json"))
        return device
    }

    func pending(_ device: Device) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try device.ok("status", "--json").utf8))
        return (status as? [String: Any])?["pending"] as? Int ?? -1
    }

    /// Runs `basket sync`, which must fail with `expected` in its message, within 60 seconds.
    func failingSync(_ device: Device, _ expected: String) throws -> ProcessResult {
        let result = try Executables.run("basket", ["--db", device.directory, "sync"], timeout: 60)
        #expect(result.status != 0, "sync succeeded: \(result.stdout)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}") && !result.stdout.contains("\u{1B}"))
        return result
    }

    @Test func aRedirectIsAnErrorNamingItAndTheTokenStaysHome() throws {
        let server = try Hostile("redirect", in: root)
        let device = try device("redirect", server: server)
        #expect(try pending(device) == 8)
        let result = try failingSync(device, "redirect to 'http://127.0.0.1:\(server.port)/stolen'")
        #expect(result.stderr.contains("basket remote set"))
        #expect(try pending(device) == 8)
        #expect(server.requests.contains("Bearer t0k3n"))  // sent to the server it was given…
        #expect(
            !server.requests.split(separator: "\n").contains { $0.hasPrefix("GET /stolen") || $0.contains("/stolen") })
    }

    @Test func aPushAnswerWithoutItsFieldsDropsNothing() throws {
        let server = try Hostile("push-fields", in: root)
        let device = try device("fields", server: server)
        _ = try failingSync(device, "push answer without accepted")
        #expect(try pending(device) == 8)
    }

    @Test func operationsOfAnotherListAreRefused() throws {
        let server = try Hostile("foreign", in: root)
        let device = try device("foreign", server: server)
        _ = try failingSync(device, "holding an operation of list 0123456789abcdef0123456789abcdef")
        let names = try device.listing("--all").items.map(\.name).sorted()
        #expect(names == ["Balloons", "Garden hose"])
    }

    @Test func aServerClockYearsAwayIsNotTaken() throws {
        let server = try Hostile("clock", in: root)
        let device = try device("clock", server: server)
        _ = try failingSync(device, "a clock more than a day away is not taken")
        #expect(try pending(device) == 8)
        let status = try JSONSerialization.jsonObject(with: Data(try device.ok("status", "--json").utf8))
        #expect((status as? [String: Any])?["clockOffsetMilliseconds"] as? Int == 0)
    }

    @Test func endlessMoreAndEndlessEpochsStop() throws {
        for mode in ["more", "epochs"] {
            let server = try Hostile(mode, in: root)
            let device = try device(mode, server: server)
            _ = try failingSync(device, mode == "more" ? "more follows" : "epoch changed 3 times")
            #expect(try device.listing().items.map(\.name).sorted() == ["Balloons", "Garden hose"])
            // A bounded number of requests, not a loop.
            #expect(server.requests.split(separator: "\n").count < 50, "\(mode)")
        }
    }

    @Test func truncatedOversizedAndEscapingAnswersAreClearErrors() throws {
        for (mode, expected) in [
            ("truncated", "cannot reach the server"), ("oversized", "at most 33554432"),
            ("escape", "go away \\u{1b}]0;pwned\\u{7}"),
        ] {
            let server = try Hostile(mode, in: root)
            let device = try device(mode, server: server)
            _ = try failingSync(device, expected)
            #expect(try pending(device) == 8, "\(mode)")
        }
    }

    /// About a megabyte of gzip that inflates to 1 GiB: libcurl hands the client the inflated
    /// answer 16 KiB at a time (CurlExchange), the client refuses the piece that would pass its
    /// 32 MiB cap, and the sync stops there and says so. Its peak memory is a plain sync's plus
    /// the capped answer (twice it at most, while the buffer grows), not the gigabyte (before:
    /// 1.1 GiB with the whole answer read, then 0.57 GB for half a gigabyte with URLSession's
    /// delegate counting).
    @Test func aGzipBombIsStoppedAtTheCap() throws {
        let plainServer = try Hostile("push-fields", in: root)
        let plain = try Executables.run(
            "basket", ["--db", try device("plain", server: plainServer).directory, "sync"], timeout: 60)
        let server = try Hostile("gzipbomb", in: root)
        let device = try device("gzipbomb", server: server)
        let result = try failingSync(device, "at most 33554432")
        let extraKiB = result.peakResidentKiB - plain.peakResidentKiB
        print(
            "gzip bomb of 1 GiB: basket sync peaked at \(result.peakResidentKiB / 1024) MiB, "
                + "\(extraKiB / 1024) MiB over a plain sync's \(plain.peakResidentKiB / 1024) MiB")
        #expect(plain.peakResidentKiB > 0 && result.peakResidentKiB > 0)
        #expect(
            extraKiB < 2 * (32 << 10) + (4 << 10),
            "peak \(result.peakResidentKiB) KiB, plain \(plain.peakResidentKiB) KiB")
        #expect(try pending(device) == 8)
    }

    /// A server that sends a byte every 2 s never goes silent for URLSession's idle timeout: the
    /// whole request has a deadline (15 s, the CLI's), and the sync ends with a clear error.
    @Test func aServerDrippingItsAnswerIsGivenUpOnAtTheDeadline() throws {
        let server = try Hostile("drip", in: root)
        let device = try device("drip", server: server)
        let started = Date()
        _ = try failingSync(device, "no whole answer within 15 s")
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 14 && seconds < 30, "\(seconds) s")
        #expect(try pending(device) == 8)
    }
}
