import BasketCore
import Foundation
import Postgres
import Synchronization

/// The fleet under load: a burst of pushes, a rising push rate until fan-out fails its target or
/// a resource runs out, and 1 % of the devices reconnecting every second.
extension FleetBenchmark {
    /// What every phase needs of the running fleet.
    struct Fleet {
        var ports: [Int]
        var lists: [ListID]
        var token: String
        var generators: [GeneratorProcess]
        var servers: [ServerUnderTest]
        var admin: PostgresConnection
        var devices: Int

        /// Family lists: every list after the hot ones.
        var families: Range<Int> { FleetBenchmark.hotSizes.count..<lists.count }

        /// The devices watching list `list`.
        func watchers(of list: Int) -> Int {
            if list < FleetBenchmark.hotSizes.count { return FleetBenchmark.hotSizes[list] }
            let first = FleetBenchmark.hotSizes.reduce(0, +) + (list - FleetBenchmark.hotSizes.count) * 4
            return max(0, min(4, devices - first))
        }

        /// CPU seconds used so far by the instances, PostgreSQL's processes and the generators.
        func cpu() -> (instances: Double, postgres: Double, generators: Double) {
            (
                servers.reduce(0) { $0 + processCPUSeconds(pid: $1.pid) },
                processesNamed("postgres").reduce(0) { $0 + processCPUSeconds(pid: $1) },
                generators.reduce(0) { $0 + processCPUSeconds(pid: $1.process.processIdentifier) }
            )
        }

        /// PostgreSQL's NOTIFY queue in use, as a fraction of its size.
        func notifyQueue() -> Double {
            Double((try? admin.query("SELECT pg_notification_queue_usage()").string(0, 0)) ?? "0") ?? 0
        }

        func clearDeliveries() { for generator in generators { generator.clearDeliveries() } }

        func deliveries(of list: Int) -> [Double] { generators.flatMap { $0.deliveries(of: list) } }

        func deliveredCount() -> Int { generators.reduce(0) { $0 + $1.deliveredCount() } }
    }

    /// CPU (cores) of the instances, PostgreSQL and the generators, and PostgreSQL's committed
    /// transactions a second, over `seconds` with nothing pushed, after as long again: the
    /// devices have just parked, and their first waits (30 s) run out only then.
    static func atRest(seconds: Double, fleet: Fleet) throws -> (
        instances: Double, postgres: Double, generators: Double, transactions: Double
    ) {
        Thread.sleep(forTimeInterval: seconds)
        let commits = {
            Double(
                try fleet.admin.query(
                    "SELECT sum(xact_commit) FROM pg_stat_database WHERE datname LIKE 'basket_fleet_%'"
                ).string(0, 0) ?? "0") ?? 0
        }
        // Backends report their counts at most once a second: a second or so of error in all.
        let before = (fleet.cpu(), try commits(), Date())
        Thread.sleep(forTimeInterval: seconds)
        let after = (fleet.cpu(), try commits(), Date())
        let wall = after.2.timeIntervalSince(before.2)
        return (
            (after.0.instances - before.0.instances) / wall, (after.0.postgres - before.0.postgres) / wall,
            (after.0.generators - before.0.generators) / wall, (after.1 - before.1) / wall
        )
    }

    /// One push to each of `targets` (list indexes), the k-th due at `k / rate` seconds from the
    /// start (as fast as `threads` connections go when `rate` is nil), from the instances in turn.
    /// Returns each list's send time (CLOCK_MONOTONIC seconds), the answers' seconds and errors.
    static func push(
        _ targets: [Int], rate: Double?, threads: Int, label: String, fleet: Fleet
    ) throws -> (sent: [Int: Double], answers: [Double], errors: Int) {
        let sent = Mutex([Int: Double]())
        let answers = Mutex([Double]())
        let errors = Mutex(0)
        let (ports, lists, token) = (fleet.ports, fleet.lists, fleet.token)
        let start = Double(monotonicNanoseconds()) / 1e9
        _ = try ServerBenchmark().parallel(threads) { thread in
            let connection = try RawConnection(port: ports[thread % ports.count])
            for k in stride(from: thread, to: targets.count, by: threads) {
                if let rate {
                    let due = start + Double(k) / rate
                    let now = Double(monotonicNanoseconds()) / 1e9
                    if due > now { usleep(UInt32((due - now) * 1e6)) }
                }
                let list = targets[k]
                let begin = Double(monotonicNanoseconds()) / 1e9
                let answer = try connection.call(
                    "POST", "/v1/lists/\(lists[list])/ops", token: token,
                    body: ServerBenchmark().singleOpBody(
                        lists[list], name: "\(label) \(k)", counter: UInt16(truncatingIfNeeded: k)))
                let end = Double(monotonicNanoseconds()) / 1e9
                sent.withLock { $0[list] = begin }
                answers.withLock { $0.append(end - begin) }
                if answer.status != 200 { errors.withLock { $0 += 1 } }
            }
        }
        return (sent.withLock { $0 }, answers.withLock { $0 }, errors.withLock { $0 })
    }

    /// Waits (at most `seconds`) until every watcher of every list in `sent` has its answer, and
    /// returns each answer's latency from its push and how many watchers got none.
    static func collect(_ sent: [Int: Double], seconds: Double, fleet: Fleet) -> (
        latencies: [Double], missing: Int, last: Double
    ) {
        let expected = sent.keys.reduce(0) { $0 + fleet.watchers(of: $1) }
        let deadline = Date().addingTimeInterval(seconds)
        while fleet.deliveredCount() < expected && Date() < deadline { usleep(5_000) }
        var latencies: [Double] = []
        var last = 0.0
        for (list, time) in sent {
            let times = fleet.deliveries(of: list).filter { $0 >= time }
            latencies += times.map { $0 - time }
            last = max(last, times.max() ?? 0)
        }
        return (latencies.sorted(), max(0, expected - latencies.count), last)
    }

    /// Deliveries per second when many lists are pushed at once.
    static func burst(pushes: Int, fleet: Fleet, table: inout Table) throws {
        let targets = Array(fleet.families.prefix(pushes))
        fleet.clearDeliveries()
        let start = Double(monotonicNanoseconds()) / 1e9
        let (sent, answers, errors) = try push(targets, rate: nil, threads: 16, label: "Burst", fleet: fleet)
        let pushed = Double(monotonicNanoseconds()) / 1e9
        let (latencies, missing, last) = collect(sent, seconds: 30, fleet: fleet)
        let deliveries = latencies.count
        table.add(
            "burst: \(targets.count) pushes at once to family lists (\(deliveries + missing) watchers)",
            String(
                format: "%.0f pushes/s; %.0f deliveries/s", Double(targets.count) / max(1e-6, pushed - start),
                Double(deliveries) / max(1e-6, last - start)),
            "")
        table.add(
            "burst: push answer p99 / delivery p50 / p99 / missing / errors",
            "\(formatMillis(percentile(answers.sorted(), 0.99))) / \(formatMillis(percentile(latencies, 0.5))) / "
                + "\(formatMillis(percentile(latencies, 0.99))) / \(missing) / \(errors)", "")
    }

    /// One step of the rising push rate.
    struct RampStep {
        var rate: Double
        var done: Double
        var deliveries: Double
        var p50: Double
        var p99: Double
        var answerP99: Double
        var missing: Int
        var errors: Int
        var cpu: (instances: Double, postgres: Double, generators: Double)
        var queue: Double
    }

    /// Push rates doubling from `first` to `max` per second, `seconds` each, each push to a family
    /// list of its own; stops at the first step whose fan-out p99 passes 250 ms, whose pushes fall
    /// behind, or that loses or refuses something, and names what ran out.
    static func ramp(first: Int, max maxRate: Int, seconds: Double, fleet: Fleet, table: inout Table) throws {
        var rate = Double(first)
        var next = fleet.families.lowerBound
        var steps: [RampStep] = []
        var broke: String?
        while rate <= Double(maxRate) && broke == nil {
            let count = min(Int(rate * seconds), fleet.families.count)
            let targets = (0..<count).map { k in
                fleet.families.lowerBound + (next - fleet.families.lowerBound + k) % fleet.families.count
            }
            next = targets.last.map { $0 + 1 } ?? next
            fleet.clearDeliveries()
            let cpuBefore = fleet.cpu()
            let wallBefore = Double(monotonicNanoseconds()) / 1e9
            var queue = 0.0
            let (sent, answers, errors) = try push(
                targets, rate: rate, threads: 16, label: "Ramp \(Int(rate))", fleet: fleet)
            queue = Swift.max(queue, fleet.notifyQueue())
            let sendTimes = sent.values.sorted()
            let (latencies, missing, last) = collect(sent, seconds: 10, fleet: fleet)
            let cpuAfter = fleet.cpu()
            let wall = Swift.max(1e-6, Double(monotonicNanoseconds()) / 1e9 - wallBefore)
            let span = Swift.max(1e-6, (sendTimes.last ?? 0) - (sendTimes.first ?? 0))
            let step = RampStep(
                rate: rate, done: count > 1 ? Double(count - 1) / span : Double(count),
                deliveries: Double(latencies.count) / Swift.max(1e-6, last - (sendTimes.first ?? last)),
                p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
                answerP99: percentile(answers.sorted(), 0.99), missing: missing, errors: errors,
                cpu: (
                    (cpuAfter.instances - cpuBefore.instances) / wall, (cpuAfter.postgres - cpuBefore.postgres) / wall,
                    (cpuAfter.generators - cpuBefore.generators) / wall
                ), queue: queue)
            steps.append(step)
            broke = verdict(step)
            rate *= 2
        }
        for step in steps {
            table.add(
                "push rate \(Int(step.rate))/s: done/s, deliveries/s, fan-out p50 / p99, push answer p99",
                String(
                    format: "%.0f, %.0f, %@ / %@, %@", step.done, step.deliveries, formatMillis(step.p50),
                    formatMillis(step.p99), formatMillis(step.answerP99)),
                step.rate == steps.first?.rate ? "p99 ≤ 250 ms" : "")
            table.add(
                "  CPU (cores) instances / PostgreSQL / generators; NOTIFY queue",
                String(
                    format: "%.2f / %.2f / %.2f; %.4f %%", step.cpu.instances, step.cpu.postgres,
                    step.cpu.generators, step.queue * 100), "")
        }
        table.add(
            "what broke first", broke ?? "nothing up to \(Int(steps.last?.rate ?? 0)) pushes/s (the highest tried)", "")
    }

    /// Why a ramp step failed, naming the resource that ran out; nil when it met the targets.
    static func verdict(_ step: RampStep) -> String? {
        let busy = step.cpu.instances + step.cpu.postgres + step.cpu.generators
        let cause: String
        if step.queue > 0.5 {
            cause = String(format: "PostgreSQL's NOTIFY queue (%.0f %% full)", step.queue * 100)
        } else if busy > 1.7 {
            cause = String(
                format: "CPU: %.2f of the machine's 2 cores busy (instances %.2f, PostgreSQL %.2f, generators %.2f)",
                busy, step.cpu.instances, step.cpu.postgres, step.cpu.generators)
        } else if step.answerP99 > 0.25 {
            cause = "push answers (p99 \(formatMillis(step.answerP99))): PostgreSQL's commit, the list's row lock"
        } else {
            cause = String(format: "fan-out with %.2f cores busy", busy)
        }
        let rate = Int(step.rate)
        if step.errors > 0 { return "at \(rate) pushes/s, \(step.errors) pushes refused; \(cause)" }
        if step.missing > 0 {
            return "at \(rate) pushes/s, \(step.missing) watchers not answered within 10 s; \(cause)"
        }
        if step.p99 > 0.25 { return "at \(rate) pushes/s, fan-out p99 \(formatMillis(step.p99)); \(cause)" }
        if step.done < step.rate * 0.8 {
            return String(format: "at %d pushes/s only %.0f/s were made; %@", rate, step.done, cause)
        }
        return nil
    }

    /// 1 % of the devices reconnect every second for `seconds`, while the 1,000-watcher list is
    /// pushed again and again; reports its fan-out, the reconnects, errors, and the long-polls
    /// parked once the churn is over.
    static func churn(seconds: Int, fleet: Fleet, descriptorsBefore: Int, table: inout Table) throws {
        let perSecond = Swift.max(1, fleet.devices / 100)
        let share = Double(perSecond) / Double(fleet.generators.count)
        for generator in fleet.generators { generator.send("churn \(share) \(seconds)") }
        let end = Date().addingTimeInterval(Double(seconds))
        let hot = hotSizes.count - 1
        var p50: [Double] = []
        var p99: [Double] = []
        var maxima: [Double] = []
        var missing = 0
        var round = 0
        while Date() < end {
            fleet.clearDeliveries()
            let (sent, _, errors) = try push(
                [hot], rate: nil, threads: 1, label: "Churn \(round)", fleet: fleet)
            round += 1
            let result = collect(sent, seconds: 10, fleet: fleet)
            missing += result.missing + errors
            if !result.latencies.isEmpty {
                p50.append(percentile(result.latencies, 0.5))
                p99.append(percentile(result.latencies, 0.99))
                maxima.append(result.latencies.last!)
            }
            usleep(300_000)
        }
        var reconnects = 0
        var errors = 0
        for generator in fleet.generators {
            let (done, failed) = try generator.churned(seconds: Double(seconds) + 60)
            reconnects += done
            errors += failed
        }
        table.add(
            "fan-out to 1000 watchers while 1 % of devices (\(perSecond)/s) reconnect: p50 / p99 / max (median of \(p99.count))",
            p99.isEmpty
                ? "none measured"
                : "\(formatMillis(median(p50))) / \(formatMillis(median(p99))) / \(formatMillis(median(maxima)))",
            "p99 ≤ 250 ms")
        table.add(
            "reconnects in \(seconds) s / errors answered / watchers not answered",
            "\(reconnects) / \(errors) / \(missing)",
            "0 errors")
        // Every device has one long-poll parked again (those that reconnected, on their new connection).
        // Asked on new connections: an instance closes one left idle as long as the phases before.
        let setups = try fleet.ports.map { try RawConnection(port: $0) }
        let settled = Date().addingTimeInterval(5)
        var parked = 0
        repeat {
            usleep(200_000)
            parked = try setups.reduce(0) { $0 + (try watcherCount($1)) }
        } while parked != fleet.devices && Date() < settled
        let open = fleet.servers.reduce(0) { $0 + openDescriptors(pid: $1.pid) }
        table.add(
            "long-polls parked / instances' descriptors open, after the churn", "\(parked) / \(open)",
            "\(fleet.devices) / \(descriptorsBefore) (before it)")
    }
}

/// The `fraction` percentile of sorted `values` (0 when there are none).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    return values[min(values.count - 1, Int(Double(values.count) * fraction))]
}

/// The descriptors process `pid` has open (its sockets among them), from /proc/PID/fd.
func openDescriptors(pid: Int32) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
}
