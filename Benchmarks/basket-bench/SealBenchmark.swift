import BasketCore
import BasketReplica
import BasketSeal
import Foundation
import SeededRandom

/// `basket-bench seal`: what end-to-end encryption costs a device (docs/encryption.md). A page of
/// `--ops` operations (names, quantities, notes and check-offs of `--ops`/4 items) as a pull
/// receives it: decoded and merged into a new SQLite replica (the baseline, a plain list), then
/// the same operations sealed, decoded in the sealed form, each opened and validated, then merged
/// (an encrypted list's pull, ``HTTPSyncTransport``'s page). Also what a push of them costs:
/// encoding alone, and sealing then encoding. Medians of `--runs`, ratios against the baseline
/// of the same run.
///
/// Then a cold start: a device new to an encrypted list of `--items` items whose log holds
/// four writes of each item and four check-offs more (every check-off but the last superseded):
/// the whole log pulled, opened one by one and merged (the baseline), against the owner's
/// snapshot of its state opened in one piece and merged (docs/encryption.md, "Snapshots").
struct SealBenchmark {
    var ops = 100_000
    var runs = 5
    var items = 10_000

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, value in
            switch name {
            case "--ops": ops = value
            case "--runs": runs = value
            case "--items": items = value
            default: return false
            }
            return true
        }
    }

    func makeOperations(_ list: ListID, keys: ListKeys) -> [Op] {
        var random = SplitMix64(seed: 47)
        let replica = ReplicaID(rawValue: 0xA11CE)
        var out: [Op] = []
        out.reserveCapacity(ops)
        var n = 0
        while out.count < ops {
            let name = "Item \(n) \(random.below(1_000_000))"
            let id = keys.itemID(key: ItemKey.normalize(name))
            let writes: [(Field, Value)] = [
                (.name, .text(name)), (.quantity, .text("\(1 + random.below(5)) kg")),
                (.note, .text("the one from the market, not the supermarket \(random.below(100))")),
                (.checked, .bool(random.below(2) == 0)),
            ]
            for (index, (field, value)) in writes.enumerated() where out.count < ops {
                out.append(
                    Op(
                        list: list, item: id, field: field, value: value,
                        version: Version(
                            timestamp: HybridTimestamp(
                                milliseconds: 1_765_000_000_000 + UInt64(n), counter: UInt16(index)),
                            replica: replica)))
            }
            n += 1
        }
        return out
    }

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "basket-bench-seal-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = ListID.random()
        let keys = ListKeys.generate(list: list)
        let plain = makeOperations(list, keys: keys)
        let plainText = OperationCodec.encode(plain)
        let sealedText = OperationCodec.encode(plain.map(keys.seal))
        print("Seal benchmark: \(plain.count) operations of \(plain.count / 4) items, median of \(runs) runs")
        print(
            "page bytes: plain \(plainText.count), sealed \(sealedText.count) (\(ratio(sealedText.count, plainText.count)))"
        )

        var plainApply: [Double] = []
        var sealedApply: [Double] = []
        var encode: [Double] = []
        var sealEncode: [Double] = []
        var configuration = Replica.Configuration()
        configuration.synchronous = .off
        for run in 0..<runs {
            let plainReplica = try Replica(
                path: directory.appendingPathComponent("plain-\(run).sqlite").path, configuration: configuration)
            plainApply.append(
                try seconds {
                    _ = try plainReplica.merge(try OperationCodec.decode(plainText))
                })
            let sealedReplica = try Replica(
                path: directory.appendingPathComponent("sealed-\(run).sqlite").path, configuration: configuration)
            sealedApply.append(
                try seconds {
                    let opened = try Self.opened(sealedText, keys: keys)
                    _ = try sealedReplica.merge(opened)
                })
            guard try sealedReplica.operations(in: list).count == plain.count else {
                throw BenchError("the encrypted replica does not hold every operation")
            }
            encode.append(seconds { _ = OperationCodec.encode(plain) })
            sealEncode.append(seconds { _ = OperationCodec.encode(plain.map(keys.seal)) })
        }
        var table = Table(
            title: "End-to-end encryption: \(plain.count) operations", header: ["step", "median", "ops/s", "vs plain"])
        func row(_ name: String, _ times: [Double], _ base: [Double]) {
            let time = median(times)
            table.add(
                name, String(format: "%.0f ms", time * 1000), String(format: "%.0f", Double(plain.count) / time),
                String(format: "%.2fx", median(base) / time))
        }
        row("apply a pulled page, plain (baseline)", plainApply, plainApply)
        row("apply a pulled page, encrypted (decode, open, validate, merge)", sealedApply, plainApply)
        row("push: encode, plain (baseline)", encode, encode)
        row("push: seal and encode, encrypted", sealEncode, encode)
        print(table.render())
        try coldStart(directory, configuration: configuration)
    }

    /// The log of a list of ``items`` items: four writes each, then four check-offs each.
    func makeLog(_ list: ListID, keys: ListKeys) -> [Op] {
        let replica = ReplicaID(rawValue: 0xB0B)
        var out: [Op] = []
        out.reserveCapacity(items * 8)
        for round in 0..<5 {
            for n in 0..<items {
                let name = "Item \(n)"
                let id = keys.itemID(key: ItemKey.normalize(name))
                let writes: [(Field, Value)] =
                    round == 0
                    ? [
                        (.name, .text(name)), (.quantity, .text("2")), (.note, .text("the usual one")),
                        (.checked, .bool(false)),
                    ]
                    : [(.checked, .bool(round % 2 == 1))]
                for (index, (field, value)) in writes.enumerated() {
                    out.append(
                        Op(
                            list: list, item: id, field: field, value: value,
                            version: Version(
                                timestamp: HybridTimestamp(
                                    milliseconds: 1_765_000_000_000 + UInt64(round * items + n), counter: UInt16(index)),
                                replica: replica)))
                }
            }
        }
        return out
    }

    func coldStart(_ directory: URL, configuration: Replica.Configuration) throws {
        let list = ListID.random()
        let keys = ListKeys.generate(list: list)
        let log = makeLog(list, keys: keys)
        let sealedLog = OperationCodec.encode(log.map(keys.seal))
        // The owner's state: the newest write of each register, as its replica holds it.
        let owner = try Replica(
            path: directory.appendingPathComponent("owner.sqlite").path, configuration: configuration)
        _ = try owner.merge(log)
        let state = try owner.currentOperations(in: list)
        let snapshot = keys.sealSnapshot(state, cursor: Int64(log.count))
        print(
            "Cold start: \(items) items, a log of \(log.count) operations (\(sealedLog.count) bytes sealed);"
                + " a snapshot of \(state.count) registers, \(snapshot.utf8.count) bytes")
        var fromLog: [Double] = []
        var fromSnapshot: [Double] = []
        for run in 0..<runs {
            let logReplica = try Replica(
                path: directory.appendingPathComponent("log-\(run).sqlite").path, configuration: configuration)
            fromLog.append(
                try seconds {
                    let opened = try Self.opened(sealedLog, keys: keys)
                    _ = try logReplica.merge(opened)
                })
            let snapshotReplica = try Replica(
                path: directory.appendingPathComponent("snapshot-\(run).sqlite").path, configuration: configuration)
            fromSnapshot.append(
                try seconds {
                    _ = try snapshotReplica.merge(try keys.openSnapshot(snapshot, cursor: Int64(log.count)))
                })
            guard try snapshotReplica.lists().first?.itemCount == items,
                try snapshotReplica.currentOperations(in: list).count == state.count
            else { throw BenchError("the replica started from the snapshot does not hold the list") }
        }
        var table = Table(
            title: "Cold start of an encrypted list of \(items) items", header: ["start", "median", "vs the log"])
        let base = median(fromLog)
        table.add(
            "the whole log: \(log.count) operations opened one by one, merged (baseline)",
            String(format: "%.0f ms", base * 1000), "1.00x")
        table.add(
            "the snapshot: one text opened (gzip, \(state.count) registers), merged",
            String(format: "%.0f ms", median(fromSnapshot) * 1000), String(format: "%.2fx", base / median(fromSnapshot))
        )
        print(table.render())
    }

    /// A sealed page as a pull takes it: decoded, each operation opened and validated (on every
    /// core, as `HTTPSyncTransport` opens a page).
    static func opened(_ sealed: [UInt8], keys: ListKeys) throws -> [Op] {
        let operations = try OperationCodec.decode(sealed, sealed: true)
        let (opened, unopened, _) = HTTPSyncTransport.opened(operations, of: keys.list, sealing: keys)
        guard unopened == 0 else { throw BenchError("\(unopened) operations of the page did not open") }
        return opened
    }

    func ratio(_ a: Int, _ b: Int) -> String { String(format: "%.2fx", Double(a) / Double(b)) }
}
