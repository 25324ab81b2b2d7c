import BasketCore
import BasketReplica
import Foundation
import SQLite
import SeededRandom

/// `basket-bench replica`: merge speed of the replica against raw SQLite inserts, export size,
/// and `basket ls` as a whole process.
struct ReplicaBenchmark {
    var operationCount = 100_000
    var itemCount = 10_000
    var runs = 3

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--ops": operationCount = n
            case "--items": itemCount = n
            case "--runs": runs = n
            default: return false
            }
            return true
        }
    }

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "basket-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let (list, ops) = makeOperations()
        print("Replica benchmark: \(ops.count) operations on \(itemCount) items, median of \(runs) runs")
        print("SQLite \(Connection.libraryVersion), WAL, synchronous=FULL for both the replica and the baseline")

        var baseline: [Double] = []
        var applyFresh: [Double] = []
        var applyAgain: [Double] = []
        var applyOnto: [Double] = []
        let later = makeLaterOperations(list: list, after: ops)
        var lastPath = ""
        for run in 0..<runs {
            let basePath = directory.appendingPathComponent("baseline-\(run).sqlite").path
            baseline.append(try rawInsert(ops, path: basePath))
            let path = directory.appendingPathComponent("replica-\(run).sqlite").path
            let replica = try Replica(path: path)
            applyFresh.append(try seconds { _ = try replica.merge(ops) })
            applyAgain.append(try seconds { _ = try replica.merge(ops) })
            applyOnto.append(try seconds { _ = try replica.merge(later) })
            lastPath = path
        }
        let replica = try Replica(path: lastPath)
        let visible = try replica.items(in: list).count
        let known = try replica.operations(in: list).count
        guard known == ops.count + later.count, visible == itemCount else {
            throw BenchError(
                "replica holds \(known) operations and \(visible) items; expected \(ops.count), \(itemCount)")
        }
        let encoded = OperationCodec.encode(ops, canonicalOrder: true)
        var decodeTimes: [Double] = []
        for _ in 0..<runs {
            decodeTimes.append(try seconds { _ = try OperationCodec.decode(encoded) })
        }
        let fileBytes = try fileSize(lastPath)

        let n = Double(ops.count)
        let baseRate = n / median(baseline)
        var table = Table(
            title: "Replica: apply \(ops.count) remote operations", header: ["measure", "value", "vs baseline"])
        table.add(
            "raw SQLite insert, 1 prepared statement, 1 transaction (baseline)", formatRate(baseRate) + " rows/s",
            "1.00x")
        table.add(
            "replica apply into an empty file (history, registers, durable commit)",
            formatRate(n / median(applyFresh)) + " ops/s", String(format: "%.2fx", (n / median(applyFresh)) / baseRate))
        table.add(
            "replica apply of \(later.count) more new writes onto the \(itemCount) existing items",
            formatRate(Double(later.count) / median(applyOnto)) + " ops/s",
            String(format: "%.2fx", (Double(later.count) / median(applyOnto)) / baseRate))
        table.add(
            "replica apply of the same batch again (all duplicates)", formatRate(n / median(applyAgain)) + " ops/s",
            String(format: "%.2fx", (n / median(applyAgain)) / baseRate))
        table.add("decode of the export encoding", formatRate(n / median(decodeTimes)) + " ops/s", "")
        table.add("export encoding size", String(format: "%.1f bytes/op", Double(encoded.count) / n), "")
        table.add("replica file size after apply", String(format: "%.1f bytes/op", Double(fileBytes) / n), "")
        print(table.render())

        try lsTable(path: lastPath, items: visible)
    }

    /// `basket ls` on the benchmark's replica as a whole process, against `basket --version`.
    func lsTable(path: String, items: Int) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("basket").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            print("\n(basket ls skipped: build the basket product next to basket-bench)")
            return
        }
        var version: [Double] = []
        var ls: [Double] = []
        var lsJSON: [Double] = []
        for _ in 0..<7 {
            version.append(try seconds { try runProcess(executable, ["--version"]) })
            ls.append(try seconds { try runProcess(executable, ["--db", path, "ls"]) })
            lsJSON.append(try seconds { try runProcess(executable, ["--db", path, "ls", "--json"]) })
        }
        var table = Table(
            title: "basket ls on \(items) items (whole process, median of 7)",
            header: ["command", "time", "vs startup"])
        let base = median(version)
        table.add("basket --version (process start, baseline)", formatMillis(base), "1.00x")
        table.add("basket ls", formatMillis(median(ls)), String(format: "%.2fx", median(ls) / base))
        table.add("basket ls --json", formatMillis(median(lsJSON)), String(format: "%.2fx", median(lsJSON) / base))
        print(table.render())
    }

    /// Spawns and waits with posix_spawn/waitpid: Foundation's Process adds ~45 ms of its own
    /// per run here, which would swamp what is measured.
    func runProcess(_ path: String, _ arguments: [String]) throws {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchError("cannot start \(path): error \(rc)") }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else {
            throw BenchError("\(path) \(arguments.joined(separator: " ")) exited with status \(status)")
        }
    }

    /// 10,000 items: each created (name, checked, deleted), renamed once within its key (casing),
    /// and the rest check toggles, from three replicas, shuffled.
    func makeOperations() -> (ListID, [Op]) {
        var rng = SplitMix64(seed: 42)
        let list = ListID(raw: ID128(high: 0x1234, low: 0x5678))
        let replicas = (1...3).map { ReplicaID(rawValue: UInt64($0) * 0x1111_1111) }
        let now = HybridClock.wallClockMilliseconds() - 60_000
        var counter: UInt64 = 0
        func version() -> Version {
            counter += 1
            return Version(
                timestamp: HybridTimestamp(milliseconds: now + counter / 4, counter: UInt16(counter % 4)),
                replica: replicas[Int(rng.next() % 3)])
        }
        let words = [
            "Milk", "Bread", "Crème", "Fraîche", "Äpfel", "Oat", "Greek", "Yogurt", "Tomato", "Olive", "Øl", "Café",
        ]
        var names: [String] = []
        for i in 0..<itemCount {
            names.append("\(words[i % words.count]) \(words[(i / 7) % words.count]) \(i)")
        }
        var ops: [Op] = []
        ops.reserveCapacity(operationCount)
        for (i, name) in names.enumerated() {
            let id = ItemID(list: list, key: ItemKey.normalize(name))
            ops.append(Op(list: list, item: id, field: .name, value: .text(name), version: version()))
            ops.append(Op(list: list, item: id, field: .checked, value: .bool(false), version: version()))
            ops.append(Op(list: list, item: id, field: .deleted, value: .bool(false), version: version()))
            if ops.count + (itemCount - i) <= operationCount {
                ops.append(
                    Op(list: list, item: id, field: .name, value: .text(name.uppercased()), version: version()))
            }
        }
        let ids = names.map { ItemID(list: list, key: ItemKey.normalize($0)) }
        while ops.count < operationCount {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            ops.append(
                Op(list: list, item: id, field: .checked, value: .bool(rng.next() % 2 == 0), version: version()))
        }
        ops.append(Op(list: list, item: .list, field: .title, value: .text("Benchmark"), version: version()))
        ops.removeFirst()  // keep exactly operationCount (the title replaces the first name write)
        ops.insert(Op(list: list, item: ids[0], field: .name, value: .text(names[0]), version: version()), at: 0)
        ops.removeLast()
        ops.shuffle(using: &rng)
        return (list, ops)
    }

    /// Check toggles and same-key renames on the existing items, all later than `after`.
    func makeLaterOperations(list: ListID, after ops: [Op]) -> [Op] {
        var rng = SplitMix64(seed: 7)
        let items = Array(Set(ops.filter { $0.field == .name }.map(\.item)))
        let names = Dictionary(ops.filter { $0.field == .name }.map { ($0.item, $0.value.textValue!) }) { a, _ in a }
        let start = ops.map(\.timestamp.milliseconds).max()! + 1
        let replica = ReplicaID(rawValue: 0x4444_4444)
        return (0..<operationCount).map { i in
            let item = items[Int(rng.next() % UInt64(items.count))]
            let version = Version(
                timestamp: HybridTimestamp(milliseconds: start + UInt64(i / 8), counter: UInt16(i % 8)),
                replica: replica)
            if i % 10 == 0 {
                return Op(
                    list: list, item: item, field: .name, value: .text(names[item]!.lowercased()), version: version)
            }
            return Op(
                list: list, item: item, field: .checked, value: .bool(rng.next() % 2 == 0), version: version)
        }
    }

    /// Rows per second of ``rawInsert(_:path:)`` for `rows` generated rows.
    static func rawInsertRate(rows: Int, path: String) throws -> Double {
        var bench = try ReplicaBenchmark(arguments: [])
        bench.operationCount = rows
        bench.itemCount = max(1, rows / 10)
        let (_, ops) = bench.makeOperations()
        return Double(rows) / (try bench.rawInsert(ops, path: path))
    }

    /// The baseline: the same number of rows into a plain table, one prepared statement, one transaction.
    func rawInsert(_ ops: [Op], path: String) throws -> Double {
        let db = try Connection(path: path)
        try db.configure(synchronous: .full)
        try db.execute(
            "CREATE TABLE ops(list BLOB, item BLOB, field INTEGER, ts INTEGER, replica INTEGER, value TEXT)")
        let insert = try db.prepare("INSERT INTO ops VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        return try seconds {
            try db.transaction {
                for op in ops {
                    try withUnsafeBytes(of: (op.list.raw.high, op.list.raw.low)) { try insert.bind($0, at: 1) }
                    try withUnsafeBytes(of: (op.item.raw.high, op.item.raw.low)) { try insert.bind($0, at: 2) }
                    try insert.bind(Int64(op.field.code), at: 3)
                    try insert.bind(Int64(bitPattern: op.timestamp.rawValue), at: 4)
                    try insert.bind(Int64(bitPattern: op.replica.rawValue), at: 5)
                    try insert.bind(op.value.textValue, at: 6)
                    try insert.runToCompletion()
                }
            }
        }
    }

    func fileSize(_ path: String) throws -> Int {
        var total = 0
        for suffix in ["", "-wal"] {
            if let size = try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int {
                total += size
            }
        }
        return total
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
