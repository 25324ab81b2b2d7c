import BasketCore
import BasketModel
import BasketReplica
import TestSupport
import Testing

/// The replica against the independent model (`ReferenceModel`): random writes to a few items
/// whose names share keys ("Milk", "MILK", "milk"), on timestamps close enough to tie and replica
/// ids few enough to tie too, applied to real SQLite replicas in shuffled orders, with duplicates
/// and in batches of any size. Every replica must show exactly what the model says, whatever the
/// order: not only the same as the others.
struct ReferenceModelTests {
    static let list = ListID(hex: "0123456789abcdef0123456789abcdef")!
    static let base: UInt64 = 1_764_400_000_000
    static let names = ["Milk", "MILK", "milk", "Bread", "bread", "Oat milk", "Crème fraîche", "creme fraiche"]
    static let texts = ["1", "2 l", "500 g", "Dairy", "Bakery", "for the cake", "Ä", "a"]

    /// `count` random writes: item fields of the names' items, and the list's title now and then.
    static func operations(_ count: Int, _ random: inout SeededGenerator) -> [Op] {
        (0..<count).map { _ in
            let version = Version(
                timestamp: HybridTimestamp(
                    milliseconds: base + UInt64(random.below(6)), counter: UInt16(random.below(2))),
                replica: ReplicaID(rawValue: UInt64(random.below(3) + 1)))
            if random.chance(8) {
                return Op(
                    list: list, item: .list, field: .title, value: .text(texts[random.below(texts.count)]),
                    version: version)
            }
            let name = names[random.below(names.count)]
            let item = ItemID(list: list, key: ItemKey.normalize(name))
            let fields: [Field] = [.name, .name, .checked, .deleted, .quantity, .note, .category]
            let field = fields[random.below(fields.count)]
            let value: Value =
                switch field {
                case .name: .text(name)
                case .checked, .deleted: .bool(random.chance(50))
                default: random.chance(25) ? .null : .text(texts[random.below(texts.count)])
                }
            return Op(list: list, item: item, field: field, value: value, version: version)
        }
    }

    @Test(arguments: 1...60 as ClosedRange<UInt64>)
    func replicasShowWhatTheModelSays(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let operations = Self.operations(1 + random.below(80), &random)
        let expected = ReferenceModel.list(Self.list, from: operations)
        let directory = TemporaryDirectory("model")
        for order in 0..<2 {
            var configuration = Replica.Configuration()
            configuration.synchronous = .off
            configuration.wallClock = { Self.base + 60_000 }
            let replica = try Replica(path: directory.file("replica-\(order).sqlite"), configuration: configuration)
            var delivered = (operations + operations.prefix(random.below(operations.count + 1))).shuffled(
                using: &random)
            while !delivered.isEmpty {
                let batch = 1 + random.below(delivered.count)
                try replica.merge(Array(delivered.prefix(batch)))
                delivered.removeFirst(batch)
            }
            let shown = try replica.items(in: Self.list)
            let items = Dictionary(
                uniqueKeysWithValues: shown.map {
                    (
                        $0.id,
                        ReferenceModel.Item(
                            id: $0.id, name: $0.name, checked: $0.isChecked, quantity: $0.quantity, note: $0.note,
                            category: $0.category)
                    )
                })
            #expect(items == expected.items, "seed \(seed), order \(order): \(operations.count) writes")
            if let title = expected.title {
                #expect(try replica.lists().first { $0.id == Self.list }?.title == title, "seed \(seed)")
            }
        }
    }

    @Test func theModelStatesTheTieBreaksItself() {
        let milk = ItemID(list: Self.list, key: "milk")
        func write(_ value: Value, at milliseconds: UInt64, replica: UInt64) -> Op {
            Op(
                list: Self.list, item: milk, field: .quantity, value: value,
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: milliseconds, counter: 0),
                    replica: ReplicaID(rawValue: replica)))
        }
        // A later timestamp wins; then the larger replica id; then the value order.
        #expect(ReferenceModel.wins(write(.text("1"), at: 2, replica: 1), over: write(.text("2"), at: 1, replica: 9)))
        #expect(ReferenceModel.wins(write(.text("1"), at: 1, replica: 2), over: write(.text("2"), at: 1, replica: 1)))
        #expect(ReferenceModel.wins(write(.text("b"), at: 1, replica: 1), over: write(.text("a"), at: 1, replica: 1)))
        #expect(ReferenceModel.wins(write(.text("a"), at: 1, replica: 1), over: write(.null, at: 1, replica: 1)))
        #expect(!ReferenceModel.wins(write(.null, at: 1, replica: 1), over: write(.null, at: 1, replica: 1)))
    }
}
