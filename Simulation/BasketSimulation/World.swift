import BasketCore
import BasketModel
import BasketReplica
import BasketServer
import Foundation
import HTTPServer
import SeededRandom
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One simulated run: the server, the devices, the network and the simulated time.
final class World: @unchecked Sendable {
    // `@unchecked Sendable`: the simulation runs one step at a time; the parts that the network
    // closures reach from SyncEngine's tasks (server, faults, delayed requests) are behind `state`.
    let plan: Simulation.Plan
    let folder: String
    let time: SimulatedTime
    let state = Mutex(NetworkState())
    var devices: [Device] = []
    var list = ListID(raw: ID128(high: 0, low: 0))
    var backups = 0

    struct NetworkState {
        var router: Router?
        var service: BasketService?
        var partitioned: Set<Int> = []
        var faults: SplitMix64?
        var delayed: [HTTPRequest] = []
        var counters = Simulation.Counters()
    }

    struct Device {
        var replica: Replica
        var engine: SyncEngine
        var transport: HTTPSyncTransport
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }

    init(plan: Simulation.Plan) throws {
        self.plan = plan
        time = SimulatedTime(1_780_000_000_000)
        folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("basket-sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try openServer()
        try setUp()
    }

    var storePath: String { folder + "/store.sqlite" }

    func openServer() throws {
        let store = try SQLiteStore(path: storePath, fsyncEveryCommit: false)
        var configuration = BasketService.Configuration()
        configuration.passwordIterations = 1_000
        configuration.failedLoginsPerAddress = 1_000
        let time = self.time
        configuration.clock = { time.now }
        let service = BasketService(store: store, configuration: configuration)
        let router = service.router()
        state.withLock {
            $0.service = service
            $0.router = router
        }
    }

    func closeServer() {
        let service = state.withLock { state in
            defer {
                state.service = nil
                state.router = nil
            }
            return state.service
        }
        service?.shutdown()
    }

    func close() {
        closeServer()
        devices = []
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every device signs up; device 0 makes the list and invites the others. No faults yet.
    func setUp() throws {
        for (index, offset) in plan.clockOffsets.enumerated() {
            var configuration = Replica.Configuration()
            configuration.synchronous = .off
            let time = self.time
            configuration.wallClock = { UInt64(Int64(time.now) + offset) }
            let replica = try Replica(path: folder + "/device-\(index).sqlite", configuration: configuration)
            let anonymous = transport(index, token: nil)
            let name = "device\(index)"
            let token = try runBlocking {
                try await anonymous.signUp(name: name, password: "password-\(name)")
                return try await anonymous.login(name: name, password: "password-\(name)")
            }
            let transport = transport(index, token: token)
            devices.append(
                Device(
                    replica: replica, engine: SyncEngine(replica: replica, transport: transport), transport: transport))
        }
        list = try devices[0].replica.createList(title: "Shopping").id
        let owner = devices[0]
        let list = self.list
        try runBlocking { _ = try await owner.engine.sync(list) }
        for device in devices.dropFirst() {
            try runBlocking {
                let code = try await owner.transport.invite(to: list, role: .editor)
                let remote = try await device.transport.join(code: code.code ?? "")
                _ = try await device.engine.adopt(remote.id, role: remote.role)
            }
        }
        try perform(.backupServer)
    }

    func transport(_ device: Int, token: String?) -> HTTPSyncTransport {
        HTTPSyncTransport(baseURL: URL(string: "http://simulated")!, token: token) { [self] request in
            try send(request, from: device)
        }
    }

    /// The network: a request from `device` meets the faults of the sync in progress.
    func send(_ urlRequest: URLRequest, from device: Int) throws -> (Data, Int) {
        let request = Self.httpRequest(urlRequest)
        let fate: NetworkFate = state.withLock { state in
            if state.partitioned.contains(device) { return .dropRequest }
            guard var faults = state.faults else { return .deliver }
            defer { state.faults = faults }
            return NetworkFate.draw(&faults)
        }
        state.withLock { state in
            switch fate {
            case .deliver: state.counters.delivered += 1
            case .dropRequest: state.counters.lostRequests += 1
            case .dropAnswer: state.counters.lostAnswers += 1
            case .duplicate: state.counters.duplicated += 1
            case .delay: state.counters.delayed += 1
            }
        }
        switch fate {
        case .dropRequest: throw SyncError.unreachable("simulated: request lost")
        case .delay:
            state.withLock { $0.delayed.append(request) }
            throw SyncError.unreachable("simulated: request delayed")
        case .dropAnswer:
            _ = try deliver(request)
            throw SyncError.unreachable("simulated: answer lost")
        case .duplicate:
            _ = try deliver(request)
            return try deliver(request)
        case .deliver:
            return try deliver(request)
        }
    }

    func deliver(_ request: HTTPRequest) throws -> (Data, Int) {
        guard let router = state.withLock({ $0.router }) else { throw SyncError.unreachable("simulated: server down") }
        guard let response = router.answer(request) else { throw SyncError.unreachable("simulated: no answer") }
        return (Data(response.body), response.status)
    }

    static func httpRequest(_ request: URLRequest) -> HTTPRequest {
        let url = request.url!
        var query: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            query[item.name] = item.value ?? ""
        }
        var headers: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers[name.lowercased()] = value }
        return HTTPRequest(
            method: request.httpMethod ?? "GET", path: url.path, query: query, headers: headers,
            body: Array(request.httpBody ?? Data()))
    }

    // MARK: Steps

    func run() throws -> String? {
        for (index, step) in plan.steps.enumerated() {
            do {
                try perform(step)
            } catch let error as Unexpected {
                return "step \(index + 1) (\(step)): \(error)"
            }
        }
        return try converge()
    }

    func perform(_ step: Simulation.Step) throws {
        switch step {
        case .act(let index, let action):
            let replica = devices[index].replica
            let seen = try replica.operations(in: list)
            try act(replica, action)
            try checkCausality(device: index, seen: seen, now: try replica.operations(in: list))
        case .sync(let index, let faults):
            state.withLock { $0.faults = faults == 0 ? nil : SplitMix64(seed: faults) }
            defer { state.withLock { $0.faults = nil } }
            try sync(index)
        case .advance(let milliseconds):
            time.advance(milliseconds)
        case .partition(let index):
            state.withLock { _ = $0.partitioned.insert(index) }
        case .heal(let index):
            state.withLock { _ = $0.partitioned.remove(index) }
        case .deliverDelayed(let order):
            var random = SplitMix64(seed: order)
            var delayed = state.withLock { state in
                defer { state.delayed = [] }
                return state.delayed
            }
            while !delayed.isEmpty { _ = try? deliver(delayed.remove(at: random.below(delayed.count))) }
        case .restartServer:
            state.withLock { $0.counters.serverRestarts += 1 }
            closeServer()
            try openServer()
        case .backupServer:
            backups += 1
            let target = folder + "/backup-\(backups).sqlite"
            let service = state.withLock { $0.service }
            guard service != nil else { return }
            try SQLiteStore(path: storePath, fsyncEveryCommit: false).backup(to: target)
        case .loseServerData:
            state.withLock { $0.counters.serverDataLosses += 1 }
            closeServer()
            _ = try SQLiteStore.restore(from: folder + "/backup-\(backups).sqlite", into: storePath)
            try openServer()
        }
    }

    /// A local edit; an edit of an item that is not on the device's list (by its key), or a
    /// rename to a name another item has, is skipped, as a person would (and as a scenario's
    /// `maybe` step is).
    func act(_ replica: Replica, _ action: Simulation.Action) throws {
        func id(_ name: String) -> ItemID { ItemID(list: list, key: ItemKey.normalize(name)) }
        guard Simulation.applies(action, onList: Set(try replica.items(in: list).map { ItemKey.normalize($0.name) }))
        else { return }
        do {
            switch action {
            case .add(let name): _ = try replica.add([name], to: list)
            case .check(let name): _ = try replica.check(id(name), in: list)
            case .uncheck(let name): _ = try replica.uncheck(id(name), in: list)
            case .toggle(let name): _ = try replica.toggle(id(name), in: list)
            case .remove(let name): _ = try replica.remove(id(name), in: list)
            case .rename(let old, let new): _ = try replica.rename(id(old), to: new, in: list)
            case .quantity(let name, let value): _ = try replica.set(.quantity, to: value, of: id(name), in: list)
            case .title(let title): try replica.renameList(list, to: title)
            }
        } catch ReplicaError.noSuchItem, ReplicaError.nameTaken {
            // Not on this device's list (yet): nothing to do.
        } catch {
            throw Unexpected(description: "local edit \(action) failed: \(error)")
        }
    }

    /// The hybrid clock's promise: a write a device makes after it has seen another write of the
    /// same register beats that write (whatever the device's wall clock says).
    func checkCausality(device: Int, seen: [Op], now: [Op]) throws {
        if let violation = ReferenceModel.causalityViolation(seen: seen, now: now) {
            throw Unexpected(description: "device \(device): \(violation)")
        }
    }

    /// One sync; a network failure is expected, anything else is a finding.
    func sync(_ index: Int) throws {
        let engine = devices[index].engine
        let list = self.list
        do {
            let report = try runBlocking { try await engine.sync(list) }
            state.withLock {
                if report.restamped > 0 { $0.counters.clockCorrections += 1 }
                if report.epochChanged { $0.counters.epochChanges += 1 }
            }
        } catch SyncError.unreachable {
        } catch {
            throw Unexpected(description: "device \(index) sync failed: \(error)")
        }
    }

    // MARK: The end of a run

    /// Heals the network, lets every device sync until nothing moves, then checks the invariants.
    func converge() throws -> String? {
        state.withLock {
            $0.partitioned = []
            $0.faults = nil
        }
        try perform(.deliverDelayed(order: 1))
        for round in 0..<8 {
            for index in devices.indices {
                do { try sync(index) } catch let error as Unexpected { return "while converging: \(error)" }
            }
            let pending = try devices.reduce(0) { $0 + (try $1.replica.outbox.count()) }
            if pending == 0 && round >= 1 { break }
        }
        for (index, device) in devices.enumerated() where try device.replica.outbox.count() > 0 {
            return "device \(index) still has \(try device.replica.outbox.count()) unsynced operations after 8 rounds"
        }
        // The same state everywhere.
        let states = try devices.map { try snapshot($0.replica) }
        for (index, state) in states.enumerated().dropFirst() where state != states[0] {
            return "device \(index) differs from device 0:\n" + difference(states[0], state)
        }
        // The server holds every operation any device made, and the devices hold every one it has.
        let (serverOperations, entries) = try self.serverOperations()
        if entries != serverOperations.count {
            return "the server's log holds \(entries - serverOperations.count) duplicate operations"
        }
        for (index, device) in devices.enumerated() {
            let local = Set(try device.replica.operations(in: list))
            let missing = local.subtracting(serverOperations)
            if let first = missing.first {
                return "the server is missing \(missing.count) operations of device \(index), e.g. \(first)"
            }
            let unseen = serverOperations.subtracting(local)
            if let first = unseen.first {
                return "device \(index) is missing \(unseen.count) operations of the server, e.g. \(first)"
            }
        }
        // Every device shows what the independent model says for the operations it holds: a rule
        // that is wrong the same way on every device converges, and only this shows it.
        for (index, device) in devices.enumerated() {
            if let disagreement = try disagreement(device.replica) {
                return "device \(index) disagrees with the model: \(disagreement)"
            }
        }
        // And the server's log, applied to a new replica, gives the same state.
        let rebuilt = try freshReplica(named: "rebuilt")
        _ = try rebuilt.apply(Array(serverOperations))
        let fromServer = try snapshot(rebuilt)
        if fromServer != states[0] {
            return "the server's operations give another state than the devices:\n" + difference(states[0], fromServer)
        }
        return nil
    }

    /// Where `replica` shows another state than the model for the operations it holds.
    func disagreement(_ replica: Replica) throws -> ReferenceModel.Disagreement? {
        let list = self.list
        let shown = ReferenceModel.List(
            title: try replica.lists().first { $0.id == list }?.title, shown: try replica.items(in: list, filter: .all))
        var replays = 0
        return try ReferenceModel.disagreement(in: list, shown: shown, operations: try replica.operations(in: list)) {
            ops in
            replays += 1
            let fresh = try freshReplica(named: "replay-\(replays)")
            _ = try fresh.apply(ops)
            return ReferenceModel.List(
                title: try fresh.lists().first { $0.id == list }?.title, shown: try fresh.items(in: list, filter: .all))
        }
    }

    /// A new replica in the run's folder whose clock is ahead of every write in the run.
    func freshReplica(named name: String) throws -> Replica {
        var configuration = Replica.Configuration()
        configuration.synchronous = .off
        let time = self.time
        configuration.wallClock = { time.now + 2 * 3_600_000 }
        return try Replica(path: folder + "/\(name).sqlite", configuration: configuration)
    }

    struct Snapshot: Equatable {
        var title: String
        var items: [Item]
    }

    func snapshot(_ replica: Replica) throws -> Snapshot {
        let title = try replica.lists().first { $0.id == list }?.title ?? "(no list)"
        return Snapshot(title: title, items: try replica.items(in: list, filter: .all).sorted { $0.id < $1.id })
    }

    func difference(_ a: Snapshot, _ b: Snapshot) -> String {
        var lines: [String] = []
        if a.title != b.title { lines.append("  title \"\(a.title)\" / \"\(b.title)\"") }
        let left = Dictionary(uniqueKeysWithValues: a.items.map { ($0.id, $0) })
        let right = Dictionary(uniqueKeysWithValues: b.items.map { ($0.id, $0) })
        for id in Set(left.keys).union(right.keys) where left[id] != right[id] {
            lines.append("  \(left[id].map(describe) ?? "(none)")  /  \(right[id].map(describe) ?? "(none)")")
        }
        return lines.sorted().joined(separator: "\n")
    }

    func describe(_ item: Item) -> String {
        "\(item.name)\(item.isChecked ? " checked" : "")\(item.isDeleted ? " removed" : "")"
            + (item.quantity.map { " ×\($0)" } ?? "")
    }

    /// Every operation of the list on the server, and how many entries its log has.
    func serverOperations() throws -> (operations: Set<Op>, entries: Int) {
        let store = try SQLiteStore(path: storePath, fsyncEveryCommit: false)
        var operations = Set<Op>()
        var entries = 0
        var cursor: Int64 = 0
        while true {
            let page = try store.page(of: list, after: cursor, limit: 5_000)
            let decoded = try OperationCodec.decode(page.encoded)
            operations.formUnion(decoded)
            entries += decoded.count
            cursor = page.cursor
            if !page.more { break }
        }
        return (operations, entries)
    }
}

/// The simulation's clock (Unix milliseconds), moved only by steps.
final class SimulatedTime: Sendable {
    private let value: Mutex<UInt64>
    init(_ start: UInt64) { value = Mutex(start) }
    var now: UInt64 { value.withLock { $0 } }
    func advance(_ milliseconds: UInt64) { value.withLock { $0 += milliseconds } }
}
