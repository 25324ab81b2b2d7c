import BasketCore
import SQLite
import TestSupport
import Testing

@testable import BasketReplica

/// Every place that walks an item's fields walks `Field.itemFields`: these tests set a distinct
/// value in every settable field and follow it through each of them, so a field added to the
/// list but missed by one of them fails here rather than being lost on a device.
struct ItemFieldTests {
    /// A value per settable field that no other field holds.
    static func distinctValues() -> [Field: String] {
        Dictionary(uniqueKeysWithValues: Field.settableItemFields.map { ($0, "value of \($0.rawValue)") })
    }

    @Test func theReplicaHasAColumnForEveryItemField() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        _ = try replica.createList(title: "Groceries")
        let db = try Connection(path: fixture.directory.file("a.sqlite"))
        let columns = Set(try db.query("SELECT name FROM pragma_table_info('items')") { $0.string(0) ?? "" })
        for field in Field.itemFields { #expect(columns.contains(field.rawValue), "no column for \(field)") }
        for field in Field.allCases where field.isListField { #expect(!columns.contains(field.rawValue)) }
    }

    @Test func setStoresEverySettableFieldAndRefusesTheOthers() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        for (field, value) in Self.distinctValues() {
            #expect(try replica.set(field, to: value, of: milk, in: list)[field] == .text(value))
        }
        let stored = try #require(try replica.item(milk, in: list))
        for (field, value) in Self.distinctValues() { #expect(stored[field] == .text(value)) }
        let before = try replica.operations()
        for field in Field.allCases where !Field.settableItemFields.contains(field) {
            #expect(throws: ReplicaError.self) { try replica.set(field, to: "x", of: milk, in: list) }
        }
        #expect(try replica.operations() == before)
    }

    @Test func aRenameToAnotherKeyCarriesEveryField() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        for (field, value) in Self.distinctValues() { try replica.set(field, to: value, of: milk, in: list) }
        try replica.check(milk, in: list)
        let original = try #require(try replica.item(milk, in: list))
        let moved = try replica.rename(milk, to: "Oat milk", in: list)
        let stored = try #require(try replica.item(moved.id, in: list))
        for field in Field.itemFields where field != .name {
            #expect(stored[field] == original[field], "\(field) not carried by the rename")
            #expect(moved[field] == original[field], "\(field) not in the rename's answer")
        }
        #expect(stored.name == "Oat milk")
    }

    @Test func undoAndTimeTravelGiveBackEveryField() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        fixture.clock.advance(by: 1_000)
        for (field, value) in Self.distinctValues() { try replica.set(field, to: value, of: milk, in: list) }
        let set = try #require(try replica.item(milk, in: list))
        let setTime = fixture.clock.milliseconds
        fixture.clock.advance(by: 1_000)
        for field in Field.settableItemFields { try replica.set(field, to: "changed", of: milk, in: list) }
        for _ in Field.settableItemFields { _ = try replica.undo(in: list) }
        let undone = try #require(try replica.item(milk, in: list))
        for field in Field.itemFields { #expect(undone[field] == set[field], "undo lost \(field)") }

        let snapshot = try replica.snapshot(of: list, at: setTime)
        let then = try #require(snapshot.items.first { $0.id == milk })
        for field in Field.itemFields { #expect(then[field] == set[field], "time travel lost \(field)") }
        for _ in Field.settableItemFields { _ = try replica.undo(in: list) }
        let bare = try #require(try replica.item(milk, in: list))
        for field in Field.settableItemFields { #expect(bare[field] == field.initialValue, "undo left \(field)") }
    }

    @Test func itemSubscriptIsTheInverseOfItsProperties() {
        let id = ItemID(list: ListID(raw: ID128(high: 1, low: 2)), key: "milk")
        var item = Item(id: id, name: "Milk")
        for field in Field.itemFields {
            let value: Value = field.kind == .flag ? .bool(true) : .text("v-\(field.rawValue)")
            item[field] = value
            #expect(item[field] == value)
        }
        #expect(item.isChecked && item.isDeleted && item.name == "v-name" && item.category == "v-category")
        let copy = Item(id: id) { item[$0] }
        #expect(copy == item)
        for field in Field.allCases where field.isListField { #expect(item[field] == .null) }
    }
}
