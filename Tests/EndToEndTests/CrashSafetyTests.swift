import BasketCore
import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// `basket import` killed with SIGKILL at points spread over its run leaves the replica either as
/// it was before the import or with the whole batch, never in between.
struct CrashSafetyTests {
    let root = TemporaryDirectory("crash")

    /// An export of `items` items with several writes each, on one list.
    func writeBundle(items: Int) throws -> (path: String, operations: Int) {
        let list = ListID(raw: ID128(high: 0xC0FFEE, low: 42))
        let replica = ReplicaID(rawValue: 0xABCDEF)
        let start = HybridClock.wallClockMilliseconds() - 100_000
        var ops: [Op] = []
        var tick: UInt64 = 0
        func version() -> Version {
            tick += 1
            return Version(
                timestamp: HybridTimestamp(milliseconds: start + tick / 8, counter: UInt16(tick % 8)), replica: replica)
        }
        ops.append(
            Op(list: list, item: .list, field: .title, value: .text("Big list"), version: version()))
        for i in 0..<items {
            let name = "Item \(i) crème"
            let id = ItemID(list: list, key: ItemKey.normalize(name))
            ops.append(Op(list: list, item: id, field: .name, value: .text(name), version: version()))
            ops.append(
                Op(list: list, item: id, field: .deleted, value: .bool(false), version: version()))
            for k in 0..<8 {
                ops.append(
                    Op(
                        list: list, item: id, field: .checked, value: .bool(k % 2 == 0), version: version()))
            }
        }
        let path = root.file("big.ops")
        try Data(OperationCodec.encode(ops, canonicalOrder: true)).write(to: URL(fileURLWithPath: path))
        return (path, ops.count)
    }

    /// The number of operations the replica at `directory` knows (0 when it has none).
    func operationCount(_ directory: String) throws -> Int {
        let export = try Executables.run("basket", ["--db", directory, "export", "-"])
        #expect(export.status == 0, "the replica does not open after the kill: \(export.stderr)")
        return export.stdout.split(separator: "\n").filter { !$0.hasPrefix("basket-ops") && !$0.hasPrefix("L ") }.count
    }

    @Test func aKilledImportLeavesTheReplicaBeforeOrAfterTheBatch() throws {
        let (bundle, total) = try writeBundle(items: 10_000)

        // One complete import, to know how long it takes.
        let reference = root.file("reference")
        let started = Date()
        let full = try Executables.run("basket", ["--db", reference, "import", bundle])
        let duration = Date().timeIntervalSince(started)
        #expect(full.status == 0, "\(full.stderr)")
        #expect(try operationCount(reference) == total)

        var killedMidway = 0
        var outcomes: [String] = []
        for trial in 0..<10 {
            let directory = root.file("trial-\(trial)")
            // Every trial starts from a replica that already holds a list, so "before" is visible too.
            let seeded = try Executables.run("basket", ["--db", directory, "add", "Before"])
            #expect(seeded.status == 0)
            let before = try operationCount(directory)

            let process = try Subprocess(
                Executables.path("basket"), ["--db", directory, "import", bundle], stdout: .discard, stderr: .discard)
            // Spread from 10% to 150% of the measured time: most kills land mid-import, the last ones after it.
            let delay = duration * (0.1 + 1.4 * Double(trial) / 9)
            usleep(UInt32(delay * 1_000_000))
            process.signal(SIGKILL)
            let wasKilled = try process.finish(timeout: 30).signaled
            if wasKilled { killedMidway += 1 }

            let after = try operationCount(directory)
            #expect(
                after == before || after == before + total,
                "trial \(trial): \(after) operations, neither \(before) nor \(before + total)")
            outcomes.append(
                "\(String(format: "%.0f", delay * 1000)) ms: \(wasKilled ? "killed" : "finished"), \(after == before ? "before" : "after")"
            )
        }
        #expect(killedMidway > 0, "no trial killed the import before it finished: \(outcomes)")
        print(
            "crash safety: import of \(total) ops took \(String(format: "%.2f", duration)) s; "
                + outcomes.joined(separator: "; "))
    }
}
