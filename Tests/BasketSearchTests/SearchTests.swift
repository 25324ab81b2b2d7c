import BasketCore
import BasketSearch
import Testing

struct SearchTests {
    let list = ListID(raw: ID128(high: 1, low: 1))

    func items(_ names: [String], checked: Set<String> = []) -> [Item] {
        names.map {
            Item(id: ItemID(list: list, key: ItemKey.normalize($0)), name: $0, isChecked: checked.contains($0))
        }
    }

    @Test func inNarrowsToACategoryByItsFoldedPrefix() {
        let stock = [("Milk", "Dairy"), ("Cheese", "dairy"), ("Milk chocolate", "Sweets"), ("Peas", "Frozen food")]
        let all =
            stock.map {
                Item(id: ItemID(list: list, key: ItemKey.normalize($0.0)), name: $0.0, category: $0.1)
            } + items(["Mint"])
        let names = { (query: String) in Search.search(query, in: all).matches.map(\.item.name).sorted() }
        #expect(Query("in:dai milk").category == Array("dai".utf8))
        #expect(names("in:DAÍ") == ["Cheese", "Milk"])
        #expect(names("in:dairy milk") == ["Milk"])
        #expect(names("in:frozen-food") == ["Peas"])
        #expect(names("in:sweets m") == ["Milk chocolate"])
        #expect(names("in:tools").isEmpty)
        // "in:" alone is plain text, and the offer is what was typed without the token.
        #expect(Query("in:").category == nil)
        #expect(Search.search("in:dairy butter", in: all).offer == "butter")
    }

    /// A slip in a name whose words hold separators (an apostrophe, an ampersand) is still a typo
    /// match: the query's words are split as the names' are.
    @Test func typosAreFoundInWordsWithSeparators() {
        let all = items(["Creme de bleu d'Auvergne", "Pb&J Sandwich", "Bleu cheese"])
        #expect(Search.search("creme de bneu d'auvergne", in: all).matches.first?.item.name == all[0].name)
        #expect(Search.search("Pb&J Sxndwich", in: all).matches.first?.item.name == all[1].name)
        #expect(Search.search("creme de bneu d'auvergne", in: all).matches.first?.tier == .typo)
    }

    /// A slip in the first letter (swapped, replaced, missing, added in front) is a typo too.
    @Test func slipsInTheFirstLetterAreTypos() {
        let all = items(["Fruit salad", "Cream", "Boisson pomme", "Paprika"])
        for (query, meant) in [("rfuit salad", 0), ("dream", 1), ("ream", 1), ("xcream", 1), ("oBisson pomme", 2)] {
            let first = Search.search(query, in: all).matches.first
            #expect(first?.item.name == all[meant].name, "\(query)")
        }
        #expect(Search.search("dream", in: all).matches.first?.tier == .typo)
    }

    @Test func exactKeyMatchIsPinnedFirstAndSuppressesTheOffer() {
        let all = items(["Oat milk", "Milk chocolate", "Milk"])
        let result = Search.search("MILK", in: all)
        #expect(result.matches.map(\.item.name) == ["Milk", "Milk chocolate", "Oat milk"])
        #expect(result.matches[0].isExact)
        #expect(result.offer == nil)
    }

    @Test func matchesIgnoreAccentsCaseAndWidthBothWays() {
        let all = items(["Crème fraîche", "creme brulee", "Ｍｉｌｋ"])
        #expect(Search.search("creme", in: all).matches.map(\.item.name) == ["creme brulee", "Crème fraîche"])
        #expect(Search.search("CRÈME", in: all).matches.count == 2)
        #expect(Search.search("milk", in: all).matches.first?.isExact == true)
    }

    @Test func offersTheQueryAsTypedWhenNoItemHasItsKey() {
        let all = items(["Oat milk"])
        let result = Search.search("  Milk ", in: all)
        #expect(result.offer == "Milk")
        #expect(result.matches.map(\.item.name) == ["Oat milk"])
        #expect(Search.search("", in: all).offer == nil)
        #expect(Search.search("Bread", in: all).matches.isEmpty)
        #expect(Search.search("Bread", in: all).offer == "Bread")
    }

    @Test func uncheckedComesBeforeCheckedAtTheSamePosition() {
        let all = items(["Milk A", "Milk B"], checked: ["Milk A"])
        #expect(Search.search("milk", in: all).matches.map(\.item.name) == ["Milk B", "Milk A"])
    }

    @Test func resolutionPrefersTheKeyThenAUniqueHitAndRefusesToGuess() {
        let all = items(["Milk", "Oat milk", "Bread"])
        #expect(Search.resolve("milk", in: all) == .found(all[0]))
        #expect(Search.resolve("brea", in: all) == .found(all[2]))
        #expect(Search.resolve("xyz", in: all) == .notFound)
        let two = items(["Oat milk", "Soy milk"])
        guard case .ambiguous(let candidates) = Search.resolve("milk", in: two) else {
            Issue.record("expected an ambiguous resolution")
            return
        }
        #expect(Set(candidates.map(\.name)) == ["Oat milk", "Soy milk"])
        // What contains the typed text wins over slips: "bread" is Breads, not Broad (one edit away).
        let slips = items(["Breads", "Broad", "Cream"])
        #expect(Search.resolve("bread", in: slips) == .found(slips[0]))
        // With nothing containing it, the only slip is the item meant ("craem" → Cream).
        #expect(Search.resolve("craem", in: slips) == .found(slips[2]))
    }
}
