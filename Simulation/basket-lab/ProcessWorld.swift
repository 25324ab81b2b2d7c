import BasketCLI
import BasketCore
import BasketModel
import BasketReplica
import BasketTesting
import BasketTrace
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scenario against real processes (`basket-lab replay`): a `basket-server` child on a
/// loopback port and its backup and restore commands, and each device a replica folder driven
/// by the CLI's own commands (`basket add`, `basket sync`, …, run in this process so that a
/// `sync (faults N)` can pass them its faulty network).
final class ProcessWorld: ScenarioWorld {
    let serverBinary: String
    let devices: [String]
    let folder: String
    var recorder: TraceRecorder?
    var server: ServerChild?
    var port = 0
    var clocks: [String: Int64]
    var backups = 0
    /// The simulated time (Unix ms) under `time: frozen`, nil for the real clock.
    var now: Int64?
    let network = FaultyNetwork<URLRequest>()
    let http = HTTPSyncTransport.urlSession()

    /// Starts a server and sets the devices up: each signs up, the first makes the list
    /// "Shopping" and invites the others as editors, every one syncs, and the server is backed up.
    init(for scenario: Scenario, serverBinary: String) throws {
        self.serverBinary = serverBinary
        devices = scenario.devices
        clocks = ScenarioRun(scenario).start.clocks
        now = scenario.frozenTime ? Int64(HybridClock.wallClockMilliseconds()) : nil
        folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("basket-lab-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try startServer()
        try setUp()
    }

    deinit {
        server?.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var dataFolder: String { folder + "/server" }

    func startServer() throws {
        let child = try ServerChild(
            // A throwaway server: its password hashes protect nothing, so they cost little.
            binary: serverBinary,
            arguments: ["--listen", "127.0.0.1:\(port)", "--data", dataFolder, "--password-iterations", "1000"]
                + (now.map { ["--frozen-clock", String($0)] } ?? []),
            log: folder + "/server.log")
        server = child
        guard let bound = child.waitForPort() else {
            throw Lab.Finding(description: "basket-server did not start:\n\(child.logText)")
        }
        port = bound
    }

    func stopServer() throws {
        guard let server, server.stop() else {
            throw Lab.Finding(description: "basket-server did not stop on SIGTERM")
        }
    }

    func setUp() throws {
        let owner = devices[0]
        for device in devices {
            try basket(device, ["remote", "set", url])
            try basket(device, ["signup", device])
            // A scenario says when each device syncs: its changes leave only at a sync step.
            try basket(device, ["remote", "set", "--auto-sync", "off"])
        }
        // Plain: the verdict reads the server's pages (encrypted lists have tests of their own).
        try basket(owner, ["list", "new", "Shopping", "--unencrypted"])
        try basket(owner, ["sync"])
        for device in devices.dropFirst() {
            let invite = try basket(owner, ["share", "--role", "editor", "--json"]) ?? ""
            guard let data = invite.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let code = object["code"] as? String
            else { throw Lab.Finding(description: "no invite code in: \(invite)") }
            try basket(device, ["join", code])
        }
        for _ in 0..<2 { for device in devices { try syncLists(of: device, faults: 0) } }
        try backupServer()
    }

    // MARK: Steps

    /// The `basket` commands that make `edit`, in order.
    static func commands(_ edit: Lab.Edit) -> [[String]] {
        switch edit {
        case .trip(let shop, let names):
            [["shopping", "start", "--at", shop]] + names.map { ["check", $0] } + [["shopping", "done"]]
        default: [command(edit)]
        }
    }

    /// The `basket` command that makes `edit` (a trip's first).
    static func command(_ edit: Lab.Edit) -> [String] {
        switch edit {
        case .add(let text): ["add", text]
        case .check(let name): ["check", name]
        case .uncheck(let name): ["uncheck", name]
        case .toggle(let name): ["toggle", name]
        case .remove(let name): ["rm", name]
        case .rename(let old, let new): ["rename", old, "--to", new]
        case .quantity(let name, let quantity): ["set", name, "--quantity", quantity]
        case .title(let title): ["list", "rename", title]
        case .aisle(let name, let aisle): ["set", name, "--category", aisle]
        case .addShop(let name): ["shops", "add", name]
        case .shopOrder(let shop, let aisles): ["aisles", "--shop", shop, "set", aisles.joined(separator: ", ")]
        case .pin(let shop, let aisle): ["aisles", "--shop", shop, "pin", aisle]
        case .mark(let name, let shops): ["set", name, "--shop", shops.joined(separator: ", ")]
        case .trip(let shop, _): ["shopping", "start", "--at", shop]
        case .dismiss(let name): ["usuals", "dismiss", name]
        }
    }

    func perform(_ edit: Lab.Edit, on device: String) throws {
        let seen = try operations(of: device)
        var edit = edit
        if case .trip(let shop, let names) = edit {
            // Checked off in this order, those on the list (as the lab does).
            let keys = Set(try shown(device).items.values.map { ItemKey.normalize($0.name) })
            edit = .trip(shop, names.filter { keys.contains(ItemKey.normalize($0)) })
        }
        for command in Self.commands(edit) { try basket(device, command) }
        guard let seen, let now = try operations(of: device) else { return }
        try ScenarioRun.observeEdit(device, seen: seen, now: now, recorder: recorder)
    }

    func refuse(_ edit: Lab.Edit, on device: String) throws {
        let state = { [self] in
            (try basket(device, ["ls", "--all", "--json"]) ?? "") + (try basket(device, ["status", "--json"]) ?? "")
        }
        let before = try state()
        try basket(device, Self.command(edit), expecting: 1)
        guard try state() == before else {
            throw Lab.Finding(
                description: "\(device): basket \(Self.command(edit).joined(separator: " ")) changed the list")
        }
    }

    func setRole(_ role: Role, of member: String, by device: String) throws {
        try basket(device, ["members", "role", member, role.rawValue])
    }

    func removeMember(_ member: String, by device: String) throws {
        try basket(device, ["members", "rm", member])
    }

    func discardRefused(_ device: String) throws {
        try basket(device, ["sync", "--discard-refused"])
    }

    /// `forger` pushes, with its own token, the newest operation `victim`'s replica knows (its
    /// identity: item, field, timestamp, replica) with another value.
    func forge(_ victim: String, by forger: String) async throws {
        let file = folder + "/\(victim)-\(UUID().uuidString).ops"
        try basket(victim, ["export", file])
        let ops = try OperationCodec.decodeFile(Array(FileManager.default.contents(atPath: file) ?? Data())).operations
        guard var forged = ops.max(by: { $0.version < $1.version }) else {
            throw Lab.Finding(description: "\(victim) has no write to forge")
        }
        switch forged.value {
        case .bool(let flag): forged.value = .bool(!flag)
        default: forged.value = .text("Forged by \(forger)")
        }
        guard let data = FileManager.default.contents(atPath: folder + "/" + forger + "/config.json"),
            let config = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let token = config["token"] as? String, let server = URL(string: url)
        else { throw Lab.Finding(description: "\(forger) is not signed in") }
        _ = try? await HTTPSyncTransport(baseURL: server, token: token).push([forged], to: forged.list)
    }

    func setOnline(_ device: String, _ online: Bool) {
        recorder?.record(online ? .online(device: device) : .offline(device: device))
    }

    @discardableResult
    func syncLists(of device: String, faults: UInt64) throws -> Bool {
        network.faults(faults)
        defer { network.faults(nil) }
        return try basket(device, ["sync"], unreachableIsFine: faults != 0) != nil
    }

    func moveClock(of device: String, by milliseconds: Int64) {
        clocks[device, default: 0] += milliseconds
        recorder?.record(.clockMoved(device: device, milliseconds: milliseconds))
    }

    func moveTime(by milliseconds: Int64) throws {
        now = (now ?? 0) + milliseconds
        recorder?.record(.timeMoved(milliseconds: milliseconds))
        // The server's frozen clock is an argument: it starts again with the new time.
        try stopServer()
        try startServer()
    }

    /// Real time passes between two steps by itself.
    func nextStepInRealTime() {}

    func deliverDelayed(order: UInt64) async {
        for request in network.takeDelayed(order: order) { _ = try? await http(request) }
    }

    func restartServer() throws {
        try stopServer()
        try startServer()
        recorder?.record(.serverRestarted)
    }

    func backupServer() throws {
        backups += 1
        try serverTool(["backup", folder + "/backup-\(backups).sqlite"])
        recorder?.record(.serverBackedUp)
    }

    func loseServerData() throws {
        // Back to the last backup: what came after it is gone from the server.
        try stopServer()
        try serverTool(["restore", folder + "/backup-\(backups).sqlite"])
        try startServer()
        recorder?.record(.serverLostData)
    }

    func serverTool(_ arguments: [String]) throws {
        let child = try ServerChild(
            binary: serverBinary, arguments: arguments + ["--data", dataFolder], log: folder + "/server-tool.log")
        guard child.wait(seconds: 60) == 0 else {
            throw Lab.Finding(
                description: "basket-server \(arguments.joined(separator: " ")) failed:\n\(child.logText)")
        }
    }

    // MARK: What the devices show

    func shown(_ device: String) throws -> ReferenceModel.List {
        let replica = try open(device)
        guard let list = try replica.lists().first else { return ReferenceModel.List(title: nil, items: [:]) }
        return try ScenarioRun.shown(replica, list: list.id)
    }

    func disagreement(_ device: String) throws -> ReferenceModel.Disagreement? {
        let replica = try open(device)
        guard let list = try replica.lists().first?.id else { return nil }
        return try ScenarioRun.disagreement(of: replica, in: list) {
            try open(path: folder + "/model-\(device)-\(UUID().uuidString).sqlite")
        }
    }

    func finishTrace() throws {
        guard let recorder else { return }
        for device in devices {
            let replica = try open(device)
            recorder.device(device, isReplica: replica.replicaID)
            recorder.finish(device, showing: try shown(device))
        }
    }

    /// The operations `device`'s replica holds of its list (nil before it has one).
    func operations(of device: String) throws -> [Op]? {
        guard FileManager.default.fileExists(atPath: folder + "/" + device + "/basket.sqlite") else { return nil }
        let replica = try open(device)
        guard let list = try replica.lists().first?.id else { return nil }
        return try replica.operations(in: list)
    }

    func open(_ device: String) throws -> Replica { try open(path: folder + "/" + device + "/basket.sqlite") }

    /// A replica file opened for reading, its clock a day ahead of any write.
    func open(path: String) throws -> Replica {
        var configuration = Replica.Configuration()
        let ahead = UInt64(max(0, (now ?? Int64(HybridClock.wallClockMilliseconds())) + 86_400_000))
        configuration.wallClock = { ahead }
        return try Replica(path: path, configuration: configuration)
    }

    // MARK: The CLI

    /// Runs a `basket` command on `device` and returns what it printed; an exit status other than
    /// `expecting` (0: success) fails the run. A sync that leaves only refused changes exits 1
    /// with nothing on stderr and goes on (the expectations say what each device shows then);
    /// with `unreachableIsFine` (a sync through the faulty network) a server not reached returns
    /// nil.
    @discardableResult
    func basket(_ device: String, _ arguments: [String], expecting: Int32 = 0, unreachableIsFine: Bool = false)
        throws -> String?
    {
        let console = Console.capturing()
        var environment = ProcessInfo.processInfo.environment
        environment["BASKET_PASSWORD"] = "password-of-\(device)"
        environment["BASKET_CLOCK_SKEW_MS"] = String(clocks[device] ?? 0)
        if let now { environment["BASKET_CLOCK_MS"] = String(now) }
        let network = self.network
        let http = self.http
        let status = BasketCLI.run(
            ["--db", folder + "/" + device] + arguments, environment: environment, console: console,
            exchange: { request in try await network.carry(request, network.draw()) { try await http($0) } })
        console.flush()
        let errors = console.capturedErrors ?? ""
        let refusedOnly = arguments == ["sync"] && status == 1 && errors.isEmpty
        if unreachableIsFine && status == 1 && errors.hasPrefix("Error: cannot reach the server") { return nil }
        guard status == expecting || (expecting == 0 && refusedOnly) else {
            throw Lab.Finding(
                description: "\(device): basket \(arguments.joined(separator: " ")) "
                    + (expecting == 0 ? "failed (\(status))" : "was not refused (exit status \(status))") + ":\n"
                    + errors)
        }
        return console.capturedOutput ?? ""
    }
}
