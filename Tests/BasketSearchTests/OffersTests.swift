import BasketCore
import Testing

@testable import BasketSearch

struct OffersTests {
    static let list = ListID(hex: "0123456789abcdef0123456789abcdef")!

    static func match(_ name: String, _ tier: Tier) -> SearchMatch {
        SearchMatch(
            item: Item(id: ItemID(list: list, key: ItemKey.normalize(name)), name: name), isExact: tier == .exact,
            position: 0, tier: tier, score: 0)
    }

    /// By tier first, then the list's item, what was had before, the catalogue; each name once.
    @Test func offersAreRankedByTierThenBySource() {
        let offers = Offers.ranked(
            meant: Self.match("chicken breast", .typo),
            before: [Self.match("Chocolate cookies", .prefix), Self.match("chorizo", .fuzzy)],
            catalogue: [Self.match("chocolate", .prefix), Self.match("chocolate cookies", .prefix)], limit: 10)
        #expect(
            offers.map(\.name) == ["Chocolate cookies", "chocolate", "chicken breast", "chorizo"])
        #expect(offers.map(\.source) == [.before, .catalogue, .list, .before])
        let equal = Offers.ranked(
            meant: Self.match("Milk", .typo), before: [Self.match("Oat milk", .typo)],
            catalogue: [Self.match("soy milk", .typo)])
        #expect(equal.map(\.source) == [.list, .before, .catalogue])
        #expect(
            Offers.ranked(meant: nil, before: [], catalogue: (0..<9).map { Self.match("c\($0)", .prefix) }).count == 4)
    }

    @Test(arguments: [
        ("zucchini", "sukini"), ("zukini", "sukini"), ("champignons", "sampinons"), ("schampions", "sampions"),
        ("croissant", "kroasant"), ("ketchup", "ketsup"), ("ketschup", "ketsup"), ("quark", "kvark"),
        ("joghurt", "jogurt"), ("käse", "käse"),
    ])
    func wordsFoldToHowTheySound(word: String, sound: String) {
        #expect(SoundSpelling.fold(Array(word.utf8)) == Array(sound.utf8))
    }
}
