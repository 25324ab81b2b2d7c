import BasketCore
import BasketModel
import BasketReplica
import BasketTrace
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs scenario files against a real `basket-server` process and real replica files: every
/// device is a replica in a temporary folder driven through the same commands as the CLI.
final class ScenarioRunner {
    let serverBinary: String
    let console: Console
    /// Where `--trace` writes the picture of the run (one scenario), nil for none.
    var tracePath: String?

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
            let run = Run(scenario: scenario, runner: self)
            if tracePath != nil { run.recorder = TraceRecorder(title: name, devices: scenario.devices) }
            defer { if let tracePath { writeTrace(of: run, to: tracePath) } }
            do {
                try run.execute()
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
        /// The first write that broke the hybrid clock's promise (checked after every edit).
        var causality: Failure?
        /// The simulated time (Unix ms) under `time: frozen`, nil for the real clock.
        var now: Int64?
        /// What happened, for `--trace` (nil: not asked).
        var recorder: TraceRecorder?
        /// The exit status of the last `basket` command.
        var lastStatus: Int32 = 0
        let network = ScenarioNetwork()

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
            var steps = scenario.steps[...]
            if scenario.frozenTime {
                now = Int64(HybridClock.wallClockMilliseconds())
                // Clock lines at the top set the clocks the devices start with, before they sign up.
                while case .device(let device, .clock(let delta))? = steps.first?.step {
                    clocks[device, default: 0] += delta
                    recorder?.begin(scenario.texts[steps.first?.line ?? 0] ?? "")
                    recorder?.record(.clockMoved(device: device, milliseconds: delta))
                    steps = steps.dropFirst()
                }
            }
            do {
                try startServer(line: 0)
                // The set-up (sign-ups, invitations, a first sync) is not drawn: the steps are.
                let drawing = recorder
                recorder = nil
                try setUp()
                recorder = drawing
                for (line, step) in steps {
                    recorder?.begin(scenario.texts[line] ?? "")
                    try perform(step, line: line)
                    if let causality { throw causality }
                }
                // Every run ends with each device compared with the independent model.
                recorder?.begin("(the end: every device against the model)")
                try check(scenario.devices, .model, line: (scenario.steps.last?.line ?? 0) + 1)
            } catch {
                recorder?.failed()
                throw error
            }
        }

        func startServer(line: Int) throws {
            let child = try ServerChild(
                // A throwaway server: its password hashes protect nothing, so they cost little.
                binary: runner.serverBinary,
                arguments: [
                    "--listen", "127.0.0.1:\(port)", "--data", dataFolder, "--password-iterations", "1000",
                ] + (now.map { ["--frozen-clock", String($0)] } ?? []),
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
                // An edit (not a sync, whose clock correction re-stamps the device's own writes).
                let isEdit: Bool
                switch action {
                case .command, .maybe: isEdit = true
                default: isEdit = false
                }
                let seen = isEdit ? try operations(of: device) : nil
                defer {
                    if let seen, let now = try? operations(of: device) {
                        if let violation = ReferenceModel.causalityViolation(seen: seen, now: now) {
                            causality = causality ?? Failure(line: line, message: "\(device): \(violation)")
                        }
                        let before = Set(seen)
                        let writes = now.filter { !before.contains($0) }
                        if !writes.isEmpty { recorder?.record(.wrote(device: device, writes: writes, seen: seen)) }
                    }
                }
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
                case .offline:
                    offline.insert(device)
                    recorder?.record(.offline(device: device))
                case .online:
                    offline.remove(device)
                    recorder?.record(.online(device: device))
                case .sync: if !offline.contains(device) { try sync(device, line: line) }
                case .syncWithFaults(let seed):
                    guard !offline.contains(device) else { break }
                    network.faults(seed)
                    defer { network.faults(nil) }
                    try sync(device, line: line, unreachableIsFine: true)
                case .maybe(let arguments, let item, let newName):
                    let keys = Set(try shown(device, line: line).rows.map { ItemKey.normalize($0.name) })
                    let (from, to) = (ItemKey.normalize(item), newName.map(ItemKey.normalize))
                    guard keys.contains(from), to == nil || to == from || !keys.contains(to!) else { break }
                    try basket(device, arguments, line: line)
                case .clock(let delta):
                    clocks[device, default: 0] += delta
                    recorder?.record(.clockMoved(device: device, milliseconds: delta))
                case .forge(let victim): try forge(victim, by: device, line: line)
                }
            case .syncAll:
                // Twice round: what the last device pushed reaches the first.
                for _ in 0..<2 {
                    for device in scenario.devices where !offline.contains(device) {
                        try sync(device, line: line)
                    }
                }
            case .serverRestart:
                try stopServer(line: line)
                try startServer(line: line)
                recorder?.record(.serverRestarted)
            case .advanceTime(let milliseconds):
                now = (now ?? 0) + milliseconds
                recorder?.record(.timeMoved(milliseconds: milliseconds))
                // The server's frozen clock is an argument: it starts again with the new time.
                try stopServer(line: line)
                try startServer(line: line)
            case .deliverDelayed(let order):
                network.deliverDelayed(order: order)
            case .serverBackup:
                backups += 1
                try serverTool(["backup", folder + "/backup-\(backups).sqlite"], line: line)
                recorder?.record(.serverBackedUp)
            case .serverLoseData:
                // Back to the last backup: what came after it is gone from the server.
                try stopServer(line: line)
                try serverTool(["restore", folder + "/backup-\(backups).sqlite"], line: line)
                try startServer(line: line)
                recorder?.record(.serverLostData)
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
        /// `unreachableIsFine`: a sync through the faulty network may not reach the server.
        @discardableResult
        func basket(
            _ device: String, _ arguments: [String], line: Int, expecting: Int32 = 0, unreachableIsFine: Bool = false
        ) throws -> String {
            let console = Console.capturing()
            var environment = ProcessInfo.processInfo.environment
            environment["BASKET_PASSWORD"] = "password-of-\(device)"
            environment["BASKET_CLOCK_SKEW_MS"] = String(clocks[device] ?? 0)
            if let now { environment["BASKET_CLOCK_MS"] = String(now) }
            let status = BasketCLI.run(
                ["--db", folder + "/" + device] + arguments, environment: environment, console: console,
                exchange: network.exchange)
            console.flush()
            lastStatus = status
            // A sync that leaves changes the server refused exits 1 with nothing on stderr (a
            // scenario goes on: its expectations say what each device shows then).
            let refusedOnly = arguments == ["sync"] && status == 1 && (console.capturedErrors ?? "").isEmpty
            let unreachable =
                unreachableIsFine && status == 1
                && (console.capturedErrors ?? "").hasPrefix("Error: cannot reach the server")
            guard status == expecting || (expecting == 0 && (refusedOnly || unreachable)) else {
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
            if condition == .model {
                for device in devices {
                    if let disagreement = try disagreement(device) {
                        throw Failure(line: line, message: "\(device) disagrees with the model: \(disagreement)")
                    }
                }
                return
            }
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
                    case .model: nil
                    }
                if let problem { wrong.append("\(device) \(problem)") }
            }
            guard !wrong.isEmpty else { return }
            var message = "expectation not met: " + wrong.joined(separator: "; ") + "\nwhat each device shows:"
            for (device, state) in states { message += "\n  \(device): \(state.text)" }
            throw Failure(line: line, message: message)
        }

        /// Where `device`'s replica shows another state than the model says for the writes it
        /// holds, explained by the smallest set of them that still shows it.
        func disagreement(_ device: String) throws -> ReferenceModel.Disagreement? {
            let replica = try open(folder + "/" + device + "/basket.sqlite")
            guard let list = try replica.lists().first?.id else { return nil }
            func shown(_ replica: Replica) throws -> ReferenceModel.List {
                ReferenceModel.List(
                    title: try replica.lists().first { $0.id == list }?.title,
                    shown: try replica.items(in: list, filter: .all))
            }
            var replays = 0
            return try ReferenceModel.disagreement(
                in: list, shown: try shown(replica), operations: try replica.operations(in: list)
            ) { ops in
                replays += 1
                let fresh = try open(folder + "/model-\(device)-\(replays).sqlite")
                _ = try fresh.merge(ops)
                return try shown(fresh)
            }
        }

        /// The operations `device`'s replica holds of its list (nil before it has one).
        func operations(of device: String) throws -> [Op]? {
            let path = folder + "/" + device + "/basket.sqlite"
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let replica = try open(path)
            guard let list = try replica.lists().first?.id else { return nil }
            return try replica.operations(in: list)
        }

        /// A replica file opened for reading by the runner, its clock a day ahead of any write.
        func open(_ path: String) throws -> Replica {
            var configuration = Replica.Configuration()
            let ahead = UInt64(max(0, (now ?? Int64(HybridClock.wallClockMilliseconds())) + 86_400_000))
            configuration.wallClock = { ahead }
            return try Replica(path: path, configuration: configuration)
        }
    }
}
