import BasketCore
import BasketSearch
import Testing

struct SuggestionsTests {
    let list = ListID(raw: ID128(high: 3, low: 3))
    let day: UInt64 = 86_400_000
    let now: UInt64 = 1_764_400_000_000

    func item(_ name: String, checked: Bool = false, deleted: Bool = false) -> Item {
        Item(id: ItemID(list: list, key: ItemKey.normalize(name)), name: name, isChecked: checked, isDeleted: deleted)
    }

    @Test func anAddHalvesInWeightEveryFourteenDays() {
        #expect(abs(Suggestions.score(times: [now], now: now) - 1) < 1e-9)
        #expect(abs(Suggestions.score(times: [now - 14 * day], now: now) - 0.5) < 1e-9)
        #expect(abs(Suggestions.score(times: [now - 28 * day], now: now) - 0.25) < 1e-9)
        #expect(abs(Suggestions.score(times: [now - 7 * day], now: now) - 0.707_106_78) < 1e-6)
    }

    @Test func frequentAndRecentItemsComeFirstAndItemsOnTheListAreNotSuggested() {
        let history: [(item: Item, times: [UInt64])] = [
            (item("Milk", checked: true), [now - 1 * day, now - 8 * day, now - 15 * day]),  // often
            (item("Saffron", deleted: true), [now - 90 * day]),  // once, long ago
            (item("Eggs", deleted: true), [now - 2 * day]),  // once, recently
            (item("Bread"), [now - 1 * day, now - 2 * day, now - 3 * day]),  // on the list: no
        ]
        #expect(Suggestions.rank(history, now: now).map(\.name) == ["Milk", "Eggs", "Saffron"])
        #expect(Suggestions.rank(history, now: now, query: "sa").map(\.name) == ["Saffron"])
        #expect(Suggestions.rank(history, now: now, query: "bread").isEmpty)
    }
}
