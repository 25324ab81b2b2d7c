public import BasketCore
public import BasketModel

/// What happened in a run of a scenario (or of the simulator), step by step: each device's
/// writes, pushes and pulls, partitions, server restarts and losses, and what every device shows
/// at the end. `TraceRecorder` builds it as the run goes; `render()` draws it as one HTML file.
public struct Trace: Sendable {
    /// The run's name: the scenario file, or "basket-sim seed 7".
    public var title: String
    /// The devices, in order (each gets a lane; the server has one below them).
    public var devices: [String]
    /// The steps, in order: one column each.
    public var steps: [Step] = []
    /// Each device's list at the end.
    public var finalLists: [String: ReferenceModel.List] = [:]
    /// Each device's replica id (to tell whose write is whose).
    public var replicas: [String: ReplicaID] = [:]
    /// Item names, as last written in the run (for the marks).
    public var names: [ItemID: String] = [:]

    /// A trace of a run of `devices`.
    public init(title: String, devices: [String]) {
        self.title = title
        self.devices = devices
    }

    /// One step of the run: its line, and what it did.
    public struct Step: Sendable {
        /// The step as written ("alice: check milk").
        public var label: String
        /// What happened in it.
        public var events: [Event] = []
        /// Whether it is an expectation that failed, or where the run stopped.
        public var failed = false
    }

    /// Something that happened in a step.
    public enum Event: Sendable {
        /// A device's writes from an edit, and for each the writes of the same register it had
        /// seen before making it.
        case wrote(device: String, writes: [Op], seen: [Op])
        /// A device's sync: how many of its writes the server acknowledged, and the writes of
        /// others it received (none, when the server was not reached: `reached` false).
        case synced(device: String, pushed: Int, pulled: [Op], reached: Bool)
        /// A device lost or got back the network.
        case offline(device: String), online(device: String)
        /// The server restarted, backed up, or lost what it stored since its last backup.
        case serverRestarted, serverBackedUp, serverLostData
        /// Every clock moved on (simulated time), or one device's clock moved.
        case timeMoved(milliseconds: Int64), clockMoved(device: String, milliseconds: Int64)
    }

    /// A register that saw concurrent writes (neither made after its device had seen the other),
    /// with the writes, the winner and why it won.
    public struct Contest: Sendable {
        /// The item (`ItemID.list` for the list's fields).
        public var item: ItemID
        /// Its name (the last name written), nil for the list.
        public var name: String?
        /// The register's field.
        public var field: Field
        /// Every write of the register, the winner first.
        public var writes: [Op]
        /// Why the winner beat the runner-up: later timestamp, replica tie-break or value tie-break.
        public var reason: String
    }

    /// Every register that saw concurrent writes, by item name and field.
    public var contests: [Contest] {
        var writes: [Key: [Op]] = [:]
        var seenBefore: [Op: Set<Op>] = [:]
        var names: [ItemID: String] = [:]
        for step in steps {
            for case .wrote(_, let ops, let seen) in step.events {
                for op in ops {
                    writes[Key(item: op.item, field: op.field), default: []].append(op)
                    seenBefore[op] = Set(seen.filter { $0.item == op.item && $0.field == op.field })
                    if op.field == .name, let name = op.value.textValue { names[op.item] = name }
                }
            }
        }
        var contests: [Contest] = []
        for (key, ops) in writes where ops.count > 1 {
            let concurrent = ops.indices.contains { i in
                ops.indices.contains { j in
                    i < j && ops[i].value != ops[j].value && !(seenBefore[ops[j]]?.contains(ops[i]) ?? false)
                        && !(seenBefore[ops[i]]?.contains(ops[j]) ?? false)
                }
            }
            guard concurrent else { continue }
            let ordered = ops.sorted { ReferenceModel.wins($0, over: $1) }
            contests.append(
                Contest(
                    item: key.item, name: names[key.item], field: key.field, writes: ordered,
                    reason: Self.reason(ordered[0], over: ordered[1])))
        }
        return contests.sorted { ($0.name ?? "", $0.field.rawValue) < ($1.name ?? "", $1.field.rawValue) }
    }

    /// Why `winner` beats `loser` of the same register, in the words of docs/conflicts.md.
    public static func reason(_ winner: Op, over loser: Op) -> String {
        if winner.version.timestamp != loser.version.timestamp { return "later timestamp" }
        if winner.version.replica != loser.version.replica { return "same timestamp: the larger replica id wins" }
        return "same timestamp and replica: the value order (none, false, true, text by bytes)"
    }

    struct Key: Hashable {
        var item: ItemID
        var field: Field
    }
}
