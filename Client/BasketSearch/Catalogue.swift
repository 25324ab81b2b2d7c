import BasketCore
import Synchronization

/// A small bundled catalogue of common grocery names in 14 languages: what to suggest when the
/// list and its history have nothing for what was typed ("mil" → "milk").
///
/// The names are the Unicode CLDR names of the food and drink emoji (made by
/// `Scripts/make-catalogue.py`; sources and licences in its header), so every language has the
/// same ~100 things. Suggestions from it rank below the user's own history.
public enum Catalogue {
    /// The languages the catalogue has, as two-letter codes.
    public static var languages: [String] { names.keys.sorted() }

    /// The catalogue's language for a process environment: the language of `LC_ALL`, else
    /// `LC_MESSAGES`, else `LANG` ("fr_FR.UTF-8" → "fr"), when the catalogue has it; else English.
    public static func language(environment: [String: String]) -> String {
        for variable in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment[variable], !value.isEmpty else { continue }
            let code = String(value.prefix { $0.isLetter }).lowercased()
            return names[code] == nil ? "en" : code
        }
        return "en"
    }

    /// The names of one language (empty for a language the catalogue lacks).
    public static func names(in language: String) -> [String] { names[language] ?? [] }

    /// Catalogue names matching `query` in `language`, best first (the search's ranking; names,
    /// words and their beginnings, and slips, not letters inside words), leaving out those whose
    /// key is in `excluding` (on the list, or suggested from history already). Nothing for a
    /// query without text.
    public static func suggestions(
        _ query: String, language: String, excluding: Set<String> = [], limit: Int = 5
    ) -> [String] {
        let parsed = Query(query)
        guard parsed.hasText, limit > 0, let index = index(for: language) else { return [] }
        // Letters inside a word or scattered over a name are too loose a reason to suggest it
        // ("tea" in "steak").
        return Array(
            index.search(parsed, limit: limit + excluding.count + 16).matches
                .filter { $0.tier != .fuzzy && $0.tier != .substring }
                .map(\.item.name).filter { !excluding.contains(ItemKey.normalize($0)) }.prefix(limit))
    }

    /// One index per language, built the first time it is asked for.
    private static let indexes = Mutex<[String: SearchIndex]>([:])

    static func index(for language: String) -> SearchIndex? {
        guard let list = names[language] else { return nil }
        return indexes.withLock { built in
            if let index = built[language] { return index }
            let catalogue = ListID(raw: ID128(high: 0, low: 0))
            let items = list.map { Item(id: ItemID(list: catalogue, key: ItemKey.normalize($0)), name: $0) }
            let index = SearchIndex(items: items, forTyping: false)
            built[language] = index
            return index
        }
    }
}
