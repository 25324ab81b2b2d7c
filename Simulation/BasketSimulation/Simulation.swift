import BasketCore
import BasketReplica
public import BasketTesting
public import BasketTrace
import Foundation
import SeededRandom

/// Deterministic simulation: in one process, a few replicas (real SQLite files) and a server
/// (the real `BasketService` on a real `SQLiteStore`) exchange operations through a simulated
/// network that partitions, drops requests and answers, duplicates, delays and reorders them;
/// device clocks are off by up to an hour; the server restarts and loses data (restored from
/// an older backup). After every run all replicas and the server must hold the same state and
/// every operation any device made must be on the server. A run is a pure function of its seed;
/// a failing one is shrunk to the shortest list of steps that still fails.
public enum Simulation {
    /// A run: the devices' clock offsets and the steps, all drawn from the seed.
    public struct Plan: Sendable, CustomStringConvertible {
        /// The seed the plan was made from (it replays the run).
        public var seed: UInt64
        /// Per device, how far its wall clock is off (milliseconds).
        public var clockOffsets: [Int64]
        /// What happens, in order.
        public var steps: [Step]

        public var description: String {
            var lines = [
                "seed \(seed): \(clockOffsets.count) devices, clocks off by "
                    + clockOffsets.map { "\($0 / 1000) s" }.joined(separator: ", ")
            ]
            for (index, step) in steps.enumerated() { lines.append("  \(index + 1). \(step)") }
            return lines.joined(separator: "\n")
        }
    }

    /// An edit a device makes to the shared list.
    public typealias Action = Lab.Edit

    /// One step of a plan.
    public enum Step: Sendable, Equatable, CustomStringConvertible {
        /// A device edits the list.
        case act(device: Int, Action)
        /// A sync whose requests meet the faults drawn from `faults` (0: a clean network).
        case sync(device: Int, faults: UInt64)
        /// Every clock moves on.
        case advance(milliseconds: UInt64)
        /// A device loses the network.
        case partition(device: Int)
        /// A device gets the network back.
        case heal(device: Int)
        /// Delayed requests reach the server, in a shuffled order; their answers are lost.
        case deliverDelayed(order: UInt64)
        /// The server restarts (its store kept).
        case restartServer
        /// The server's store is backed up (for a later loss).
        case backupServer
        /// The server loses what it stored since the last backup.
        case loseServerData

        public var description: String {
            switch self {
            case .act(let device, let action): "device \(device): \(action)"
            case .sync(let device, let faults): "device \(device): sync" + (faults == 0 ? "" : " (faults \(faults))")
            case .advance(let ms): "time +\(ms) ms"
            case .partition(let device): "device \(device): partitioned"
            case .heal(let device): "device \(device): reconnected"
            case .deliverDelayed: "delayed requests delivered"
            case .restartServer: "server restarts"
            case .backupServer: "server backup"
            case .loseServerData: "server loses data (restored from the last backup)"
            }
        }
    }

    /// The plan as a scenario file (docs/conflicts.md) that `basket-lab run` replays in the lab
    /// and `basket-lab replay` against a real server: the same devices, clock offsets, edits,
    /// faulty syncs, delays, restarts and losses under simulated time, then the simulation's ending (every device back
    /// online, the delayed requests delivered, syncs until settled) and the comparison with the
    /// model. `failure` goes in its opening comment.
    public static func scenario(_ plan: Plan, failure: String?) -> String {
        func name(_ device: Int) -> String { "device\(device)" }
        func line(_ action: Action) -> String {
            switch action {
            case .add(let item): "add \(item)"
            case .check(let item): "maybe check \(item)"
            case .uncheck(let item): "maybe uncheck \(item)"
            case .toggle(let item): "maybe toggle \(item)"
            case .remove(let item): "maybe remove \(item)"
            case .rename(let old, let new): "maybe rename \(old) to \(new)"
            case .quantity(let item, let quantity): "maybe quantity \(item) = \(quantity)"
            case .title(let title): "title \(title)"
            case .aisle(let item, let aisle): "maybe aisle \(item) = \(aisle)"
            case .addShop(let shop): "maybe shop add \(shop)"
            case .shopOrder(let shop, let aisles): "maybe shop \(shop) order \(aisles.joined(separator: ", "))"
            case .pin(let shop, let aisle): "maybe shop \(shop) pin \(aisle)"
            case .mark(let item, let shops):
                "maybe mark \(item) for \(shops.isEmpty ? "anywhere" : shops.joined(separator: ", "))"
            case .trip(let shop, let items): "maybe trip \(shop): \(items.joined(separator: ", "))"
            case .dismiss(let item): "maybe dismiss \(item)"
            }
        }
        var lines = ["# basket-sim --seed \(plan.seed), shrunk to \(plan.steps.count) steps."]
        if let failure {
            lines += failure.split(separator: "\n").prefix(12).map { "# " + $0 }
        }
        lines.append("time: frozen")
        for (device, offset) in plan.clockOffsets.enumerated() {
            lines.append("\(name(device)): clock \(offset < 0 ? "-" : "+")\(offset.magnitude)ms")
        }
        for step in plan.steps {
            switch step {
            case .act(let device, let action): lines.append("\(name(device)): \(line(action))")
            case .sync(let device, let faults):
                lines.append("\(name(device)): sync" + (faults == 0 ? "" : " (faults \(faults))"))
            case .advance(let milliseconds): lines.append("time +\(milliseconds)ms")
            case .partition(let device): lines.append("\(name(device)): offline")
            case .heal(let device): lines.append("\(name(device)): online")
            case .deliverDelayed(let order): lines.append("network: deliver delayed (order \(order))")
            case .restartServer: lines.append("server: restart")
            case .backupServer: lines.append("server: backup")
            case .loseServerData: lines.append("server: lose data")
            }
        }
        lines.append("# The simulation's ending: every device online, delayed requests delivered, syncs until settled.")
        lines += plan.clockOffsets.indices.map { "\(name($0)): online" }
        lines.append("network: deliver delayed (order 1)")
        lines += Array(repeating: "sync all", count: 4)
        lines += ["expect all: same", "expect all: as the model says"]
        return lines.joined(separator: "\n") + "\n"
    }

    static let names = ["Milk", "milk", "Bread", "Eggs", "Crème fraîche", "creme fraiche", "Tea", "Oat milk", "Rice"]

    /// The plan of seed `seed`.
    public static func plan(seed: UInt64, steps count: Int = 60) -> Plan {
        var random = SplitMix64(seed: seed)
        let devices = 2 + random.below(3)
        let offsets = (0..<devices).map { _ -> Int64 in
            switch random.below(4) {
            case 0: 0
            case 1: Int64(random.below(10 * 60_000)) - 5 * 60_000  // within the tolerance
            default: Int64(random.below(2 * 3_600_000)) - 3_600_000  // up to an hour either way
            }
        }
        var steps: [Step] = []
        // Shops, marks, trips and dismissals come from a stream of their own: the plans of the
        // other writes stay what they were before shops existed.
        var shopRandom = SplitMix64(seed: seed ^ 0x5A0F_5A0F_5A0F_5A0F)
        for _ in 0..<count {
            if shopRandom.below(100) < 10 {
                let edit = shopEdit(&shopRandom)
                // Only the owner (the first device) pins.
                let device = shopRandom.below(devices)
                if case .pin = edit {
                    steps.append(.act(device: 0, edit))
                } else {
                    steps.append(.act(device: device, edit))
                }
            }
            let device = random.below(devices)
            let roll = random.below(100)
            func name() -> String { names[random.below(names.count)] }
            switch roll {
            case 0..<12: steps.append(.act(device: device, .add(name())))
            case 12..<20: steps.append(.act(device: device, .check(name())))
            case 20..<25: steps.append(.act(device: device, .uncheck(name())))
            case 25..<29: steps.append(.act(device: device, .toggle(name())))
            case 29..<35: steps.append(.act(device: device, .remove(name())))
            case 35..<39: steps.append(.act(device: device, .rename(name(), name())))
            case 39..<43: steps.append(.act(device: device, .quantity(name(), "\(1 + random.below(5))")))
            case 43..<45:
                steps.append(.act(device: device, .title(["Groceries", "Weekend", "Shopping"][random.below(3)])))
            case 45..<70: steps.append(.sync(device: device, faults: random.below(3) == 0 ? 0 : random.next() | 1))
            case 70..<80:
                steps.append(.advance(milliseconds: UInt64(random.below(random.below(10) == 0 ? 3_600_000 : 5_000))))
            case 80..<84: steps.append(.partition(device: device))
            case 84..<88: steps.append(.heal(device: device))
            case 88..<92: steps.append(.deliverDelayed(order: random.next()))
            case 92..<95: steps.append(.restartServer)
            case 95..<98: steps.append(.backupServer)
            default: steps.append(.loseServerData)
            }
        }
        return Plan(seed: seed, clockOffsets: offsets, steps: steps)
    }

    static let shops = ["Lidl", "lidl", "Rewe"]
    static let aisles = ["Dairy", "Bakery", "Produce", "Frozen"]

    /// A write of shops and usuals: a shop added, an aisle, a mark, a trip, an order, a pin, a
    /// dismissal.
    static func shopEdit(_ random: inout SplitMix64) -> Action {
        func pick(_ names: [String]) -> String { names[random.below(names.count)] }
        func some(_ names: [String], _ most: Int) -> [String] {
            (0..<(1 + random.below(most))).map { _ in pick(names) }
        }
        switch random.below(100) {
        case 0..<20: return .addShop(pick(shops))
        case 20..<38: return .aisle(pick(names), pick(aisles))
        case 38..<52: return .mark(pick(names), random.below(4) == 0 ? [] : some(["Lidl", "Rewe"], 2))
        case 52..<74: return .trip(pick(["Lidl", "Rewe"]), some(names, 4))
        case 74..<86: return .shopOrder(pick(["Lidl", "Rewe"]), some(aisles, 4))
        case 86..<92: return .pin(pick(["Lidl", "Rewe"]), pick(aisles))
        default: return .dismiss(pick(names))
        }
    }

    /// What the network and the server did to the runs.
    public typealias Counters = Lab.Counters

    /// Runs a plan; `failure` is nil when every invariant held, else what broke.
    public static func run(_ plan: Plan) -> (failure: String?, counters: Counters) {
        do {
            // On the calling thread (never one of Swift concurrency's, see `runManyOffThePool`).
            return try runBlocking {
                let lab = try await Lab(devices: devices(plan), clockOffsets: offsets(plan))
                defer { lab.close() }
                let failure = try await play(plan, in: lab)
                return (failure, lab.counters)
            }
        } catch {
            return ("the run failed: \(error)", Counters())
        }
    }

    /// Runs a plan and draws it: what `run` finds, and the trace of the run.
    public static func trace(_ plan: Plan) -> (failure: String?, trace: Trace?) {
        do {
            return try runBlocking {
                let lab = try await Lab(devices: devices(plan), clockOffsets: offsets(plan))
                defer { lab.close() }
                let recorder = TraceRecorder(title: "basket-sim --seed \(plan.seed)", devices: lab.devices)
                lab.recorder = recorder
                let failure = try await play(plan, in: lab)
                try lab.finishTrace()
                return (failure, recorder.trace)
            }
        } catch {
            return ("the run failed: \(error)", nil)
        }
    }

    /// The plan's devices: device0, device1, …
    static func devices(_ plan: Plan) -> [String] { plan.clockOffsets.indices.map { "device\($0)" } }

    static func offsets(_ plan: Plan) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: plan.clockOffsets.enumerated().map { ("device\($0.offset)", $0.element) })
    }

    /// The plan's steps in `lab`, then its verdict; nil when every invariant held.
    static func play(_ plan: Plan, in lab: Lab) async throws -> String? {
        for (index, step) in plan.steps.enumerated() {
            lab.recorder?.begin("\(step)")
            do {
                try await perform(step, in: lab)
            } catch let finding as Lab.Finding {
                lab.recorder?.failed()
                return "step \(index + 1) (\(step)): \(finding)"
            }
        }
        lab.recorder?.begin("(the end: every device online, delayed requests delivered, syncs until settled)")
        do {
            guard let failure = try await lab.verdict() else { return nil }
            lab.recorder?.failed()
            return "\(failure)"
        } catch let finding as Lab.Finding {
            lab.recorder?.failed()
            return "while converging: \(finding)"
        }
    }

    static func perform(_ step: Step, in lab: Lab) async throws {
        func name(_ device: Int) -> String { lab.devices[device] }
        switch step {
        case .act(let device, let action): try lab.edit(name(device), action)
        case .sync(let device, let faults): try await lab.sync(name(device), faults: faults)
        case .advance(let milliseconds): lab.advance(milliseconds: milliseconds)
        case .partition(let device): lab.partition(name(device))
        case .heal(let device): lab.heal(name(device))
        case .deliverDelayed(let order): lab.deliverDelayed(order: order)
        case .restartServer: try lab.restartServer()
        case .backupServer: try lab.backupServer()
        case .loseServerData: try lab.loseServerData()
        }
    }

    /// The outcome of many runs.
    public struct Report: Sendable {
        /// Runs made.
        public var runs: Int
        /// Steps per run.
        public var steps: Int
        /// The first failing plan, shrunk, and what broke.
        public var failure: (plan: Plan, message: String)?
        /// Wall-clock seconds for all of them.
        public var seconds: Double
        /// The faults of every run, added up.
        public var counters: Counters

        /// The report as `basket-sim` prints it.
        public var text: String {
            guard let failure else {
                return "\(runs) runs, \(steps) steps, all converged, no operation lost or duplicated ("
                    + String(format: "%.1f", seconds) + " s)\n" + counters.text
            }
            return "FAILED at seed \(failure.plan.seed): \(failure.message)\nshortest failing run "
                + "(replay: basket-sim --seed \(failure.plan.seed) --runs 1):\n\(failure.plan)"
        }
    }

    /// ``runMany(from:runs:steps:progress:)`` on a thread of its own, for async callers: a run
    /// waits for SyncEngine's tasks, which must not wait behind it on the cooperative pool.
    public static func runManyOffThePool(from seed: UInt64, runs: Int, steps: Int = 60) async -> Report {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: runMany(from: seed, runs: runs, steps: steps)) }.start()
        }
    }

    /// Runs seeds `from`, `from + 1`, … and stops at the first failure, which it shrinks. Blocks
    /// the calling thread (not for use on Swift concurrency's pool: see `runManyOffThePool`).
    public static func runMany(
        from seed: UInt64, runs: Int, steps: Int = 60, progress: (Int) -> Void = { _ in }
    ) -> Report {
        let started = Date()
        var total = 0
        var counters = Counters()
        for run in 0..<runs {
            let plan = plan(seed: seed &+ UInt64(run), steps: steps)
            total += plan.steps.count
            let outcome = Simulation.run(plan)
            counters.add(outcome.counters)
            if let failure = outcome.failure {
                let (shortest, message) = shrink(plan, failure: failure)
                return Report(
                    runs: run + 1, steps: total, failure: (shortest, message),
                    seconds: Date().timeIntervalSince(started), counters: counters)
            }
            progress(run + 1)
        }
        return Report(
            runs: runs, steps: total, failure: nil, seconds: Date().timeIntervalSince(started), counters: counters)
    }

    /// The shortest plan found (by removing steps) that still fails, with its failure.
    public static func shrink(_ plan: Plan, failure: String) -> (Plan, String) {
        var best = plan
        var message = failure
        var chunk = max(1, best.steps.count / 2)
        while chunk >= 1 {
            var start = 0
            var removed = false
            while start < best.steps.count {
                var candidate = best
                candidate.steps.removeSubrange(start..<min(best.steps.count, start + chunk))
                if let failure = run(candidate).failure {
                    best = candidate
                    message = failure
                    removed = true
                } else {
                    start += chunk
                }
            }
            if !removed { chunk /= 2 }
        }
        return (best, message)
    }
}
