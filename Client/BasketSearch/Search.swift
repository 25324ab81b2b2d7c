public import BasketCore

/// One item found by a search.
public struct SearchMatch: Hashable, Sendable {
    /// The item found.
    public var item: Item
    /// The item's key equals the query's key: the item *is* what was typed.
    public var isExact: Bool
    /// Where the first query word starts in the item's key.
    public var position: Int
    /// How it matched.
    public var tier: Tier
    /// Within a tier's group, higher is better: for substring, typo and fuzzy hits their
    /// `Closeness`; for word-prefix hits how much of the item the words begin.
    public var score: Int
}

/// The result of a query: the matches, exact ones first, and the offer to add the query.
public struct SearchResult: Hashable, Sendable {
    /// The query as typed.
    public var query: String
    /// The name to offer adding: the query as typed (casing kept, white space tidied) when no item
    /// has its key; nil when one does, or when the query is not a valid name.
    public var offer: String?
    /// The matches, best first (exact ones first).
    public var matches: [SearchMatch]

    /// A result for `query` with its offer and matches.
    public init(query: String, offer: String?, matches: [SearchMatch]) {
        self.query = query
        self.offer = offer
        self.matches = matches
    }
}

extension SearchResult {
    /// What Enter does with what was typed, in every client (pinned by the conformance vectors):
    /// the typed text's own item when one has its key, else a new item with what was typed.
    /// Never a prefix, typo, fuzzy or "had it before" row: those are one key away.
    public enum EnterAction: Hashable, Sendable {
        /// The item whose key is the query's: it is what was typed.
        case existing(Item)
        /// Add the query as typed (``SearchResult/offer``).
        case add(String)
        /// Nothing to do (an empty query, or one that is not a valid name).
        case nothing
    }

    /// What Enter does: see ``EnterAction``.
    public var enter: EnterAction {
        if let first = matches.first, first.isExact { return .existing(first.item) }
        if let offer { return .add(offer) }
        return .nothing
    }

    /// When Enter adds something new, the closest item already on the list, shown as "did you
    /// mean …?" right after the offer to add (one key away); nil otherwise.
    public var didYouMean: Item? {
        guard case .add = enter else { return nil }
        return matches.first?.item
    }
}

/// What a name given on the command line refers to.
public enum Resolution: Hashable, Sendable {
    /// One item: the exact key, or the only match.
    case found(Item)
    /// Nothing matches the name.
    case notFound
    /// Several items match and none has the exact key: the caller must not guess.
    case ambiguous([Item])
}

/// Search over item values. Pure: give it the items, it gives back the matches.
///
/// Matching is accent-, case- and width-insensitive through `ItemKey.normalize(_:)`, the same
/// function that gives items their identity. Results come in tiers (``Tier``): the exact key,
/// pinned first; then the key's prefix; then every word a word-prefix (items whose words the
/// query begins more of first, then the words in the order typed). After them, together on one
/// scale (`Closeness`): substrings (also across separators), typos (slips weighed by
/// `EditDistance`: one edit at 4 and 5 letters, two from 7, in characters) and fuzzy
/// subsequences, by how much of the query and of the item's name they cover and how well, so a
/// slip in a whole short name beats letters spread over a long one. Ties: for prefix and
/// word-prefix hits the earlier match, then shorter name, unchecked before checked, more recently
/// added (`lastUsed`), natural order ("Item 2" before "Item 10"), id. For repeated searches over
/// the same items (every keystroke), build a ``SearchIndex`` once.
public enum Search {
    /// Runs `query` over `items`; `lastUsed` says when items were last added (Unix ms).
    /// - Complexity: O(n · m) for n items and a query of length m; each item's key is folded once.
    public static func search(
        _ query: String, in items: [Item], lastUsed: [ItemID: UInt64] = [:], limit: Int = .max
    ) -> SearchResult {
        SearchIndex(items: items, lastUsed: lastUsed, forTyping: false).search(Query(query), limit: limit)
    }

    /// Resolves a name typed by a user: the item with its key, else the only search hit. Typo and
    /// fuzzy hits count only when nothing contains what was typed ("bread" is Breads even where
    /// "Broad" is one slip away).
    public static func resolve(_ query: String, in items: [Item]) -> Resolution {
        let result = search(query, in: items)
        if let first = result.matches.first, first.isExact { return .found(first.item) }
        let contained = result.matches.filter { $0.tier <= .substring }
        let hits = contained.isEmpty ? result.matches : contained
        switch hits.count {
        case 0: return .notFound
        case 1: return .found(hits[0].item)
        default: return .ambiguous(hits.map(\.item))
        }
    }
}
