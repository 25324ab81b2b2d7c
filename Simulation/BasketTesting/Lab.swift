public import BasketCore
import BasketModel
public import BasketReplica
import BasketServer
public import BasketTrace
import Foundation
import HTTPServer
import SeededRandom
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A conflict lab in one process: named devices (real replicas on real SQLite files, each with
/// its `SyncEngine`) and a server (the real `BasketService` on a real SQLite store) sharing one
/// list, joined by a simulated network that can partition a device, lose, duplicate and delay
/// requests, and a simulated clock that moves only when told. Everything is deterministic:
/// the same calls give the same run. At the end, ``settle()`` brings every device back and
/// ``verdict()`` says whether they converged, lost nothing and agree with the independent model
/// of the merge rules (`BasketModel`). `basket-sim` is built on it.
///
/// Every edit checks the hybrid clock's promise: the writes it makes beat the writes of the same
/// registers the device had seen (a ``Finding`` is thrown otherwise).
public final class Lab: @unchecked Sendable {
    // `@unchecked Sendable`: a lab is driven one call at a time; what the network closures reach
    // from SyncEngine's tasks (server, faults, delayed requests) is behind `state`.

    /// The devices, in order; the first owns the list and invited the others as editors.
    public let devices: [String]
    /// The shared list.
    public private(set) var list = ListID(raw: ID128(high: 0, low: 0))
    /// What the network and the server did so far.
    public var counters: Counters { state.withLock { $0.counters } }
    /// Records what happens, for a picture of the run (see `BasketTrace`); nil: none.
    public var recorder: TraceRecorder?

    let folder: String
    let time: SimulatedTime
    let state = Mutex(NetworkState())
    /// The faults of the sync in progress and the requests held back.
    let network = FaultyNetwork<HTTPRequest>()
    var members: [Member] = []
    var backups = 0

    struct NetworkState {
        var router: Router?
        var service: BasketService?
        var store: SQLiteStore?
        var partitioned: Set<Int> = []
        var counters = Counters()
    }

    struct Member {
        var replica: Replica
        var engine: SyncEngine
        var transport: HTTPSyncTransport
    }

    /// Something a lab found: an edit that broke the clock's promise, or an unexpected failure.
    public struct Finding: Error, CustomStringConvertible {
        /// What happened.
        public var description: String
        /// A finding that says `description`.
        public init(description: String) { self.description = description }
    }

    /// A lab of `devices` (at least one) whose clocks are off by `clockOffsets` (milliseconds,
    /// by device; none: exact) from the simulated time, which starts at `start` (Unix ms). The
    /// first device makes the list "Shopping" and invites the others; every one syncs it, and
    /// the server is backed up (for ``loseServerData()``).
    public init(
        devices: [String], clockOffsets: [String: Int64] = [:], start: UInt64 = 1_780_000_000_000
    ) async throws {
        precondition(!devices.isEmpty && Set(devices).count == devices.count, "name each device once")
        self.devices = devices
        time = SimulatedTime(start)
        folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("basket-lab-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try openServer()
        try await setUp(clockOffsets)
    }

    deinit { close() }

    /// Stops the server and deletes the lab's files.
    public func close() {
        closeServer()
        members = []
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The simulated time (Unix milliseconds).
    public var now: UInt64 { time.now }

    /// `device`'s replica, to read or write directly.
    public func replica(_ device: String) -> Replica { members[index(device)].replica }

    func index(_ device: String) -> Int {
        guard let index = devices.firstIndex(of: device) else { preconditionFailure("no device \(device)") }
        return index
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
            $0.store = store
        }
    }

    /// Stops the server and closes its store before anything touches the store's files: a
    /// store released instead would close its connections later, on its writer's thread.
    func closeServer() {
        let (service, store) = state.withLock { state in
            defer {
                state.service = nil
                state.router = nil
                state.store = nil
            }
            return (state.service, state.store)
        }
        service?.shutdown()
        store?.close()
    }

    /// Every device signs up; the first makes the list and invites the others. No faults yet.
    func setUp(_ clockOffsets: [String: Int64]) async throws {
        for (index, name) in devices.enumerated() {
            var configuration = Replica.Configuration()
            configuration.synchronous = .off
            let time = self.time
            time.move(index, by: clockOffsets[name] ?? 0)
            configuration.wallClock = { UInt64(max(0, Int64(time.now) + time.offset(of: index))) }
            let replica = try Replica(path: folder + "/device-\(index).sqlite", configuration: configuration)
            let anonymous = transport(index, token: nil)
            let account = "device\(index)"
            try await anonymous.signUp(name: account, password: "password-\(account)")
            let token = try await anonymous.login(name: account, password: "password-\(account)")
            let transport = transport(index, token: token)
            members.append(
                Member(
                    replica: replica, engine: SyncEngine(replica: replica, transport: transport), transport: transport))
        }
        list = try members[0].replica.createList(title: "Shopping").id
        let owner = members[0]
        let list = self.list
        _ = try await owner.engine.sync(list)
        for member in members.dropFirst() {
            let code = try await owner.transport.invite(to: list, role: .editor)
            let remote = try await member.transport.join(code: code.code ?? "")
            _ = try await member.engine.adopt(remote.id, role: remote.role)
        }
        try backupServer()
    }

    func transport(_ device: Int, token: String?) -> HTTPSyncTransport {
        HTTPSyncTransport(baseURL: URL(string: "http://simulated")!, token: token) { [self] request in
            try await send(request, from: device)
        }
    }

    /// The network: a request from `device` meets the faults of the sync in progress.
    func send(_ urlRequest: URLRequest, from device: Int) async throws -> (Data, Int) {
        let request = Self.httpRequest(urlRequest)
        let fate = state.withLock { $0.partitioned.contains(device) } ? NetworkFate.dropRequest : network.draw()
        state.withLock { state in
            switch fate {
            case .deliver: state.counters.delivered += 1
            case .dropRequest: state.counters.lostRequests += 1
            case .dropAnswer: state.counters.lostAnswers += 1
            case .duplicate: state.counters.duplicated += 1
            case .delay: state.counters.delayed += 1
            }
        }
        return try await network.carry(request, fate) { try deliver($0) }
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
}

/// The lab's clock (Unix milliseconds), moved only by ``Lab/advance(milliseconds:)``, and how far
/// each device's clock is off from it (``Lab/moveClock(of:by:)``).
final class SimulatedTime: Sendable {
    private let value: Mutex<(now: UInt64, offsets: [Int: Int64])>
    init(_ start: UInt64) { value = Mutex((start, [:])) }
    var now: UInt64 { value.withLock { $0.now } }
    func advance(_ milliseconds: UInt64) { value.withLock { $0.now += milliseconds } }
    func offset(of device: Int) -> Int64 { value.withLock { $0.offsets[device] ?? 0 } }
    func move(_ device: Int, by milliseconds: Int64) {
        value.withLock { $0.offsets[device, default: 0] += milliseconds }
    }
}
