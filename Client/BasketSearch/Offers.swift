public import BasketCore

/// What is offered beside adding what was typed, in one order on both clients (the phone's
/// buttons under the field, the terminal's rows after the create row): the list's closest item
/// ("did you mean …?"), items had before, and the catalogue's names, ranked by how each matches
/// what was typed (the search's ``Tier``); among equals the list's item first, then what was had
/// before, then the catalogue; each name once. So a weak match on the list never hides the
/// catalogue: "choc" offers "+ chocolate" (a prefix) before "did you mean chicken breast?" (a
/// typo), while "mlik" still offers Milk first. A usual that is due and not on the list to buy
/// leads them all ("+ milk, due"), whatever its tier. The web client's offers.js, rule for rule.
public enum Offers {
    /// Where an offer comes from.
    public enum Source: String, Hashable, Sendable {
        /// A usual that is due, not on the list to buy (the replica's usuals).
        case due
        /// The list's closest item (``SearchResult/didYouMean``).
        case list
        /// An item the list had before (removed, or checked and cleared).
        case before
        /// A name of the catalogue, in the device's language.
        case catalogue
    }

    /// One offer: a name, where it comes from, and how it matched what was typed.
    public struct Offer: Hashable, Sendable {
        /// The name it adds.
        public var name: String
        /// Where it comes from.
        public var source: Source
        /// How it matched what was typed.
        public var tier: Tier

        /// An offer of `name` from `source`, matched as `tier`.
        public init(name: String, source: Source, tier: Tier) {
            self.name = name
            self.source = source
            self.tier = tier
        }
    }

    /// The most offers shown beside the offer to add.
    public static let limit = 4

    /// Whether a match is close enough to offer something the list does not have: a name, a word
    /// or a beginning of one, or a slip; not letters inside a word or scattered over a name ("tea"
    /// in "steak").
    public static func isCloseEnough(_ tier: Tier) -> Bool { tier != .fuzzy && tier != .substring }

    /// The offers, best first: `meant` (the list's closest item, whatever its tier), `before`
    /// and `catalogue` (each in its own order, best first), ranked by tier and then by source.
    public static func ranked(
        meant: SearchMatch?, due: [SearchMatch] = [], before: [SearchMatch], catalogue: [SearchMatch],
        limit: Int = limit
    ) -> [Offer] {
        var candidates: [Offer] = due.map { Offer(name: $0.item.name, source: .due, tier: $0.tier) }
        if let meant { candidates.append(Offer(name: meant.item.name, source: .list, tier: meant.tier)) }
        candidates += before.map { Offer(name: $0.item.name, source: .before, tier: $0.tier) }
        candidates += catalogue.map { Offer(name: $0.item.name, source: .catalogue, tier: $0.tier) }
        var seen = Set<String>()
        let unique = candidates.filter { seen.insert(ItemKey.normalize($0.name)).inserted }
        // A stable order: due usuals first, then by tier, then as listed (the list, what was had
        // before, the catalogue).
        func lead(_ offer: Offer) -> Int { offer.source == .due ? 0 : 1 }
        return Array(
            unique.enumerated().sorted {
                (lead($0.element), $0.element.tier, $0.offset) < (lead($1.element), $1.element.tier, $1.offset)
            }.map(\.element).prefix(limit))
    }

    /// The due usuals (not on the list to buy) that match `query` close enough, best first, at
    /// most `limit`.
    public static func due(_ usuals: [Item], query: String, limit: Int = 2) -> [SearchMatch] {
        before(usuals, query: query, limit: limit)
    }

    /// The items had before that match `query`, close enough to offer (best first, at most `limit`).
    public static func before(_ removed: [Item], query: String, limit: Int = 3) -> [SearchMatch] {
        let parsed = Query(query)
        guard parsed.hasText, !removed.isEmpty else { return [] }
        // One search: no index for typing (its pair lists and one-letter answers) is made.
        return Array(
            SearchIndex(items: removed, forTyping: false).search(parsed).matches.filter { isCloseEnough($0.tier) }
                .prefix(limit))
    }
}
