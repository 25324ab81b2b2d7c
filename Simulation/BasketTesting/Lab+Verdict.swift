public import BasketCore
public import BasketModel
import BasketReplica
import BasketServer
import BasketTrace
import Foundation

/// What a lab checks at the end of a run.
extension Lab {
    /// What the network and the server did to a run.
    public struct Counters: Sendable {
        /// Requests the network delivered.
        public var delivered = 0
        /// Requests lost on the way.
        public var lostRequests = 0
        /// Answers lost on the way back.
        public var lostAnswers = 0
        /// Requests delivered twice.
        public var duplicated = 0
        /// Requests held back and delivered out of order.
        public var delayed = 0
        /// Server restarts.
        public var serverRestarts = 0
        /// Times the server lost data.
        public var serverDataLosses = 0
        /// Syncs that re-stamped writes after the server refused the device's clock.
        public var clockCorrections = 0
        /// Syncs that found a new epoch (after data loss) and pushed everything again.
        public var epochChanges = 0

        /// Nothing happened yet.
        public init() {}

        /// Adds another run's counters.
        public mutating func add(_ other: Counters) {
            delivered += other.delivered
            lostRequests += other.lostRequests
            lostAnswers += other.lostAnswers
            duplicated += other.duplicated
            delayed += other.delayed
            serverRestarts += other.serverRestarts
            serverDataLosses += other.serverDataLosses
            clockCorrections += other.clockCorrections
            epochChanges += other.epochChanges
        }

        /// The counters as one line.
        public var text: String {
            "requests: \(delivered) delivered, \(lostRequests) lost, \(lostAnswers) answers lost, "
                + "\(duplicated) duplicated, \(delayed) delayed and reordered; server: \(serverRestarts) restarts, "
                + "\(serverDataLosses) data losses; \(epochChanges) re-pushes after a new epoch, "
                + "\(clockCorrections) clock corrections"
        }
    }

    /// What `device` shows: its list's title and items (removed ones left out).
    public func shown(_ device: String) throws -> ReferenceModel.List {
        try shown(replica(device))
    }

    func shown(_ replica: Replica) throws -> ReferenceModel.List {
        try ScenarioRun.shown(replica, list: list)
    }

    /// Adds each device's replica id and final list to ``recorder`` (nothing without one).
    public func finishTrace() throws {
        guard let recorder else { return }
        for device in devices {
            recorder.device(device, isReplica: replica(device).replicaID)
            recorder.finish(device, showing: try shown(device))
        }
    }

    /// What a run broke, the first thing ``verdict()`` found; its description says it in words.
    public enum Verdict: Sendable, CustomStringConvertible {
        /// A device still had operations to send after every round of syncs.
        case unsynced(device: String, operations: Int)
        /// A device shows another list than the first one (`difference`: item by item).
        case differs(device: String, from: String, difference: String)
        /// The server's log holds an operation more than once.
        case duplicates(count: Int)
        /// The server lacks operations a device made.
        case serverMissing(device: String, count: Int, example: Op)
        /// A device lacks operations the server has.
        case deviceMissing(device: String, count: Int, example: Op)
        /// A device shows another list than the independent model says for its writes.
        case disagreesWithModel(device: String, ReferenceModel.Disagreement)
        /// The server's operations, merged into a new replica, give another list than the devices.
        case serverStateDiffers(difference: String)

        public var description: String {
            switch self {
            case .unsynced(let device, let operations):
                "\(device) still has \(operations) unsynced operations after 8 rounds"
            case .differs(let device, let first, let difference): "\(device) differs from \(first):\n" + difference
            case .duplicates(let count): "the server's log holds \(count) duplicate operations"
            case .serverMissing(let device, let count, let example):
                "the server is missing \(count) operations of \(device), e.g. \(example)"
            case .deviceMissing(let device, let count, let example):
                "\(device) is missing \(count) operations of the server, e.g. \(example)"
            case .disagreesWithModel(let device, let disagreement):
                "\(device) disagrees with the model: \(disagreement)"
            case .serverStateDiffers(let difference):
                "the server's operations give another state than the devices:\n" + difference
            }
        }
    }

    /// Settles the run (``settle()``) and checks it: every device shows the same list; the
    /// server holds every operation any device made, once, and every device holds every one it
    /// has; every device shows what the independent model says for the writes it holds; and the
    /// server's log, applied to a new replica, gives the same list. Nil when all of it holds,
    /// else what broke first.
    public func verdict() async throws -> Verdict? {
        if let unsynced = try await settle() { return unsynced }
        let states = try members.map { try snapshot($0.replica) }
        for (index, state) in states.enumerated().dropFirst() where state != states[0] {
            return .differs(device: devices[index], from: devices[0], difference: difference(states[0], state))
        }
        let (serverOperations, entries) = try self.serverOperations()
        if entries != serverOperations.count { return .duplicates(count: entries - serverOperations.count) }
        for (index, member) in members.enumerated() {
            let local = Set(try member.replica.operations(in: list))
            let missing = local.subtracting(serverOperations)
            if let first = missing.first {
                return .serverMissing(device: devices[index], count: missing.count, example: first)
            }
            let unseen = serverOperations.subtracting(local)
            if let first = unseen.first {
                return .deviceMissing(device: devices[index], count: unseen.count, example: first)
            }
        }
        // A rule wrong the same way on every device converges: only the model shows it.
        if let (device, disagreement) = try disagreement() {
            return .disagreesWithModel(device: device, disagreement)
        }
        let rebuilt = try freshReplica(named: "rebuilt")
        _ = try rebuilt.merge(Array(serverOperations))
        let fromServer = try snapshot(rebuilt)
        if fromServer != states[0] { return .serverStateDiffers(difference: difference(states[0], fromServer)) }
        return nil
    }

    /// The first device that shows another list than the model says for the writes it holds,
    /// with the smallest set of those writes that still shows it; nil when every one agrees.
    public func disagreement() throws -> (device: String, disagreement: ReferenceModel.Disagreement)? {
        for (index, member) in members.enumerated() {
            if let found = try disagreement(member.replica) { return (devices[index], found) }
        }
        return nil
    }

    func disagreement(_ replica: Replica) throws -> ReferenceModel.Disagreement? {
        try ScenarioRun.disagreement(of: replica, in: list) { try freshReplica(named: "replay-\(UUID().uuidString)") }
    }

    /// A new replica in the lab's folder whose clock is ahead of every write in the run.
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
        defer { store.close() }
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
