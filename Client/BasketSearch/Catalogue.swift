import BasketCore
import Synchronization

/// The bundled grocery catalogue: a few hundred everyday groceries in each of nine languages
/// (English, German, French, Spanish, Italian, Dutch, Polish, Portuguese, Japanese), each with its
/// aisle. What to suggest when the list and its history have nothing for what was typed ("mil" →
/// "milk"), and the aisle an item added without one takes ("milk" → "Dairy & eggs").
///
/// Made by `Scripts/make-catalogue.py` from Open Food Facts' ingredients taxonomy, with household
/// goods and aisle names of this project's own (sources and licence:
/// `Client/BasketSearch/CATALOGUE-SOURCES.md`). The web client reads the same catalogue
/// (`Client/web/catalogue-LANG.json`). Suggestions from it rank below the user's own history.
public enum Catalogue {
    /// The languages the catalogue has, as two-letter codes.
    public static var languages: [String] { data.keys.sorted() }

    /// The catalogue's language for a process environment: the language of `LC_ALL`, else
    /// `LC_MESSAGES`, else `LANG` ("fr_FR.UTF-8" → "fr"), when the catalogue has it; else English.
    public static func language(environment: [String: String]) -> String {
        for variable in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment[variable], !value.isEmpty else { continue }
            let code = String(value.prefix { $0.isLetter }).lowercased()
            return data[code] == nil ? "en" : code
        }
        return "en"
    }

    /// One language's catalogue: its aisles in a shop's order, and its groceries with their aisle.
    struct Language: Sendable {
        let aisles: [String]
        let names: [String]
        /// Each name's aisle (an index into `aisles`), by the name's key.
        let aisleByKey: [String: Int]
        let index: SearchIndex
    }

    /// The names of one language (empty for a language the catalogue lacks).
    public static func names(in language: String) -> [String] { load(language)?.names ?? [] }

    /// The aisles of one language, in the order a shop is walked: a list's aisle order to start from.
    public static func aisles(in language: String) -> [String] { load(language)?.aisles ?? [] }

    /// The aisle of `name` in `language`'s catalogue (by key: "Milk" and "milk" alike), named in
    /// that language; a name only the English catalogue has ("milk" on a German list) takes the
    /// same aisle, named in `language` (every language lists the same aisles in the same order).
    /// Nil when neither has it.
    public static func aisle(of name: String, language: String) -> String? {
        guard let catalogue = load(language) ?? load("en") else { return nil }
        for key in keys(of: name) {
            if let aisle = catalogue.aisleByKey[key] { return catalogue.aisles[aisle] }
        }
        for key in keys(of: name) {
            if let aisle = load("en")?.aisleByKey[key], catalogue.aisles.indices.contains(aisle) {
                return catalogue.aisles[aisle]
            }
        }
        return nil
    }

    /// The keys a name is looked up by: its own, then without a plural's "s" or "es" ("bananas",
    /// "tomatoes"), for names of more than three letters.
    static func keys(of name: String) -> [String] {
        let key = ItemKey.normalize(name)
        guard key.count > 3 else { return [key] }
        var out = [key]
        if key.hasSuffix("s") { out.append(String(key.dropLast())) }
        if key.hasSuffix("es") { out.append(String(key.dropLast(2))) }
        return out
    }

    /// Catalogue names matching `query` in `language`, best first (the search's ranking; names,
    /// words and their beginnings, and slips, not letters inside words), leaving out those whose
    /// key is in `excluding` (on the list, or suggested from history already). Nothing for a
    /// query without text.
    public static func suggestions(
        _ query: String, language: String, excluding: Set<String> = [], limit: Int = 5
    ) -> [String] {
        let parsed = Query(query)
        guard parsed.hasText, limit > 0, let index = load(language)?.index else { return [] }
        // Letters inside a word or scattered over a name are too loose a reason to suggest it
        // ("tea" in "steak").
        return Array(
            index.search(parsed, limit: limit + excluding.count + 16).matches
                .filter { $0.tier != .fuzzy && $0.tier != .substring }
                .map(\.item.name).filter { !excluding.contains(ItemKey.normalize($0)) }.prefix(limit))
    }

    /// Each language read (and its index built) the first time it is asked for.
    private static let loaded = Mutex<[String: Language]>([:])

    static func load(_ language: String) -> Language? {
        guard let text = data[language] else { return nil }
        return loaded.withLock { cache in
            if let done = cache[language] { return done }
            let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
            let blank = parts.firstIndex(of: "") ?? parts.endIndex
            let aisles = parts[..<blank].map(String.init)
            var names: [String] = []
            var aisleByKey: [String: Int] = [:]
            for line in parts[blank...] {
                let fields = line.split(separator: "\t")
                guard fields.count == 2, let aisle = Int(fields[1]), aisles.indices.contains(aisle) else { continue }
                let name = String(fields[0])
                // Two names with one key ("Crème", "creme") are one grocery: the first stays.
                guard aisleByKey[ItemKey.normalize(name)] == nil else { continue }
                names.append(name)
                aisleByKey[ItemKey.normalize(name)] = aisle
            }
            let list = ListID(raw: ID128(high: 0, low: 0))
            let items = names.map { Item(id: ItemID(list: list, key: ItemKey.normalize($0)), name: $0) }
            let catalogue = Language(
                aisles: aisles, names: names, aisleByKey: aisleByKey,
                index: SearchIndex(items: items, forTyping: false))
            cache[language] = catalogue
            return catalogue
        }
    }
}
