import BasketCore
import TestSupport
import Testing

@testable import BasketSearch

/// The letter pair and triple lists only narrow which entries a search visits: every query must
/// rank exactly as a search that visits every entry.
struct PostingsTests {
    static let words = [
        "Crème", "fraîche", "Greek", "yogurt", "Coca-Cola", "7 Up", "Straße", "Øl", "Milk", "oat", "m&m's", "Kid's",
        "Jalapeño", "café", "Brötchen", "½", "lemon", "2 l", "Tomatoes", "cherry", "Pâté", "Ærø", "Łąka", "tea",
        "Earl", "grey", "Item", "10", "salt", "pepper", "olive-oil", "Ｍｉｌｋ", "ice", "cream",
    ]

    static func items(count: Int, seed: UInt64) -> [Item] {
        var random = SeededGenerator(seed: seed)
        let list = ListID(raw: ID128(high: 9, low: 9))
        var seen = Set<String>()
        var items: [Item] = []
        while items.count < count {
            let length = 1 + random.below(4)
            let name = (0..<length).map { _ in words[random.below(words.count)] }.joined(separator: " ")
            let key = ItemKey.normalize(name)
            guard seen.insert(key).inserted else { continue }
            items.append(Item(id: ItemID(list: list, key: key), name: name, isChecked: random.chance(20)))
        }
        return items
    }

    /// Queries of every kind, cut from the names: prefixes of every length (as typed), substrings
    /// across separators, words with letters dropped or swapped, tokens and exclusions.
    static func queries(from items: [Item], count: Int, seed: UInt64) -> [String] {
        var random = SeededGenerator(seed: seed)
        var queries = [
            "", "m", "mi", "e", "ol", "caf", "cocacola", "coca cola", "7up", "kids", "mms", "½ le", "2 l",
            "is:checked mi", "-milk cr", "\"earl grey\"", "^gr", "zzz", "x:y", "strasse", "milk is:todo",
        ]
        while queries.count < count {
            let name = Array(items[random.below(items.count)].name)
            let start = random.below(max(1, name.count - 1))
            var piece = Array(name[start..<min(name.count, start + 1 + random.below(9))])
            switch random.below(5) {
            case 0 where piece.count > 3: piece.remove(at: 1 + random.below(piece.count - 2))
            case 1 where piece.count > 3:
                let i = random.below(piece.count - 1)
                piece.swapAt(i, i + 1)
            case 2: piece = Array(String(piece).lowercased())
            default: break
            }
            let text = String(piece)
            for end in 1...text.count { queries.append(String(text.prefix(end))) }
        }
        return queries
    }

    /// 20,000 items: passes over more than 16,384 entries or 4,096 fuzzy candidates run in parts
    /// on every core, which must not change the answer either.
    @Test(arguments: [(300, 1, 400), (2_000, 2, 400), (5_000, 3, 400), (20_000, 4, 150)] as [(Int, UInt64, Int)])
    func narrowedSearchesRankLikeFullScans(count: Int, seed: UInt64, queries: Int) {
        let items = Self.items(count: count, seed: seed)
        let index = SearchIndex(items: items)
        for text in Self.queries(from: items, count: queries, seed: seed) {
            let query = Query(text)
            for limit in [1, 20] {
                let narrowed = index.rankedHits(query, limit: limit)
                let full = index.rankedHits(query, limit: limit, usePostings: false, inParallel: false)
                #expect(
                    narrowed.map(\.entry) == full.map(\.entry) && narrowed.map(\.tier) == full.map(\.tier)
                        && narrowed.map(\.score) == full.map(\.score),
                    "query \"\(text)\" limit \(limit)")
            }
        }
    }

    @Test func partsCoverEveryPositionOnceAndInOrder() {
        let index = SearchIndex(items: Self.items(count: 10, seed: 5))
        for count in [0, 1, 2, 3, 7, 16_385] {
            let parts = index.inParts(count, atLeast: 1) { Array($0) }
            #expect(parts.flatMap { $0 } == Array(0..<count), "\(count)")
        }
        #expect(index.inParts(5, atLeast: 6) { Array($0) } == [[0, 1, 2, 3, 4]])
    }
}
