import BasketCore
import Foundation
import Synchronization

/// `basket-bench fleet-generator`: the devices d ≡ generator (mod generators), each a connection
/// long-polling its list; answers re-armed at once and timed ("delivered LIST SECONDS" on
/// CLOCK_MONOTONIC). "churn PER_SECOND SECONDS" on its standard input makes that many of its
/// devices a second reconnect ("churned N ERRORS" at the end). Ends, printing "errors N", when its
/// standard input closes.
///
/// Its devices are served by threads of at most ``perThread`` connections each: poll() costs a
/// look at every descriptor it is given, and one thread polling 16,667 took 0.8 of the machine's
/// two cores at 100 pushes a second, away from the servers it measures.
struct FleetGenerator {
    var generator = 0
    var generators = 1
    var devices = 0
    var ports: [Int] = []
    var token = ""
    var lists: [ListID] = []

    init(arguments: [String]) throws {
        var i = 0
        while i + 1 < arguments.count {
            let value = arguments[i + 1]
            switch arguments[i] {
            case "--generator": generator = Int(value) ?? 0
            case "--generators": generators = Int(value) ?? 1
            case "--devices": devices = Int(value) ?? 0
            case "--ports": ports = value.split(separator: ",").compactMap { Int($0) }
            case "--token": token = value
            case "--lists":
                lists = try String(contentsOfFile: value, encoding: .utf8).split(separator: "\n")
                    .compactMap { ListID(hex: String($0)) }
            default: throw BenchError("fleet-generator: unknown option \(arguments[i])")
            }
            i += 2
        }
        guard !ports.isEmpty, !lists.isEmpty else { throw BenchError("fleet-generator: --ports and --lists") }
    }

    /// The most connections one thread polls.
    static let perThread = 1_000

    /// A reconnect order: `rate` of the generator's devices a second, from `start` to `end`.
    struct Churn {
        var rate: Double
        var start: Double
        var end: Double
    }

    /// What the threads share: the order to churn (with a number, so each thread takes it once),
    /// their reports, the end of the run, and the lines they print.
    final class Shared: Sendable {
        struct State {
            var churn: (number: Int, order: Churn)?
            var reports: [Int: (threads: Int, churned: Int, errors: Int)] = [:]
            var errors = 0
            var done = false
        }
        let state = Mutex(State())
        let output = Mutex(())

        func say(_ line: String) {
            output.withLock { _ in
                print(line)
                fflush(nil)
            }
        }
    }

    /// One thread's devices: their indexes among the generator's, lists, connections and cursors.
    // `@unchecked Sendable`: made on the main thread, then handed to one thread that alone uses it.
    struct Slice: @unchecked Sendable {
        var devices: [Int] = []
        var watched: [Int] = []
        var connections: [RawConnection] = []
        var cursors: [Int64] = []
    }

    /// Hands a slice to the thread that serves it.
    // `@unchecked Sendable`: `slice` is set before the thread starts and taken once by it.
    final class SliceBox: @unchecked Sendable {
        private var slice: Slice?
        init(_ slice: Slice) { self.slice = slice }
        func take() -> Slice {
            defer { slice = nil }
            return slice!
        }
    }

    func run() throws {
        raiseOpenFileLimit()
        var slices: [Slice] = []
        var slice = Slice()
        for device in stride(from: generator, to: devices, by: generators) {
            let list = FleetBenchmark.list(of: device)
            let connection = try RawConnection(
                port: ports[device % ports.count], source: "127.0.0.\(2 + device / 10_000)")
            try connection.send(
                RawConnection.request("GET", "/v1/lists/\(lists[list])/ops?after=0&wait=30", token: token))
            slice.devices.append(device)
            slice.watched.append(list)
            slice.connections.append(connection)
            slice.cursors.append(0)
            if slice.devices.count == Self.perThread {
                slices.append(slice)
                slice = Slice()
            }
        }
        if !slice.devices.isEmpty { slices.append(slice) }
        slice = Slice()
        let shared = Shared()
        shared.say("parked \(slices.reduce(0) { $0 + $1.devices.count })")
        // Commands arrive on standard input; its closing ends the run.
        Thread {
            var pending = ""
            var number = 0
            while case let data = FileHandle.standardInput.availableData, !data.isEmpty {
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let words = pending[..<newline].split(separator: " ")
                    pending = String(pending[pending.index(after: newline)...])
                    if words.count == 3, words[0] == "churn", let rate = Double(words[1]),
                        let seconds = Double(words[2])
                    {
                        let now = Double(monotonicNanoseconds()) / 1e9
                        number += 1
                        let order = Churn(rate: rate, start: now, end: now + seconds)
                        shared.state.withLock { $0.churn = (number, order) }
                    }
                }
            }
            shared.state.withLock { $0.done = true }
        }.start()
        let group = DispatchGroup()
        let threads = slices.count
        // Each thread takes its slice out of its box: no other reference to a connection may stay,
        // or a device that reconnects would not close its old one.
        let boxes = slices.map { SliceBox($0) }
        slices = []
        for box in boxes {
            group.enter()
            let thread = Thread {
                serve(box, threads: threads, shared: shared)
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        shared.say("errors \(shared.state.withLock { $0.errors })")
    }

    /// Serves one slice of the devices until the run ends: reads answers, asks again, and
    /// reconnects its share of a churn.
    private func serve(_ box: SliceBox, threads: Int, shared: Shared) {
        var slice = box.take()
        var fds = slice.connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var errors = 0
        var taken = 0
        var churn: Churn?
        var churnNumber = 0
        var churned = 0
        var churnErrors = 0
        var next = 0
        func ask(_ i: Int) throws {
            try slice.connections[i].send(
                RawConnection.request(
                    "GET", "/v1/lists/\(lists[slice.watched[i]])/ops?after=\(slice.cursors[i])&wait=30", token: token))
        }
        while true {
            let (done, order) = shared.state.withLock { ($0.done, $0.churn) }
            if done { break }
            if churn == nil, let order, order.number > taken {
                taken = order.number
                churnNumber = order.number
                churn = order.order
                churned = 0
                churnErrors = 0
            }
            let ready = poll(&fds, nfds_t(fds.count), churn == nil ? 200 : 5)
            let now = Double(monotonicNanoseconds()) / 1e9
            for i in fds.indices where ready > 0 && fds[i].revents != 0 {
                fds[i].revents = 0
                do {
                    guard let answer = try slice.connections[i].readAvailable() else { continue }
                    guard answer.status == 200, let cursor = integerField("cursor", in: answer.body) else {
                        errors += 1
                        continue
                    }
                    if cursor > slice.cursors[i] { shared.say("delivered \(slice.watched[i]) \(now)") }
                    slice.cursors[i] = max(slice.cursors[i], cursor)
                    try ask(i)
                } catch {
                    errors += 1
                    fds[i].events = 0
                }
            }
            // A device that reconnects drops its connection (its long-poll with it) and asks again
            // on a new one, from where it was.
            if let current = churn {
                let due = Int((min(now, current.end) - current.start) * current.rate / Double(threads))
                while churned < due && !fds.isEmpty {
                    let i = next % fds.count
                    next += 1
                    churned += 1
                    let device = slice.devices[i]
                    do {
                        let fresh = try RawConnection(
                            port: ports[device % ports.count], source: "127.0.0.\(2 + device / 10_000)")
                        slice.connections[i] = fresh
                        fds[i] = pollfd(fd: fresh.fd, events: Int16(POLLIN), revents: 0)
                        try ask(i)
                    } catch {
                        errors += 1
                        churnErrors += 1
                    }
                }
                if now >= current.end {
                    churn = nil
                    let (done, report) = shared.state.withLock { state -> (Bool, (Int, Int)) in
                        var report = state.reports[churnNumber] ?? (0, 0, 0)
                        report.threads += 1
                        report.churned += churned
                        report.errors += churnErrors
                        state.reports[churnNumber] = report
                        return (report.threads == threads, (report.churned, report.errors))
                    }
                    if done { shared.say("churned \(report.0) \(report.1)") }
                }
            }
        }
        shared.state.withLock { $0.errors += errors }
    }
}
