/// The rule that finds the grocery a name is (``Catalogue/grocery(_:in:)``), step by step. The
/// web client's catalogue.js follows it line for line; the conformance vectors hold them together.
extension Catalogue {
    /// Endings a word of each language changes between singular and plural, as pairs of keys
    /// (folded like ``ItemKey/normalize(_:)``): a name is looked up with each ending swapped for
    /// the other, both ways ("bananas" → "banana", "Hähnchenkeule" → "hahnchenkeulen").
    static let endings: [String: [(String, String)]] = [
        "en": [("ies", "y"), ("oes", "o"), ("ves", "f"), ("es", ""), ("s", "")],
        "de": [("en", ""), ("n", ""), ("e", ""), ("s", ""), ("er", "")],
        "fr": [("s", ""), ("x", "")],
        "es": [("es", ""), ("s", "")],
        "it": [("i", "o"), ("i", "e"), ("e", "a"), ("he", "a"), ("chi", "co")],
        "nl": [("en", ""), ("s", ""), ("'s", ""), ("jes", ""), ("tjes", "")],
        "pl": [("y", "a"), ("i", "a"), ("e", "o"), ("y", ""), ("i", ""), ("ki", "ek")],
        "pt": [("oes", "ao"), ("aes", "ao"), ("s", ""), ("is", "l")],
    ]

    /// The shortest word an ending leaves (so "peas" is not "pe").
    static let shortestStem = 3

    /// Words that say a grocery is frozen, whole words of a key.
    static let frozenWords: Set<String> = [
        "frozen", "tk", "tiefgekuhlt", "tiefgekuhlte", "tiefgekuhlter", "tiefgekuhltes", "gefroren", "gefrorene",
        "surgele", "surgelee", "surgeles", "surgelees", "congele", "congelee", "congeles", "congelees",
        "congelado", "congelada", "congelados", "congeladas", "surgelato", "surgelata", "surgelati", "surgelate",
        "congelato", "congelata", "congelati", "congelate", "bevroren", "diepvries", "mrozony", "mrozona",
        "mrozone", "mrozonych", "mrozonki",
    ]

    /// Beginnings of a compound word that say it is frozen ("Tiefkühlspinat", "冷凍うどん").
    static let frozenPrefixes = ["tiefkuhl", "diepvries", "冷凍"]

    /// Languages whose phrases put the word they are about first ("pechuga de pollo"); in the
    /// others it comes last ("chicken breast", "bio Hafermilch").
    static let headFirst: Set<String> = ["fr", "es", "it", "pt", "pl"]

    /// Languages that write compounds as one word, and the shortest end of one that is looked up.
    static let compounding: [String: Int] = ["de": 3, "nl": 3, "ja": 2]

    /// The index of the freezer among the aisles.
    static let frozenAisle = aisleKeys.firstIndex(of: "frozen") ?? 0

    /// The entry for `key` in `catalogues` (the first language that has it wins at each step).
    static func find(_ key: String, in catalogues: [Language]) -> Entry? {
        guard !key.isEmpty, key.utf8.count <= 200 else { return nil }
        if let entry = named(key, in: catalogues) { return entry }
        let words = key.split(separator: " ").map(String.init)
        if let frozen = frozen(words, in: catalogues) { return frozen }
        if words.count > 1 {
            let headFirst = catalogues.first.map { Self.headFirst.contains($0.code) } ?? false
            for candidate in shorter(words, headFirst: headFirst) {
                if let entry = named(candidate, in: catalogues) { return entry }
            }
        }
        for word in words.reversed() {
            if let entry = compound(word, in: catalogues) { return entry }
        }
        return nil
    }

    /// Step 1: the key itself in each language, then with an ending swapped in each.
    static func named(_ key: String, in catalogues: [Language]) -> Entry? {
        for catalogue in catalogues {
            if let entry = catalogue.entries[key] { return entry }
        }
        for catalogue in catalogues {
            for form in forms(of: key, language: catalogue.code) {
                if let entry = catalogue.entries[form] { return entry }
            }
        }
        return nil
    }

    /// `key` with each of `language`'s endings swapped for its pair, both ways.
    static func forms(of key: String, language: String) -> [String] {
        var out: [String] = []
        let length = key.count
        for (plural, singular) in endings[language] ?? [] {
            if key.hasSuffix(plural), length - plural.count >= shortestStem {
                out.append(String(key.dropLast(plural.count)) + singular)
            }
            if key.hasSuffix(singular), length - singular.count >= shortestStem {
                out.append(String(key.dropLast(singular.count)) + plural)
            }
        }
        return out
    }

    /// Step 2: a frozen word makes it the freezer's, with the icon of what is frozen.
    static func frozen(_ words: [String], in catalogues: [Language]) -> Entry? {
        for (index, word) in words.enumerated() {
            var rest = words
            if frozenWords.contains(word) {
                rest.remove(at: index)
            } else if let prefix = frozenPrefixes.first(where: { word.hasPrefix($0) }) {
                rest[index] = String(word.dropFirst(prefix.count))
            } else {
                continue
            }
            let what = rest.filter { !$0.isEmpty }.joined(separator: " ")
            let icon = what.isEmpty ? nil : named(what, in: catalogues)?.icon
            return Entry(aisle: frozenAisle, icon: icon)
        }
        return nil
    }

    /// Step 3: shorter runs of the words, longest first: the words a phrase is about (its last
    /// words, or its first where `headFirst`), then the others.
    static func shorter(_ words: [String], headFirst: Bool) -> [String] {
        let count = words.count
        let ends = (1..<count).map { words[$0...].joined(separator: " ") }
        let starts = (1..<count).reversed().map { words[..<$0].joined(separator: " ") }
        return headFirst ? starts + ends : ends + starts
    }

    /// Step 4: the longest end of `word` that a compounding language knows as a name.
    static func compound(_ word: String, in catalogues: [Language]) -> Entry? {
        let characters = Array(word)
        for start in characters.indices.dropFirst() {
            let end = String(characters[start...])
            for catalogue in catalogues {
                guard let shortest = compounding[catalogue.code], characters.count - start >= shortest else { continue }
                if let entry = catalogue.entries[end] { return entry }
            }
        }
        return nil
    }
}
