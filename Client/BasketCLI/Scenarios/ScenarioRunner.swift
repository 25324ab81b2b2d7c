import BasketCore
import BasketReplica
import Foundation
import Spawn

#if canImport(Glibc)
    import Glibc
#endif

/// Runs scenario files against a real `basket-server` process and real replica files: every
/// device is a replica in a temporary folder driven through the same commands as the CLI.
final class ScenarioRunner {
    let serverBinary: String
    let console: Console

    init(serverBinary: String, console: Console) {
        self.serverBinary = serverBinary
        self.console = console
    }

    struct Failure: Error {
        var line: Int
        var message: String
    }

    /// What one device shows: its items (removed ones left out) and the list's title.
    struct Shown: Equatable {
        struct Row: Equatable {
            var name: String
            var checked: Bool
            var quantity: String?
        }
        var rows: [Row]
        var title: String

        func row(_ name: String) -> Row? {
            let key = ItemKey.normalize(name)
            return rows.first { ItemKey.normalize($0.name) == key }
        }

        var text: String {
            let items = rows.map { "[\($0.checked ? "x" : " ")] \($0.name)" + ($0.quantity.map { " ×\($0)" } ?? "") }
            return "\"\(title)\": " + (items.isEmpty ? "(empty)" : items.joined(separator: ", "))
        }
    }

    /// Runs every file; prints PASS or FAIL for each. Returns whether all passed.
    func run(files: [String]) throws -> Bool {
        var failed = 0
        for file in files {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw CommandError(message: "cannot read \(file): \(error.localizedDescription)", code: "io")
            }
            let scenario: Scenario
            do {
                scenario = try Scenario(parsing: text)
            } catch let error as Scenario.ParseError {
                throw CommandError(message: "\(file): \(error)", code: "usage", exitCode: 64)
            }
            let name = (file as NSString).lastPathComponent
            let started = Date()
            do {
                try Run(scenario: scenario, runner: self).execute()
                console.print(
                    "PASS \(name) (\(scenario.steps.count) steps, \(String(format: "%.1f", Date().timeIntervalSince(started))) s)"
                )
            } catch let failure as Failure {
                failed += 1
                console.print("FAIL \(name):\(failure.line)")
                for line in failure.message.split(separator: "\n") { console.print("  \(line)") }
            }
            console.flush()
        }
        console.print("\(files.count - failed) passed, \(failed) failed")
        return failed == 0
    }

    /// One scenario's devices, server and folder.
    final class Run {
        let scenario: Scenario
        let runner: ScenarioRunner
        let folder: String
        var server: ServerChild?
        var port = 0
        var offline: Set<String> = []
        var clocks: [String: Int64] = [:]
        var backups = 0

        init(scenario: Scenario, runner: ScenarioRunner) {
            self.scenario = scenario
            self.runner = runner
            folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("basket-scenario-\(UUID().uuidString)")
        }

        deinit {
            server?.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var dataFolder: String { folder + "/server" }

        func execute() throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try startServer(line: 0)
            try setUp()
            for (line, step) in scenario.steps { try perform(step, line: line) }
        }

        func startServer(line: Int) throws {
            let child = try ServerChild(
                // A throwaway server: its password hashes protect nothing, so they cost little.
                binary: runner.serverBinary,
                arguments: [
                    "--listen", "127.0.0.1:\(port)", "--data", dataFolder, "--password-iterations", "1000",
                ],
                log: folder + "/server.log")
            server = child
            guard let bound = child.waitForPort() else {
                throw Failure(line: line, message: "basket-server did not start:\n\(child.logText)")
            }
            port = bound
        }

        func stopServer(line: Int) throws {
            guard let server, server.stop() else {
                throw Failure(line: line, message: "basket-server did not stop on SIGTERM")
            }
        }

        /// Every device signs up; the first makes the list "Shopping" and invites the others as editors.
        func setUp() throws {
            let owner = scenario.devices[0]
            for device in scenario.devices {
                try basket(device, ["remote", "set", url], line: 0)
                try basket(device, ["signup", device], line: 0)
                // A scenario says when each device syncs: its changes leave only at a sync step.
                try basket(device, ["remote", "set", "--auto-sync", "off"], line: 0)
            }
            try basket(owner, ["list", "new", "Shopping"], line: 0)
            try basket(owner, ["sync"], line: 0)
            for device in scenario.devices.dropFirst() {
                let invite = try basket(owner, ["share", "--role", "editor", "--json"], line: 0)
                guard let data = invite.data(using: .utf8),
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let code = object["code"] as? String
                else { throw Failure(line: 0, message: "no invite code in: \(invite)") }
                try basket(device, ["join", code], line: 0)
            }
            try perform(.syncAll, line: 0)
            try perform(.serverBackup, line: 0)
        }

        func perform(_ step: Scenario.Step, line: Int) throws {
            switch step {
            case .device(let device, let action):
                switch action {
                case .command(let arguments): try basket(device, arguments, line: line)
                case .refused(let arguments):
                    let state = { [self] in
                        try basket(device, ["ls", "--all", "--json"], line: line)
                            + basket(device, ["status", "--json"], line: line)
                    }
                    let before = try state()
                    try basket(device, arguments, line: line, expecting: 1)
                    guard try state() == before else {
                        throw Failure(
                            line: line,
                            message: "\(device): basket \(arguments.joined(separator: " ")) changed the list")
                    }
                case .offline: offline.insert(device)
                case .online: offline.remove(device)
                case .sync: if !offline.contains(device) { try basket(device, ["sync"], line: line) }
                case .clock(let delta): clocks[device, default: 0] += delta
                case .forge(let victim): try forge(victim, by: device, line: line)
                }
            case .syncAll:
                // Twice round: what the last device pushed reaches the first.
                for _ in 0..<2 {
                    for device in scenario.devices where !offline.contains(device) {
                        try basket(device, ["sync"], line: line)
                    }
                }
            case .serverRestart:
                try stopServer(line: line)
                try startServer(line: line)
            case .serverBackup:
                backups += 1
                try serverTool(["backup", folder + "/backup-\(backups).sqlite"], line: line)
            case .serverLoseData:
                // Back to the last backup: what came after it is gone from the server.
                try stopServer(line: line)
                try serverTool(["restore", folder + "/backup-\(backups).sqlite"], line: line)
                try startServer(line: line)
            case .expect(let who, let condition):
                try check(who == "all" ? scenario.devices : [who], condition, line: line)
            }
        }

        /// `forger` pushes, with its own token, the newest operation `victim`'s replica knows (its
        /// identity: item, field, timestamp, replica) with another value. Whether the server takes
        /// it or not, the scenario's expectations say what every device must show after.
        func forge(_ victim: String, by forger: String, line: Int) throws {
            let file = folder + "/\(victim)-\(line).ops"
            try basket(victim, ["export", file], line: line)
            let ops = try OperationCodec.decode(Array(FileManager.default.contents(atPath: file) ?? Data()))
            guard var forged = ops.max(by: { $0.version < $1.version }) else {
                throw Failure(line: line, message: "\(victim) has no write to forge")
            }
            switch forged.value {
            case .bool(let flag): forged.value = .bool(!flag)
            default: forged.value = .text("Forged by \(forger)")
            }
            guard let data = FileManager.default.contents(atPath: folder + "/" + forger + "/config.json"),
                let config = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let token = config["token"] as? String, let server = URL(string: url)
            else { throw Failure(line: line, message: "\(forger) is not signed in") }
            let forgery = forged
            _ = try? runBlocking {
                try await HTTPSyncTransport(baseURL: server, token: token).push([forgery], to: forgery.list)
            }
        }

        func serverTool(_ arguments: [String], line: Int) throws {
            let child = try ServerChild(
                binary: runner.serverBinary, arguments: arguments + ["--data", dataFolder],
                log: folder + "/server-tool.log")
            guard child.wait(seconds: 60) == 0 else {
                throw Failure(
                    line: line, message: "basket-server \(arguments.joined(separator: " ")) failed:\n\(child.logText)")
            }
        }

        /// Runs a `basket` command on `device`; an exit status other than `expecting` (0: success)
        /// fails the scenario at `line`.
        @discardableResult
        func basket(_ device: String, _ arguments: [String], line: Int, expecting: Int32 = 0) throws -> String {
            let console = Console.capturing()
            var environment = ProcessInfo.processInfo.environment
            environment["BASKET_PASSWORD"] = "password-of-\(device)"
            environment["BASKET_CLOCK_SKEW_MS"] = String(clocks[device] ?? 0)
            let status = BasketCLI.run(
                ["--db", folder + "/" + device] + arguments, environment: environment, console: console)
            console.flush()
            // A sync that leaves changes the server refused exits 1 with nothing on stderr (a
            // scenario goes on: its expectations say what each device shows then).
            let refusedOnly = arguments == ["sync"] && status == 1 && (console.capturedErrors ?? "").isEmpty
            guard status == expecting || (expecting == 0 && refusedOnly) else {
                throw Failure(
                    line: line,
                    message: "\(device): basket \(arguments.joined(separator: " ")) "
                        + (expecting == 0 ? "failed (\(status))" : "was not refused (exit status \(status))") + ":\n"
                        + (console.capturedErrors ?? ""))
            }
            return console.capturedOutput ?? ""
        }

        func shown(_ device: String, line: Int) throws -> Shown {
            let listing = try basket(device, ["ls", "--all", "--json"], line: line)
            guard let data = listing.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let items = object["items"] as? [[String: Any]]
            else { throw Failure(line: line, message: "\(device): unreadable listing \(listing)") }
            let title = (object["list"] as? [String: Any])?["title"] as? String ?? "?"
            let rows = items.compactMap { item -> Shown.Row? in
                guard item["deleted"] as? Bool != true, let name = item["name"] as? String else { return nil }
                return Shown.Row(
                    name: name, checked: item["checked"] as? Bool ?? false, quantity: item["quantity"] as? String)
            }
            return Shown(rows: rows.sorted { $0.name < $1.name }, title: title)
        }

        func check(_ devices: [String], _ condition: Scenario.Condition, line: Int) throws {
            var states: [(String, Shown)] = []
            for device in devices { states.append((device, try shown(device, line: line))) }
            var wrong: [String] = []
            for (device, state) in states {
                let problem: String? =
                    switch condition {
                    case .checked(let name, let checked):
                        state.row(name).map { row in
                            row.name != name
                                ? "shows \"\(row.name)\", not \"\(name)\""
                                : row.checked == checked ? nil : "\(name) is \(row.checked ? "checked" : "unchecked")"
                        } ?? "has no \(name)"
                    case .quantity(let name, let quantity):
                        state.row(name).map { row in
                            row.quantity == quantity ? nil : "\(name) has quantity \(row.quantity ?? "none")"
                        } ?? "has no \(name)"
                    case .absent(let name): state.row(name).map { "still shows \"\($0.name)\"" }
                    case .present(let name):
                        state.row(name).map { row in row.name == name ? nil : "shows \"\(row.name)\", not \"\(name)\"" }
                            ?? "has no \(name)"
                    case .itemCount(let count): state.rows.count == count ? nil : "shows \(state.rows.count) items"
                    case .title(let title): state.title == title ? nil : "has the title \"\(state.title)\""
                    case .same: state == states[0].1 ? nil : "differs from \(states[0].0)"
                    }
                if let problem { wrong.append("\(device) \(problem)") }
            }
            guard !wrong.isEmpty else { return }
            var message = "expectation not met: " + wrong.joined(separator: "; ") + "\nwhat each device shows:"
            for (device, state) in states { message += "\n  \(device): \(state.text)" }
            throw Failure(line: line, message: message)
        }
    }
}

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
            throw CommandError(message: "\(error)", code: "io")
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

enum ScenarioCommand {
    static func run(_ context: Context) throws {
        let positionals = context.arguments.positionals
        guard !positionals.isEmpty else {
            throw UsageError(
                message: "give one or more scenario files", usage: "basket scenario run [--server PATH] FILE…")
        }
        let server =
            context.arguments.value("--server") ?? context.environment["BASKET_SERVER"].flatMap {
                $0.isEmpty ? nil : $0
            }
            ?? ((Bundle.main.executablePath ?? CommandLine.arguments[0]) as NSString).deletingLastPathComponent
            + "/basket-server"
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw CommandError(message: "no basket-server at \(server); give --server PATH", code: "usage")
        }
        let runner = ScenarioRunner(serverBinary: server, console: context.console)
        guard try runner.run(files: positionals) else {
            throw CommandError(message: "some scenarios failed", code: "scenario_failed")
        }
    }
}
