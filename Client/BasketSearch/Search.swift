public import BasketCore

/// One item found by a search.
public struct SearchMatch: Hashable, Sendable {
    public var item: Item
    /// The item's key equals the query's key: the item *is* what was typed.
    public var isExact: Bool
    /// Where the query starts in the item's key (0 for exact and prefix matches).
    public var position: Int
}

/// The answer to a query: the matches, exact ones first, and the offer to add the query.
public struct SearchResult: Hashable, Sendable {
    public var query: String
    /// The name to offer adding: the query as typed (casing kept, white space tidied) when no item
    /// has its key; nil when one does, or when the query is not a valid name.
    public var offer: String?
    public var matches: [SearchMatch]
}

/// What a name given on the command line refers to.
public enum Resolution: Hashable, Sendable {
    case found(Item)
    case notFound
    /// Several items match and none has the exact key: the caller must not guess.
    case ambiguous([Item])
}

/// Search over item values. Pure: give it the items, it gives back the matches.
///
/// Matching is accent-, case- and width-insensitive through ``ItemKey/normalize(_:)``, the same
/// function that gives items their identity: an item whose key equals the query's is an exact
/// match and is pinned first; every other item whose key contains the query's key follows, earlier
/// and shorter matches first, unchecked before checked.
public enum Search {
    /// Runs `query` over `items`.
    /// - Complexity: O(n · m) for n items and a query of length m; each item's key is folded once.
    public static func search(_ query: String, in items: [Item], limit: Int = .max) -> SearchResult {
        let key = ItemKey.normalize(query)
        let offer = try? ItemName.clean(query)
        guard !key.isEmpty else {
            let all = items.map { SearchMatch(item: $0, isExact: false, position: 0) }
            return SearchResult(query: query, offer: nil, matches: Array(all.prefix(limit)))
        }
        let needle = Array(key.utf8)
        var matches: [SearchMatch] = []
        for item in items {
            let itemKey = Array(ItemKey.normalize(item.name).utf8)
            if itemKey == needle {
                matches.append(SearchMatch(item: item, isExact: true, position: 0))
            } else if let position = firstRange(of: needle, in: itemKey) {
                matches.append(SearchMatch(item: item, isExact: false, position: position))
            }
        }
        matches.sort { a, b in
            if a.isExact != b.isExact { return a.isExact }
            if a.position != b.position { return a.position < b.position }
            if a.item.isChecked != b.item.isChecked { return !a.item.isChecked }
            if a.item.name.count != b.item.name.count { return a.item.name.count < b.item.name.count }
            return (a.item.name, a.item.id) < (b.item.name, b.item.id)
        }
        let hasExact = matches.first?.isExact == true
        return SearchResult(query: query, offer: hasExact ? nil : offer, matches: Array(matches.prefix(limit)))
    }

    /// Resolves a name typed by a user: the item with its key, else the only search hit.
    public static func resolve(_ query: String, in items: [Item]) -> Resolution {
        let result = search(query, in: items)
        if let first = result.matches.first, first.isExact { return .found(first.item) }
        switch result.matches.count {
        case 0: return .notFound
        case 1: return .found(result.matches[0].item)
        default: return .ambiguous(result.matches.map(\.item))
        }
    }

    static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        outer: while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count {
                    if haystack[i + j] != needle[j] {
                        i += 1
                        continue outer
                    }
                    j += 1
                }
                return i
            }
            i += 1
        }
        return nil
    }
}
