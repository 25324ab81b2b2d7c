import BasketCore
import BasketReplica
import Foundation
import SeededRandom

/// `basket-bench shops`: what shops and usuals cost in the terminal, on a list of 10,000 items
/// with two years of check-offs (300 usuals bought every 3 to 14 days, the other items once or
/// twice) made by another device and merged into a real SQLite replica. Timed, as the
/// median of `--runs`: the usuals (``Replica/usuals(in:)``: the purchases read and each item's
/// pattern), a shop's walking order with the trips' lesson (``Shop/aisles(listAisles:)``), the
/// learning from a trip of 40 check-offs (``ShopOrder/learn(trip:base:pinned:learned:at:)``) and
/// the whole end of a trip (``Replica/finishTrip(in:)``: the trip's check-offs read, learned and
/// written). The baseline of the same run: reading the list's 10,000 items (what `basket ls`
/// reads), to which each row's ratio is given.
struct ShopsBenchmark {
    var items = 10_000
    var days = 730
    var runs = 21

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, value in
            switch name {
            case "--items": items = value
            case "--days": days = value
            case "--runs": runs = value
            default: return false
            }
            return true
        }
    }

    static let aisles = [
        "Fruit & vegetables", "Bakery", "Dairy & eggs", "Meat & fish", "Frozen", "Drinks", "Pantry", "Snacks",
        "Household", "Personal care", "Baby", "Pets",
    ]

    /// Another device's writes: every item added with an aisle, and its check-offs over `days`.
    func history(_ list: ListID, now: UInt64) -> (ops: [Op], checks: Int) {
        var random = SplitMix64(seed: 46)
        let other = ReplicaID(rawValue: 0xB0B)
        var ops: [Op] = []
        var counter: UInt16 = 0
        func write(_ item: ItemID, _ field: Field, _ value: Value, at ms: UInt64) {
            counter &+= 1
            ops.append(
                Op(
                    list: list, item: item, field: field, value: value,
                    version: Version(timestamp: HybridTimestamp(milliseconds: ms, counter: counter), replica: other)))
        }
        let start = now - UInt64(days) * 86_400_000
        var checks = 0
        for n in 0..<items {
            let name = "Item \(n)"
            let id = ItemID(list: list, key: ItemKey.normalize(name))
            write(id, .name, .text(name), at: start)
            write(id, .category, .text(Self.aisles[n % Self.aisles.count]), at: start)
            write(id, .deleted, .bool(false), at: start)
            var at = start + UInt64(random.below(7 * 86_400_000))
            let usual = n < 300
            let every = UInt64(3 + random.below(12)) * 86_400_000
            var times = usual ? Int.max : 1 + random.below(2)
            while times > 0 && at < now {
                write(id, .checked, .bool(true), at: at)
                checks += 1
                at += usual ? every + UInt64(random.below(86_400_000)) : UInt64(random.below(days * 43_200_000))
                times -= 1
            }
        }
        return (ops, checks)
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("basket-bench-shops-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let replica = try Replica(path: folder.appendingPathComponent("replica.sqlite").path)
        let list = try replica.createList(title: "Family").id
        let now = HybridClock.wallClockMilliseconds()
        let (ops, checks) = history(list, now: now)
        for start in stride(from: 0, to: ops.count, by: 50_000) {
            _ = try replica.merge(Array(ops[start..<min(start + 50_000, ops.count)]))
        }
        let shop = try replica.addShop("Lidl", to: list)
        try replica.setShopOrder(Array(Self.aisles.reversed()), of: shop.id, in: list)
        try replica.setPinned(["Bakery"], of: shop.id, in: list)
        let trip = (0..<40).map { Self.aisles[($0 * 5) % Self.aisles.count] }
        var learned: ShopOrder.Learned?
        var random = SplitMix64(seed: 7)
        for n in 0..<10 {
            learned = ShopOrder.learn(
                trip: trip.shuffled(using: &random), base: Self.aisles, pinned: ["Bakery"],
                learned: learned, at: Int64(now) + Int64(n))
        }
        let walked = Shop(id: shop.id, name: "Lidl", order: Self.aisles, pinned: ["Bakery"], learned: learned)

        var baseline: [Double] = []
        var usuals: [Double] = []
        var order: [Double] = []
        var learning: [Double] = []
        var finishing: [Double] = []
        var found = 0
        for _ in 0..<runs {
            baseline.append(try seconds { _ = try replica.items(in: list) })
            usuals.append(try seconds { found = try replica.usuals(in: list).count })
            order.append(seconds { _ = walked.aisles(listAisles: []) })
            learning.append(
                seconds {
                    _ = ShopOrder.learn(
                        trip: trip, base: Self.aisles, pinned: ["Bakery"], learned: learned, at: Int64(now))
                })
            // A trip of 40 check-offs on this device, then its end: read, learned, written.
            _ = try replica.startTrip(at: shop.id, in: list)
            let bought = try replica.items(in: list).filter { !$0.isChecked }.prefix(40).map(\.id)
            _ = try replica.check(Array(bought), in: list)
            finishing.append(try seconds { _ = try replica.finishTrip(in: list) })
            _ = try replica.uncheck(Array(bought), in: list)
        }
        let base = median(baseline)
        var table = Table(
            title:
                "Shops and usuals in the terminal: \(items) items, \(checks) check-offs over \(days) days (median of \(runs))",
            header: ["what", "time", "× reading the items"])
        func row(_ name: String, _ samples: [Double]) {
            table.add(
                name, String(format: "%.2f ms", median(samples) * 1000), String(format: "%.2f", median(samples) / base))
        }
        row("baseline: read the \(items) items (basket ls)", baseline)
        row("usuals (\(found) found)", usuals)
        row("a shop's order with what trips taught", order)
        row("learn from a trip of 40 check-offs", learning)
        row("end a trip: read, learn, write", finishing)
        print(table.render())
    }
}
