import BasketCore
import Synchronization

/// The bundled grocery catalogue: what families buy, in nine languages (English, German, French,
/// Spanish, Italian, Dutch, Polish, Portuguese, Japanese), each grocery with its aisle and, where
/// one emoji says it, its icon. What to suggest when the list and its history have nothing for
/// what was typed ("mil" → "milk"), and the aisle and icon of what is added ("Hafermilch" →
/// Dairy & eggs, 🥛).
///
/// Made by `Scripts/make-catalogue.py` from `groceries.txt` (this project's words: the names
/// people write, their plurals, regional words and the generic words for brands) and from Open
/// Food Facts' ingredients taxonomy, whose names only give an aisle (sources and licences:
/// `Client/BasketSearch/CATALOGUE-SOURCES.md`). The web client reads the same catalogue
/// (`Client/web/catalogue-LANG.json`) and looks names up by the same rule
/// (``grocery(_:in:)``). Suggestions from it rank below the user's own history.
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

    /// What the catalogue knows of a grocery: its aisle, named in the language asked for, and
    /// its icon (an emoji) when it has one.
    public struct Grocery: Hashable, Sendable {
        /// The aisle's name.
        public var aisle: String
        /// The grocery's emoji, when one says it unmistakably.
        public var icon: String?

        /// A grocery of `aisle`, with `icon`.
        public init(aisle: String, icon: String? = nil) {
            self.aisle = aisle
            self.icon = icon
        }
    }

    /// One entry of a language's catalogue: its aisle (an index into the aisles, the same in
    /// every language) and its icon.
    struct Entry: Hashable, Sendable {
        let aisle: Int
        let icon: String?
    }

    /// One language's catalogue: its aisles in a shop's order, the names it suggests, and every
    /// name and form it knows by key.
    struct Language: Sendable {
        let code: String
        let aisles: [String]
        let names: [String]
        let entries: [String: Entry]
        let index: SearchIndex
    }

    /// The names one language suggests (empty for a language the catalogue lacks).
    public static func names(in language: String) -> [String] { load(language)?.names ?? [] }

    /// The aisles of one language, in the order a shop is walked: a list's aisle order to start from.
    public static func aisles(in language: String) -> [String] { aisleNames[language] ?? [] }

    /// Every language's aisle names, read from the head of its data (before the first empty
    /// line) without loading its groceries or building their index: naming an aisle, or finding
    /// a list's language from its aisles, needs only these.
    static let aisleNames: [String: [String]] = data.mapValues { text in
        text.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }.map(String.init)
    }

    /// The aisle of `name`, named in `language` (a list's language), looked up in that language
    /// and in English (``grocery(_:in:)``). Nil when neither knows it.
    public static func aisle(of name: String, language: String) -> String? {
        grocery(name, in: [language])?.aisle
    }

    /// The aisle a typed aisle means ("milk @dairy"): one the list has already, with the same key
    /// (`known`, in the list's spelling); else a catalogue aisle whose key ("dairy"), name in any
    /// language ("Milchprodukte & Eier") or first words ("Dairy", "obst") it is, named in
    /// `language`; else the aisle as typed.
    public static func aisle(named typed: String, language: String, known: [String]) -> String {
        let key = ItemKey.normalize(typed)
        guard !key.isEmpty else { return typed }
        if let own = known.first(where: { ItemKey.normalize($0) == key }) { return own }
        // A language the catalogue lacks names its aisles in English, as everywhere else.
        let own = aisleNames[language] == nil ? "en" : language
        guard let aisles = aisleNames[own] else { return typed }
        if let index = aisleKeys.firstIndex(of: key), aisles.indices.contains(index) { return aisles[index] }
        for code in [own] + Catalogue.languages {
            for (index, name) in (aisleNames[code] ?? []).enumerated() where aisles.indices.contains(index) {
                let aisle = ItemKey.normalize(name)
                if aisle == key || (aisle.hasPrefix(key + " ")) { return aisles[index] }
            }
        }
        return typed
    }

    /// The language a list's aisles are named in when the list does not say (a list made before
    /// lists had one): the language whose aisle names most of `categories` are, nil when none is.
    /// Ties go to the first language in ``languages``' order.
    public static func language(ofAisles categories: [String]) -> String? {
        let keys = Set(categories.map(ItemKey.normalize))
        var best: (code: String, count: Int)?
        for code in languages {
            let count = aisles(in: code).filter { keys.contains(ItemKey.normalize($0)) }.count
            if count > 0, count > best?.count ?? 0 { best = (code, count) }
        }
        return best?.code
    }

    /// The icon of `name` (``grocery(_:in:)``), nil when the catalogue has none for it.
    public static func icon(of name: String, language: String) -> String? {
        grocery(name, in: [language])?.icon
    }

    /// The grocery `name` is, looked up in `languages` and then in English, by one rule the web
    /// client follows too (`catalogue.js`, held together by the conformance vectors):
    ///
    /// 1. the name, or a form of it (plural or singular, by each language's endings), as the
    ///    catalogue has it;
    /// 2. a word that says frozen ("frozen", "TK-", "surgelé", "congelado", "冷凍…"): the freezer;
    /// 3. fewer of its words, the ones a phrase is about first ("oat milk" → milk in English,
    ///    "pechuga de pollo" → pollo in Spanish: the first language's word order decides);
    /// 4. the end of a compound word in German, Dutch or Japanese ("Hafermilch" → Milch,
    ///    "いちごジャム" → ジャム), the longest known end first.
    ///
    /// The aisle is named in the first of `languages` the catalogue has (English when none).
    public static func grocery(_ name: String, in languages: [String]) -> Grocery? {
        let consulted = consultedLanguages(languages)
        guard let first = consulted.first, let entry = find(ItemKey.normalize(name), in: consulted) else { return nil }
        guard first.aisles.indices.contains(entry.aisle) else { return nil }
        return Grocery(aisle: first.aisles[entry.aisle], icon: entry.icon)
    }

    /// The catalogues of `languages` that exist, then English, each once.
    static func consultedLanguages(_ languages: [String]) -> [Language] {
        var seen = Set<String>()
        return (languages + ["en"]).compactMap { code in
            guard seen.insert(code).inserted else { return nil }
            return load(code)
        }
    }

    /// Catalogue names matching `query` in `language`, best first (the search's ranking; names,
    /// words and their beginnings, and slips, not letters inside words), leaving out those whose
    /// key is in `excluding` (on the list, or suggested from history already). Nothing for a
    /// query without text.
    public static func suggestions(
        _ query: String, language: String, excluding: Set<String> = [], limit: Int = 5
    ) -> [String] {
        suggestionMatches(query, language: language, excluding: excluding, limit: limit).map(\.item.name)
    }

    /// ``suggestions(_:language:excluding:limit:)`` with how each matched (its ``Tier``), which
    /// ``Offers`` ranks by.
    public static func suggestionMatches(
        _ query: String, language: String, excluding: Set<String> = [], limit: Int = 5
    ) -> [SearchMatch] {
        let parsed = Query(query)
        guard parsed.hasText, limit > 0, let index = load(language)?.index else { return [] }
        return Array(
            index.search(parsed, limit: limit + excluding.count + 16).matches
                .filter { Offers.isCloseEnough($0.tier) && !excluding.contains(ItemKey.normalize($0.item.name)) }
                .prefix(limit))
    }

    /// Each language read (and its index built) the first time it is asked for.
    private static let loaded = Mutex<[String: Language]>([:])

    static func load(_ language: String) -> Language? {
        guard let text = data[language] else { return nil }
        return loaded.withLock { cache in
            if let done = cache[language] { return done }
            let catalogue = parse(text, code: language)
            cache[language] = catalogue
            return catalogue
        }
    }

    /// A language's data (``data``): aisles, a blank line, the names suggested, a blank line, the
    /// forms only looked up; each name with its aisle's number and its icon, tab-separated. A
    /// second name with the same key is left out: the first stays.
    static func parse(_ text: String, code: String) -> Language {
        let sections = text.split(separator: "\n", omittingEmptySubsequences: false)
            .split(separator: "", omittingEmptySubsequences: false)
        let aisles = sections.first.map { $0.map(String.init) } ?? []
        var names: [String] = []
        var entries: [String: Entry] = [:]
        for (number, section) in sections.dropFirst().prefix(2).enumerated() {
            for line in section {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 3, let aisle = Int(fields[1]), aisles.indices.contains(aisle) else { continue }
                let name = String(fields[0])
                let key = ItemKey.normalize(name)
                guard !key.isEmpty, entries[key] == nil else { continue }
                entries[key] = Entry(aisle: aisle, icon: fields[2].isEmpty ? nil : String(fields[2]))
                if number == 0 { names.append(name) }
            }
        }
        let list = ListID(raw: ID128(high: 0, low: 0))
        let items = names.map { Item(id: ItemID(list: list, key: ItemKey.normalize($0)), name: $0) }
        return Language(
            code: code, aisles: aisles, names: names, entries: entries,
            index: SearchIndex(items: items, forTyping: false))
    }
}
