import BasketCore
import Testing

@testable import BasketSearch

struct OneLetterCacheTests {
    @Test func precomputedOneLetterAnswersEqualAFreshSearch() {
        let list = ListID(raw: ID128(high: 5, low: 5))
        let words = ["Milk", "Bread", "Crème", "Apple", "Zucchini", "Kale", "Mango", "Oat", "Rice", "Tea"]
        let items = (0..<1_500).map { i in
            let name = "\(words[i % words.count]) \(words[(i / 10) % words.count]) \(i)"
            return Item(id: ItemID(list: list, key: ItemKey.normalize(name)), name: name, isChecked: i % 4 == 0)
        }
        let index = SearchIndex(items: items)
        for letter in ["m", "K", "z", "7", "é"] {
            let cached = index.search(Query(letter), limit: 50).matches.map(\.item.id)
            let fresh = index.rankedHits(Query(letter), limit: 50, among: nil).hits.map {
                index.entries[Int($0.entry)].item.id
            }
            #expect(cached == fresh, "\(letter)")
            #expect(!cached.isEmpty || letter == "é")
        }
    }
}
