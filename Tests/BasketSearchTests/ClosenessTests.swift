import BasketCore
import BasketSearch
import Testing

/// The closeness scale (substrings, typos and fuzzy matches ranked together) and the tie-break
/// order, each pinned with an example a person would type.
struct ClosenessTests {
    let list = ListID(raw: ID128(high: 14, low: 14))

    func items(_ names: [String]) -> [Item] {
        names.map { Item(id: ItemID(list: list, key: ItemKey.normalize($0)), name: $0) }
    }

    func ranked(_ query: String, _ names: [String], lastUsed: [String: UInt64] = [:]) -> [(String, Tier)] {
        let all = items(names)
        var times: [ItemID: UInt64] = [:]
        for item in all { if let time = lastUsed[item.name] { times[item.id] = time } }
        return SearchIndex(items: all, lastUsed: times).search(Query(query)).matches.map { ($0.item.name, $0.tier) }
    }

    @Test func aSlipInAWholeShortNameBeatsTheSameLettersSpreadOverALongName() {
        // Each long name holds the typed letters (fuzzy, or as a substring across its words),
        // which the old tier order put first.
        let cases: [(query: String, meant: String, other: String, otherTier: Tier)] = [
            ("choclate", "Chocolate", "Choc Late Harvest Tea Blend", .substring),
            ("mlik", "Milk", "Mullikin Tea", .fuzzy),
            ("onionr", "Onion", "Onion Rings (petite)", .substring),
            ("limenta", "Pimenta", "Alimenta Pasta di Mandorle Amaretti Morbidi", .substring),
        ]
        for c in cases {
            let found = ranked(c.query, [c.other, c.meant])
            #expect(found.map(\.0) == [c.meant, c.other], "\(c.query): \(found)")
            #expect(found.first?.1 == .typo, "\(c.query): \(found)")
            #expect(found.last?.1 == c.otherTier, "\(c.query): \(found)")
        }
    }

    @Test func neighbouringKeysAndDoubledLettersAreCheaperSlips() {
        // "milm": m and k are neighbours, m and d are not; without the weights "Mild" would come
        // first (same length, alphabetical).
        #expect(ranked("milm", ["Mild", "Milk"]).map(\.0) == ["Milk", "Mild"])
        // "piza": one z of a pair missing, against a t replaced: "Pita" would win on length.
        #expect(ranked("piza", ["Pita", "Pizza"]).map(\.0) == ["Pizza", "Pita"])
        // Swapped neighbours ("appel") are a slip too.
        #expect(ranked("appel", ["Apple"]).map(\.1) == [.typo])
    }

    @Test func editsAreCountedInCharactersNotBytes() {
        // A doubled katakana letter is one slip (three bytes); a missing Cyrillic letter is one
        // slip (two bytes), and "пирог" is three letters away, not within reach.
        #expect(ranked("キュウリリ", ["キュウリ", "キャベツ"]).map(\.0) == ["キュウリ"])
        #expect(ranked("пица", ["Пирог", "Пицца"]).map(\.0) == ["Пицца"])
    }

    @Test func longerWordsAndLongerQueriesAllowMoreSlips() {
        // Two slips in a word of 10 letters.
        #expect(ranked("straberies", ["Strawberries", "Stracciatella"]).first?.0 == "Strawberries")
        // Two slips in a word of 6 letters: not alone, but beside a word typed right.
        // ("pxmmex": o → x, and s → x a neighbouring key: 4 + 3.)
        let names = ["Pommes frites", "Poireaux", "Epinard branche"]
        #expect(ranked("pxmmex", names).isEmpty)
        #expect(ranked("pxmmex frites", names).map(\.0) == ["Pommes frites"])
        // One slip in the beginning of an unfinished word.
        #expect(ranked("eponar", names).map(\.0) == ["Epinard branche"])
    }

    @Test func lettersScatteredByChanceAreNotAMatch() {
        let names = ["Comstock, Pie Filling & Topping, Simply Cherry", "Buttermilk", "Bread crumbs"]
        #expect(ranked("cpgmpl", names).isEmpty)
        // Letters of one word, or a few words' beginnings and runs, still are.
        #expect(ranked("bttrmlk", names).map(\.0) == ["Buttermilk"])
        #expect(ranked("brdcrm", names).map(\.0) == ["Bread crumbs"])
    }

    @Test func wordBeginningsPreferTheItemTheyCoverThenTheOrderTyped() {
        // All of a short item's words, in another order, before a long product holding them.
        #expect(
            ranked("cranberry myrtille", ["Boisson au cranberry myrtille 1l", "Myrtille cranberry"]).first?.0
                == "Myrtille cranberry")
        // As many words covered: the order typed decides.
        #expect(ranked("heu bis", ["Biscotte Heudebert", "Heudebert biscottes"]).first?.0 == "Heudebert biscottes")
    }

    @Test func tiesBreakByShorterNameThenMoreRecentlyAddedThenAlphabetically() {
        let names = ["Apple tea", "Apple pie", "Apple"]
        #expect(ranked("app", names).map(\.0) == ["Apple", "Apple pie", "Apple tea"])
        #expect(
            ranked("app", names, lastUsed: ["Apple tea": 2_000, "Apple pie": 1_000]).map(\.0)
                == ["Apple", "Apple tea", "Apple pie"])
        // The same for slips: "Apple" covers more of itself, then the two of one length.
        #expect(
            ranked("appel", names, lastUsed: ["Apple tea": 2_000]).map(\.0) == ["Apple", "Apple tea", "Apple pie"])
        #expect(ranked("appel", names).map(\.0) == ["Apple", "Apple pie", "Apple tea"])
    }
}
