import BasketCore
import Foundation

/// `basket-bench curves`: how the server's costs grow with the work, so a reader sees linear or
/// worse at a glance: ingest and full pulls against items per list, ingest against the number of
/// lists (the same operations spread wider), fan-out latency, CPU and memory against parked
/// watchers, and (with BASKET_BENCH_POSTGRES) fan-out across a fleet against the devices
/// connected and the instances serving them. Prints a table and, with `--csv PATH`, writes the
/// points (Scripts/plot-curves.py draws them). `--curves items,lists,watchers,fleet` picks some.
struct CurvesBenchmark {
    var items = [1_000, 10_000, 100_000]
    var lists = [1, 100, 10_000]
    var watchers = [1_000, 10_000, 100_000]
    /// Devices on 6 instances; then instances for `fleetFixedDevices` devices (one instance holds
    /// at most the 20,000 descriptors a process may have here).
    var fleetDevices = [1_100, 10_000, 30_000, 100_000]
    var fleetInstances = [1, 2, 3, 6]
    var fleetFixedDevices = 18_000
    var spreadOperations = 10_000  // one push at most (the server's batch limit)
    var csv: String?
    var curves: Set<String> = ["items", "lists", "watchers", "fleet"]

    init(arguments: [String]) throws {
        var numeric: [String] = []
        var i = 0
        while i < arguments.count {
            if arguments[i] == "--csv", i + 1 < arguments.count {
                csv = arguments[i + 1]
            } else if arguments[i] == "--curves", i + 1 < arguments.count {
                curves = Set(arguments[i + 1].split(separator: ",").map(String.init))
                let unknown = curves.subtracting(["items", "lists", "watchers", "fleet"])
                guard unknown.isEmpty else { throw BenchError("unknown curves: \(unknown.sorted())") }
            } else {
                numeric += arguments[i..<min(i + 2, arguments.count)]
            }
            i += 2
        }
        try parseNumericOptions(numeric) { name, n in
            switch name {
            case "--max-items": items = items.filter { $0 <= n }
            case "--max-watchers": watchers = watchers.filter { $0 <= n }
            case "--max-devices":
                fleetDevices = fleetDevices.filter { $0 <= n }
                fleetFixedDevices = min(fleetFixedDevices, n)
            default: return false
            }
            return true
        }
    }

    struct Point {
        var curve: String
        var size: Int
        var value: Double
        var unit: String
    }

    func run() throws {
        var points: [Point] = []
        let limit = raiseOpenFileLimit(to: (watchers.max() ?? 0) + 2_000) ?? 20_000
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("basket-bench-curves-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        print(
            "Curves benchmark: basket-server (release) on loopback, a new server for each curve; load from this process"
        )

        // Ingest and full pulls against items per list: one list each, batches of 1,000 new items.
        if curves.contains("items") {
            let server = try ServerUnderTest(
                data: directory.appendingPathComponent("items").path, arguments: ["--max-lists", "1000"])
            defer { server.stop() }
            let session = try BenchSession(try RawConnection(port: server.port))
            var bench = ServerBenchmark()
            for count in items {
                let list = try session.newList()
                bench.batchSize = min(1_000, count)
                let bodies = (0..<(count / bench.batchSize)).map { bench.pushBody(list, batch: $0) }
                let connection = try RawConnection(port: server.port)
                let pushSeconds = try seconds {
                    for body in bodies {
                        let answer = try connection.call(
                            "POST", "/v1/lists/\(list)/ops", token: session.token, body: body)
                        guard answer.status == 200 else {
                            throw BenchError(
                                "push answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
                            )
                        }
                    }
                }
                var pulled = 0
                let pullSeconds = try seconds {
                    var cursor: Int64 = 0
                    while true {
                        let page = try connection.call(
                            "GET", "/v1/lists/\(list)/ops?after=\(cursor)", token: session.token)
                        guard page.status == 200, let next = integerField("cursor", in: page.body) else {
                            throw BenchError("pull answered \(page.status)")
                        }
                        pulled += Int(integerField("count", in: page.body) ?? 0)
                        if next == cursor || !page.body.containsSequence(Array(#""more":true"#.utf8)) { break }
                        cursor = next
                    }
                }
                guard pulled == count else { throw BenchError("pulled \(pulled) of \(count)") }
                points.append(
                    Point(
                        curve: "ingest by items per list", size: count, value: Double(count) / pushSeconds,
                        unit: "ops/s"))
                points.append(
                    Point(
                        curve: "full pull by items per list", size: count, value: Double(count) / pullSeconds,
                        unit: "ops/s"))
            }
        }

        // Ingest against the number of lists: the same operations, one push per list.
        if curves.contains("lists") {
            let server = try ServerUnderTest(
                data: directory.appendingPathComponent("lists").path,
                arguments: ["--max-lists", "\((lists.max() ?? 1) * 2 + 10)"])
            defer { server.stop() }
            let session = try BenchSession(try RawConnection(port: server.port))
            let connection = try RawConnection(port: server.port)
            for count in lists {
                var bench = ServerBenchmark()
                bench.batchSize = max(1, spreadOperations / count)
                var ids: [ListID] = []
                for _ in 0..<count {
                    let list = ListID.random()
                    let made = try connection.call(
                        "POST", "/v1/lists", token: session.token, body: Array("{\"id\":\"\(list)\"}".utf8))
                    guard made.status == 201 else { throw BenchError("list creation: \(made.status)") }
                    ids.append(list)
                }
                let bodies = ids.map { bench.pushBody($0, batch: 0) }
                let elapsed = try seconds {
                    for (list, body) in zip(ids, bodies) {
                        let answer = try connection.call(
                            "POST", "/v1/lists/\(list)/ops", token: session.token, body: body)
                        guard answer.status == 200 else {
                            throw BenchError(
                                "push answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))"
                            )
                        }
                    }
                }
                points.append(
                    Point(
                        curve: "ingest of \(spreadOperations) ops by lists", size: count,
                        value: Double(bench.batchSize * count) / elapsed, unit: "ops/s"))
            }
        }

        // Fan-out and memory against watchers of one list, each on a new server.
        for wanted in watchers where curves.contains("watchers") {
            let count = min(wanted, limit - 2_000)
            var devices = try DevicesBenchmark(arguments: [])
            devices.devices = count
            devices.hot = count
            devices.lists = 2
            let result = try devices.measured()
            guard result.errors == 0 else { throw BenchError("\(result.errors) watchers saw an error") }
            points.append(Point(curve: "fan-out p99 by watchers", size: count, value: result.p99 * 1000, unit: "ms"))
            points.append(
                Point(
                    curve: "server CPU per delivery by watchers", size: count, value: result.cpuPerDelivery * 1e6,
                    unit: "µs"))
            points.append(
                Point(
                    curve: "server RSS above idle by watchers", size: count,
                    value: Double(result.parkedRSS - result.idleRSS) / 1e6, unit: "MB"))
            if count < wanted {
                print("Curves benchmark: \(count) watchers instead of \(wanted): the open-file limit here is \(limit)")
            }
        }

        // Fan-out to a list of 1,000 watchers spread over every instance of a fleet on one
        // PostgreSQL (`basket-bench fleet` without its load phases), against the devices
        // connected and against the instances.
        if curves.contains("fleet") {
            if ProcessInfo.processInfo.environment["BASKET_BENCH_POSTGRES", default: ""].isEmpty {
                print("Curves benchmark: no fleet curves without BASKET_BENCH_POSTGRES (Scripts/bench.sh starts one)")
            } else {
                for devices in fleetDevices {
                    let p99 = try fleetFanOut(devices: devices, instances: 6)
                    points.append(
                        Point(
                            curve: "fleet fan-out p99 by devices (6 instances)", size: devices, value: p99, unit: "ms"))
                }
                for instances in fleetInstances {
                    let p99 = try fleetFanOut(devices: fleetFixedDevices, instances: instances)
                    points.append(
                        Point(
                            curve: "fleet fan-out p99 by instances (\(fleetFixedDevices) devices)", size: instances,
                            value: p99, unit: "ms"))
                }
            }
        }

        var table = Table(
            title: "Growth: costs against the work", header: ["curve", "size", "value", "per unit of size"])
        for point in points {
            let perUnit: String
            switch point.unit {
            case "ops/s": perUnit = ""
            case "MB": perUnit = String(format: "%.1f kB each", point.value * 1e3 / Double(point.size))
            default: perUnit = ""
            }
            table.add(point.curve, "\(point.size)", String(format: "%.1f %@", point.value, point.unit), perUnit)
        }
        print(table.render())
        if let csv {
            var text = "curve,size,value,unit\n"
            for point in points { text += "\(point.curve),\(point.size),\(point.value),\(point.unit)\n" }
            try text.write(toFile: csv, atomically: true, encoding: .utf8)
            print("Curves benchmark: points written to \(csv)")
        }
    }
}

extension CurvesBenchmark {
    /// The fan-out p99 (milliseconds, median of 3 rounds) to the fleet's list of 1,000 watchers
    /// spread over every instance, with `devices` connected to `instances` instances.
    func fleetFanOut(devices: Int, instances: Int) throws -> Double {
        var fleet = try FleetBenchmark(arguments: [])
        fleet.devices = devices
        fleet.instances = instances
        fleet.generators = max(1, min(6, devices / 3_000))
        let measured = try fleet.measure(load: false)
        guard measured.errors == 0 else { throw BenchError("\(measured.errors) devices of a fleet saw an error") }
        return measured.fanOutP99[FleetBenchmark.hotSizes.count - 1] * 1000
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
