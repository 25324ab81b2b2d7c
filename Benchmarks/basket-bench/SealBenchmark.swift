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
struct SealBenchmark {
    var ops = 100_000
    var runs = 5

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, value in
            switch name {
            case "--ops": ops = value
            case "--runs": runs = value
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
                    let opened = try OperationCodec.decode(sealedText, sealed: true).map { op in
                        let opened = try keys.open(sealed: op)
                        try opened.validate()
                        return opened
                    }
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
    }

    func ratio(_ a: Int, _ b: Int) -> String { String(format: "%.2fx", Double(a) / Double(b)) }
}
