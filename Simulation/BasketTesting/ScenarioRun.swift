public import BasketCore
public import BasketModel
public import BasketReplica
public import BasketTrace
import Foundation

/// Where a scenario's steps happen: a ``Lab`` in this process, or real processes (`basket-lab
/// replay`: a `basket-server` child and the CLI's commands). ``ScenarioRun`` walks the steps,
/// checks the expectations and the model; a world only does what each step says.
public protocol ScenarioWorld: AnyObject {
    /// Records what happens, for a picture of the run; nil: none.
    var recorder: TraceRecorder? { get set }
    /// `device` makes `edit`: writes made after what it had seen (the hybrid clock's promise,
    /// checked), drawn on the trace.
    /// - Throws: ``Lab/Finding`` when the edit fails or breaks the promise.
    func perform(_ edit: Lab.Edit, on device: String) async throws
    /// `device` tries `edit`, which must be refused and change nothing.
    /// - Throws: ``Lab/Finding`` when it was made, or changed anything.
    func refuse(_ edit: Lab.Edit, on device: String) async throws
    /// `device`'s account gives `member`'s another role on the list.
    func setRole(_ role: Role, of member: String, by device: String) async throws
    /// `device`'s account removes `member`'s from the list.
    func removeMember(_ member: String, by device: String) async throws
    /// `device` syncs, then drops the changes the server refuses (a viewer's, a former member's).
    func discardRefused(_ device: String) async throws
    /// `forger` pushes, with its own token, `victim`'s newest write with another value.
    func forge(_ victim: String, by forger: String) async throws
    /// `device` loses the network (false) or gets it back (true).
    func setOnline(_ device: String, _ online: Bool) async throws
    /// One sync of every list of `device`, as `basket sync` does it, its requests meeting the
    /// faults drawn from `faults` (0: none; then a server that cannot be reached fails the run);
    /// returns whether it went through.
    @discardableResult func syncLists(of device: String, faults: UInt64) async throws -> Bool
    /// `device`'s clock moves by `milliseconds` (either way).
    func moveClock(of device: String, by milliseconds: Int64) async throws
    /// Every clock moves on (only with `time: frozen`).
    func moveTime(by milliseconds: Int64) async throws
    /// A step of a scenario in real time begins: a world whose clocks stand still moves them on,
    /// one on the real clock does nothing.
    func nextStepInRealTime() async throws
    /// The requests the network held back reach the server, in an order drawn from `order`.
    func deliverDelayed(order: UInt64) async throws
    /// The server restarts, its store kept.
    func restartServer() async throws
    /// The server's store is backed up.
    func backupServer() async throws
    /// The server goes back to its last backup.
    func loseServerData() async throws
    /// What `device` shows.
    func shown(_ device: String) async throws -> ReferenceModel.List
    /// Where `device` shows another list than the model says for the writes it holds.
    func disagreement(_ device: String) async throws -> ReferenceModel.Disagreement?
    /// Adds each device's replica and final list to ``recorder``.
    func finishTrace() async throws
}

/// One scenario walked through a ``ScenarioWorld``: each step done, each expectation checked,
/// and at the end every device compared with the independent model of the merge rules.
public struct ScenarioRun {
    /// A step that did not go as the scenario says.
    public struct Failure: Error, CustomStringConvertible {
        /// The scenario's line.
        public var line: Int
        /// What went wrong, and what each device showed.
        public var message: String
        /// A failure at `line`.
        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
        public var description: String { "line \(line): \(message)" }
    }

    /// The scenario.
    public let scenario: Scenario

    /// A run of `scenario`.
    public init(_ scenario: Scenario) { self.scenario = scenario }

    /// The clocks the devices start with: the `clock` lines at the top of a scenario in frozen
    /// time (they hold before the devices sign up); the steps left after them.
    public var start: (clocks: [String: Int64], steps: ArraySlice<(line: Int, step: Scenario.Step)>) {
        var clocks: [String: Int64] = [:]
        var steps = scenario.steps[...]
        guard scenario.frozenTime else { return (clocks, steps) }
        while case .device(let device, .clock(let delta))? = steps.first?.step {
            clocks[device, default: 0] += delta
            steps = steps.dropFirst()
        }
        return (clocks, steps)
    }

    /// Walks the steps after ``start`` in `world`, whose devices were set up with its clocks.
    /// - Throws: ``Failure`` at the first step that does not go as written.
    public func walk(in world: any ScenarioWorld) async throws {
        var offline: Set<String> = []
        if let recorder = world.recorder {
            // The clocks the devices started with, drawn as the scenario's first steps.
            for (line, step) in scenario.steps.prefix(scenario.steps.count - start.steps.count) {
                guard case .device(let device, .clock(let delta)) = step else { continue }
                recorder.begin(scenario.texts[line] ?? "")
                recorder.record(.clockMoved(device: device, milliseconds: delta))
            }
        }
        do {
            for (line, step) in start.steps {
                if !scenario.frozenTime { try await world.nextStepInRealTime() }
                world.recorder?.begin(scenario.texts[line] ?? "")
                do {
                    try await perform(step, in: world, offline: &offline, line: line)
                } catch let finding as Lab.Finding {
                    throw Failure(line: line, message: finding.description)
                }
            }
            world.recorder?.begin("(the end: every device against the model)")
            try await check(scenario.devices, .model, in: world, line: (scenario.steps.last?.line ?? 0) + 1)
        } catch {
            world.recorder?.failed()
            throw error
        }
    }

    func perform(_ step: Scenario.Step, in world: any ScenarioWorld, offline: inout Set<String>, line: Int)
        async throws
    {
        switch step {
        case .device(let device, let action):
            switch action {
            case .edit(let edit): try await world.perform(edit, on: device)
            case .maybe(let edit):
                if edit.applies(to: try await world.shown(device)) { try await world.perform(edit, on: device) }
            case .refused(let edit): try await world.refuse(edit, on: device)
            case .setRole(let member, let role): try await world.setRole(role, of: member, by: device)
            case .removeMember(let member): try await world.removeMember(member, by: device)
            case .discardRefused: try await world.discardRefused(device)
            case .forge(let victim): try await world.forge(victim, by: device)
            case .offline:
                offline.insert(device)
                try await world.setOnline(device, false)
            case .online:
                offline.remove(device)
                try await world.setOnline(device, true)
            case .sync: if !offline.contains(device) { try await world.syncLists(of: device, faults: 0) }
            case .syncWithFaults(let seed):
                if !offline.contains(device) { try await world.syncLists(of: device, faults: seed) }
            case .clock(let delta): try await world.moveClock(of: device, by: delta)
            }
        case .syncAll:
            // Twice round: what the last device pushed reaches the first.
            for _ in 0..<2 {
                for device in scenario.devices where !offline.contains(device) {
                    try await world.syncLists(of: device, faults: 0)
                }
            }
        case .serverRestart: try await world.restartServer()
        case .serverBackup: try await world.backupServer()
        case .serverLoseData: try await world.loseServerData()
        case .advanceTime(let milliseconds): try await world.moveTime(by: milliseconds)
        case .deliverDelayed(let order): try await world.deliverDelayed(order: order)
        case .expect(let who, let condition):
            try await check(who == "all" ? scenario.devices : [who], condition, in: world, line: line)
        }
    }

    /// What one device shows, as an expectation reads it: its items by name, and the title.
    struct Shown: Equatable {
        var items: [ReferenceModel.Item]
        var title: String
        var list: ReferenceModel.List

        init(_ list: ReferenceModel.List) {
            items = list.items.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
            title = list.title ?? "?"
            self.list = list
        }

        /// The live shop named `name` (by key), with its id.
        func shop(_ name: String) -> (ItemID, ReferenceModel.Shop)? {
            list.shops.first { !$0.value.removed && ItemKey.normalize($0.value.name) == ItemKey.normalize(name) }
                .map { ($0.key, $0.value) }
        }

        /// The order `shop` is walked in.
        func order(_ shop: ReferenceModel.Shop) -> [String] {
            ShopOrder.order(
                base: shop.order.isEmpty ? list.aisles : shop.order, pinned: shop.pinned,
                learned: ShopOrder.Learned(text: shop.learned))
        }

        func item(_ name: String) -> ReferenceModel.Item? {
            let key = ItemKey.normalize(name)
            return items.first { ItemKey.normalize($0.name) == key }
        }

        var text: String {
            let rows = items.map { "[\($0.checked ? "x" : " ")] \($0.name)" + ($0.quantity.map { " ×\($0)" } ?? "") }
            return "\"\(title)\": " + (rows.isEmpty ? "(empty)" : rows.joined(separator: ", "))
        }

        /// What is wrong with this device for `condition`, nil when it holds (`first`: the first
        /// device's, for `same`).
        func problem(_ condition: Scenario.Condition, first: (String, Shown)) -> String? {
            switch condition {
            case .checked(let name, let checked):
                item(name).map { item in
                    item.name != name
                        ? "shows \"\(item.name)\", not \"\(name)\""
                        : item.checked == checked ? nil : "\(name) is \(item.checked ? "checked" : "unchecked")"
                } ?? "has no \(name)"
            case .quantity(let name, let quantity):
                item(name).map { item in
                    item.quantity == quantity ? nil : "\(name) has quantity \(item.quantity ?? "none")"
                } ?? "has no \(name)"
            case .absent(let name): item(name).map { "still shows \"\($0.name)\"" }
            case .present(let name):
                item(name).map { item in item.name == name ? nil : "shows \"\(item.name)\", not \"\(name)\"" }
                    ?? "has no \(name)"
            case .itemCount(let count): items.count == count ? nil : "shows \(items.count) items"
            case .title(let title): self.title == title ? nil : "has the title \"\(self.title)\""
            case .shops(let names):
                list.shops.values.filter { !$0.removed }.map(\.name).sorted() == names.sorted()
                    ? nil : "has the shops \(list.shops.values.filter { !$0.removed }.map(\.name).sorted())"
            case .shopOrder(let name, let aisles):
                shop(name).map { order($0.1) == aisles ? nil : "walks \(name) in the order \(order($0.1))" }
                    ?? "has no shop \(name)"
            case .trips(let name, let count):
                shop(name).map { shop in
                    let trips = ShopOrder.Learned(text: shop.1.learned)?.trips ?? 0
                    return trips == count ? nil : "learned \(name)'s order from \(trips) trips"
                } ?? "has no shop \(name)"
            case .shownAt(let name, let shopName, let shown):
                item(name).map { item in
                    shop(shopName).map { id, _ in
                        let live = Set(list.shops.filter { !$0.value.removed }.keys)
                        let isShown = ShopMarks.isShown(marks: ShopMarks.parse(item.shops), at: id, shops: live)
                        return isShown == shown ? nil : "\(shown ? "hides" : "shows") \(name) at \(shopName)"
                    } ?? "has no shop \(shopName)"
                } ?? "has no \(name)"
            case .same: self == first.1 ? nil : "differs from \(first.0)"
            case .model: nil
            }
        }
    }

    func check(_ devices: [String], _ condition: Scenario.Condition, in world: any ScenarioWorld, line: Int)
        async throws
    {
        if condition == .model {
            for device in devices {
                if let disagreement = try await world.disagreement(device) {
                    throw Failure(line: line, message: "\(device) disagrees with the model: \(disagreement)")
                }
            }
            return
        }
        var states: [(String, Shown)] = []
        for device in devices { states.append((device, Shown(try await world.shown(device)))) }
        let wrong = states.compactMap { device, shown in
            shown.problem(condition, first: states[0]).map { "\(device) \($0)" }
        }
        guard !wrong.isEmpty else { return }
        var message = "expectation not met: " + wrong.joined(separator: "; ") + "\nwhat each device shows:"
        for (device, shown) in states { message += "\n  \(device): \(shown.text)" }
        throw Failure(line: line, message: message)
    }
}

/// What both worlds check the same way: an edit against the hybrid clock's promise, and a
/// replica against the model.
extension ScenarioRun {
    /// `device` went from holding `seen` to holding `now` by one edit: its new writes are drawn on
    /// `recorder`, and each must beat what it had seen of the same register.
    /// - Throws: ``Lab/Finding`` when one does not.
    public static func observeEdit(_ device: String, seen: [Op], now: [Op], recorder: TraceRecorder?) throws {
        if let recorder {
            let before = Set(seen)
            let writes = now.filter { !before.contains($0) }
            if !writes.isEmpty { recorder.record(.wrote(device: device, writes: writes, seen: seen)) }
        }
        if let violation = ReferenceModel.causalityViolation(seen: seen, now: now) {
            throw Lab.Finding(description: "\(device): \(violation)")
        }
    }

    /// What `replica` shows of `list`: its title and items (removed ones left out).
    public static func shown(_ replica: Replica, list: ListID) throws -> ReferenceModel.List {
        let info = try replica.lists().first { $0.id == list }
        var shops: [ItemID: ReferenceModel.Shop] = [:]
        for shop in try replica.shops(in: list, removed: true) {
            shops[shop.id] = ReferenceModel.Shop(
                name: shop.name, removed: shop.isRemoved, order: shop.order, pinned: shop.pinned,
                learned: shop.learned?.text)
        }
        return ReferenceModel.List(
            title: info?.title, shown: try replica.items(in: list, filter: .all), aisles: info?.aisles ?? [],
            shops: shops)
    }

    /// Where `replica` shows another state of `list` than the model says for the writes it holds,
    /// shrunk to the smallest set of them that still shows it; each replay merges into a
    /// `fresh()` replica.
    public static func disagreement(
        of replica: Replica, in list: ListID, fresh: () throws -> Replica
    ) throws -> ReferenceModel.Disagreement? {
        try ReferenceModel.disagreement(
            in: list, shown: try shown(replica, list: list), operations: try replica.operations(in: list)
        ) { ops in
            let replay = try fresh()
            _ = try replay.merge(ops)
            return try shown(replay, list: list)
        }
    }
}
