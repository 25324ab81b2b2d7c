import BasketCore
import Testing

@testable import BasketSearch

struct ShortQueryHitsTests {
    @Test func keptShortQueryHitsEqualAFreshSearch() {
        let list = ListID(raw: ID128(high: 5, low: 5))
        let words = ["Milk", "Bread", "Crème", "Apple", "Zucchini", "Kale", "Mango", "Oat", "Rice", "Tea"]
        let items = (0..<6_000).map { i in
            let name = "\(words[i % words.count]) \(words[(i / 10) % words.count]) \(i)"
            return Item(id: ItemID(list: list, key: ItemKey.normalize(name)), name: name, isChecked: i % 4 == 0)
        }
        let index = SearchIndex(items: items)
        for letter in ["m", "K", "z", "7", "é", "ea", "RE", "e a"] {
            let cached = index.search(Query(letter), limit: 50).matches.map(\.item.id)
            let fresh = index.rankedHits(Query(letter), limit: 50).map {
                index.entries[Int($0.entry)].item.id
            }
            #expect(cached == fresh, "\(letter)")
            #expect(!cached.isEmpty || letter == "é")
            let key = Query(letter).key
            #expect((index.shortQueryHits.hits(for: key) != nil) == (letter != "e a"), "\(letter)")
        }
    }
}
