import BasketCore
import Testing

/// The ids a plain list's operations take when it is encrypted (``ListConversion``), with a
/// stand-in for the keyed derivation: the plain one under another list's id.
struct ListConversionTests {
    let list = ListID.random()
    let other = ListID.random()

    func op(_ item: ItemID, _ field: Field, _ value: Value, _ counter: UInt16, replica: UInt64 = 9) -> Op {
        Op(
            list: list, item: item, field: field, value: value,
            version: Version(
                timestamp: HybridTimestamp(milliseconds: 1_765_000_000_000, counter: counter),
                replica: ReplicaID(rawValue: replica)))
    }

    func convert(_ ops: [Op], known: [Op] = []) -> [Op] {
        let (items, shops) = ListConversion.keys(of: known + ops)
        return ListConversion.rekey(
            ops, items: items.mapValues { ItemID(list: other, key: $0) },
            shops: shops.mapValues { ItemID(list: other, shopKey: $0) })
    }

    @Test func itemsMoveByTheirNamesShopsByTheirIdsAndTheMarksFollow() {
        let milk = ItemID(list: list, key: "milk")
        let lidl = ItemID(list: list, shopKey: "lidl")
        let cheese = ItemID(list: list, key: "cheese")
        let ops = [
            op(.list, .title, .text("Family"), 1),
            op(milk, .name, .text("Milk"), 2),
            op(milk, .checked, .bool(true), 3),
            op(milk, .shops, .text(lidl.description), 4),
            op(milk, .places, .text("\(lidl)=Dairy"), 5),
            op(lidl, .shop, .text("Lidl"), 6),
            op(cheese, .checked, .bool(true), 7),
        ]
        let converted = convert(ops)
        let newMilk = ItemID(list: other, key: "milk")
        let newLidl = ItemID(list: other, shopKey: lidl.description)
        #expect(converted[0] == ops[0], "the list's registers stay")
        #expect(converted[1...3].allSatisfy { $0.item == newMilk }, "an item added as Milk later lands here")
        #expect(converted[3].value == .text(newLidl.description))
        #expect(converted[4].value == .text("\(newLidl)=Dairy"))
        #expect(converted[5].item == newLidl)
        #expect(converted[6].item == ItemID(list: other, key: cheese.description), "named nowhere: its old id")
        #expect(zip(ops, converted).allSatisfy { $0.version == $1.version && $0.field == $1.field })
        // A device converting its unsent writes with its copy's names makes the same operations.
        #expect(convert([ops[2], ops[6]], known: ops) == [converted[2], converted[6]])
    }

    @Test func theNewestNameSaysTheKey() {
        let item = ItemID(list: list, key: "oat milk")
        let ops = [op(item, .name, .text("Oat Milk"), 2), op(item, .name, .text("oat milk"), 1, replica: 99)]
        #expect(convert(ops).allSatisfy { $0.item == ItemID(list: other, key: "oat milk") })
        // A value naming no shop (a hostile one) is read as the shops' own parsers read it.
        let marked = op(item, .shops, .text("not an id"), 3)
        #expect(convert([marked])[0].value == .null)
    }
}
