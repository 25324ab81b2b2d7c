import BasketCore

/// What the user typed to add one item: its name and, when given, a quantity and an aisle.
public struct Entry: Hashable, Sendable {
    /// The item name, without the quantity.
    public var name: String
    /// The quantity typed with it ("2", "500 g"); nil when none.
    public var quantity: String?
    /// The aisle typed after it ("milk @dairy", or "milk #dairy" where a shell leaves the `#`),
    /// as typed; ``Catalogue/aisle(named:language:known:)`` finds the aisle it means.
    public var category: String?

    /// An entry for `name`, with `quantity` and `category` when they were typed.
    public init(name: String, quantity: String? = nil, category: String? = nil) {
        self.name = name
        self.quantity = quantity
        self.category = category
    }
}

/// Reads what is typed into an add box: several items separated by commas, semicolons or
/// newlines ("and" does not separate: "mac and cheese" is one item), each with an optional
/// quantity in front ("2 milk", "500 g flour", "500ml cream", "2 x tomatoes", "1/2 lemon",
/// "½ lemon", "1 1/2 cups sugar") or behind ("milk x2", "eggs x 12", "milk 2l", "flour 500 g",
/// "ビール 3本", "ビール3本"). A name that already exists as typed is taken whole ("7 Up"); a
/// quantity with nothing after it is a name ("2 kg"). The web client's entry.js, rule for rule.
public enum EntryParser {
    /// Splits on commas, semicolons and newlines, dropping empty pieces; a comma between two
    /// digits is a decimal comma ("0,5 l Sahne" is one item, "Milch,Brot" two).
    public static func split(_ text: String) -> [String] {
        let characters = Array(text)
        var pieces: [String] = []
        var current = ""
        for (i, character) in characters.enumerated() {
            let isDecimal =
                character == "," && i > 0 && i + 1 < characters.count && isDigit(characters[i - 1])
                && isDigit(characters[i + 1])
            if (character == "," && !isDecimal) || character == ";" || character.isNewline {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        return pieces.filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// An ASCII digit (the only digits a quantity is read from).
    static func isDigit(_ character: Character) -> Bool { character.isASCII && character.isNumber }

    /// Parses every piece of `text`; `existingKeys` holds the keys of items on the list.
    public static func parseAll(_ text: String, existingKeys: Set<String>) -> [Entry] {
        split(text).map { parse($0, existingKeys: existingKeys) }
    }

    /// `entries` with each name that is an item's German spelling without umlauts ("kaese" for
    /// Käse) replaced by that item's name, so adding it adds the item again rather than a second
    /// one. `names` are the names on the list (removed ones too); a name with its own key stays.
    public static func resolvingSpellings(_ entries: [Entry], names: [String]) -> [Entry] {
        var spellings: [[UInt8]: String] = [:]
        var keys = Set<[UInt8]>()
        for name in names {
            keys.insert(Array(ItemKey.normalize(name).utf8))
            if let spelling = SearchIndex.germanSpelling(name), spellings[spelling] == nil {
                spellings[spelling] = name
            }
        }
        guard !spellings.isEmpty else { return entries }
        return entries.map { entry in
            let key = Array(ItemKey.normalize(entry.name).utf8)
            guard !keys.contains(key), let name = spellings[key] else { return entry }
            return Entry(name: name, quantity: entry.quantity, category: entry.category)
        }
    }

    /// Units a quantity may name, compared lower-cased: metric and kitchen measures, packagings,
    /// in the languages of the catalogue.
    static let units: Set<String> = [
        "g", "gr", "gram", "grams", "kg", "kilo", "kilos", "mg", "l", "lt", "litre", "litres", "liter", "liters", "ml",
        "cl", "dl", "cup", "cups", "tbsp", "tsp", "oz", "lb", "lbs", "pack", "packs", "can", "cans", "bottle",
        "bottles", "bag", "bags", "box", "boxes", "dozen", "piece", "pieces", "pcs", "pc", "jar", "jars", "bunch",
        "bunches", "slice", "slices", "loaf", "loaves", "clove", "cloves",
        "stück", "stk", "packung", "pck", "dose", "dosen", "flasche", "flaschen", "bund", "becher", "glas", "tüte",
        "beutel", "scheiben",
        "paquet", "paquets", "boîte", "boîtes", "bouteille", "bouteilles", "tranche", "tranches", "sachet", "sachets",
        "paquete", "paquetes", "lata", "latas", "botella", "botellas", "pz", "bottiglia", "bottiglie", "pak", "fles",
        "flessen", "szt", "opak", "butelka",
    ]

    /// Counters of Japanese and Chinese ("3本", "2個", "1パック"): a unit written right after the
    /// number, and often right after the name ("ビール3本").
    static let counters: [String] = [
        "パック", "切れ", "本", "個", "枚", "袋", "缶", "箱", "束", "玉", "匹", "尾", "房", "丁", "株", "杯", "粒", "斤", "个",
        "瓶", "包", "盒", "罐", "颗", "只", "条", "片", "块",
    ]

    static let vulgarFractions: Set<Character> = [
        "½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞",
    ]

    /// One item: an aisle after an `@` (or a `#`) that follows a space at its end, then a
    /// trailing `x2`, a trailing measure ("2l", "500 g", "3本"), a counter glued to the name, or a
    /// leading quantity (number, fraction, mixed number, then "x" or a unit, or a measure
    /// "500ml"), unless the whole text is already the name of an item.
    public static func parse(_ raw: String, existingKeys: Set<String>) -> Entry {
        let text = raw.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if existingKeys.contains(ItemKey.normalize(text)) { return Entry(name: text) }
        guard let (rest, aisle) = aisleTag(text) else { return parseQuantity(text, existingKeys: existingKeys) }
        var entry = parseQuantity(rest, existingKeys: existingKeys)
        entry.category = aisle
        return entry
    }

    /// "milk @dairy" → ("milk", "dairy"): the aisle after the last " @" or " #", when something
    /// is left on both sides.
    static func aisleTag(_ text: String) -> (name: String, aisle: String)? {
        // `text` has single spaces between its words and none around it (``parse(_:existingKeys:)``).
        let characters = Array(text)
        guard
            let mark = characters.indices.dropFirst().last(where: {
                (characters[$0] == "@" || characters[$0] == "#") && characters[$0 - 1] == " "
            })
        else { return nil }
        let name = String(characters[..<(mark - 1)])
        let aisle = String(characters[(mark + 1)...]).drop { $0 == " " }
        guard !name.isEmpty, !aisle.isEmpty else { return nil }
        return (name, String(aisle))
    }

    /// One item's quantity and name (``parse(_:existingKeys:)`` without the aisle).
    static func parseQuantity(_ text: String, existingKeys: Set<String>) -> Entry {
        if existingKeys.contains(ItemKey.normalize(text)) { return Entry(name: text) }
        var words = text.split(separator: " ").map(String.init)
        if words.count >= 2 {
            let last = words[words.count - 1]
            let lower = last.lowercased()
            // "milk x2", "milk ×3", "eggs x 12".
            for marker in ["x", "×"] where lower.hasPrefix(marker) && isNumber(String(lower.dropFirst(marker.count))) {
                return Entry(
                    name: words.dropLast().joined(separator: " "), quantity: String(lower.dropFirst(marker.count)))
            }
            if words.count >= 3, ["x", "×"].contains(words[words.count - 2].lowercased()), isNumber(last) {
                return Entry(name: words.dropLast(2).joined(separator: " "), quantity: last)
            }
            // "milk 2l", "ビール 3本"; "flour 500 g".
            if isMeasure(last) { return Entry(name: words.dropLast().joined(separator: " "), quantity: last) }
            if words.count >= 3, isNumber(words[words.count - 2]), isUnit(last) {
                return Entry(
                    name: words.dropLast(2).joined(separator: " "), quantity: words.suffix(2).joined(separator: " "))
            }
        }
        // "ビール3本": a counter glued to the name.
        if let last = words.last, let (name, quantity) = gluedCounter(last) {
            return Entry(name: (words.dropLast() + [name]).joined(separator: " "), quantity: quantity)
        }
        // Leading number, fraction or mixed number, then "x" or an optional unit; or a measure.
        var quantity: [String] = []
        if let first = words.first, isMeasure(first) {
            quantity.append(first)
            words.removeFirst()
        } else if let first = words.first, isNumber(first) || isFraction(first) {
            quantity.append(first)
            words.removeFirst()
            if isNumber(quantity[0]), let next = words.first, isFraction(next), words.count > 1 {
                quantity.append(next)  // "1 1/2"
                words.removeFirst()
            }
            if let next = words.first, ["x", "×"].contains(next.lowercased()) {
                words.removeFirst()  // "2 x tomatoes"
            } else if let unit = words.first, isUnit(unit) {
                quantity.append(unit)
                words.removeFirst()
            }
        }
        guard !quantity.isEmpty, !words.isEmpty else { return Entry(name: text) }
        return Entry(name: words.joined(separator: " "), quantity: quantity.joined(separator: " "))
    }

    static func isUnit(_ word: String) -> Bool {
        units.contains(word.lowercased()) || counters.contains(word)
    }

    /// A number with its unit written on: "500ml", "2l", "1.5kg", "3本".
    static func isMeasure(_ word: String) -> Bool {
        let chars = Array(word)
        guard let first = chars.first, first.isASCII, first.isNumber else { return false }
        // The number is the longest run of digits and one separator ("1.5"): at most 12 characters.
        var end = 0
        while end < min(chars.count, 12),
            chars[end].isASCII && (chars[end].isNumber || chars[end] == "." || chars[end] == ",")
        {
            end += 1
        }
        return end < chars.count && isNumber(String(chars[..<end])) && isUnit(String(chars[end...]))
    }

    /// "ビール3本" as ("ビール", "3本"): a name, digits, then a counter.
    static func gluedCounter(_ word: String) -> (String, String)? {
        guard let counter = counters.first(where: { word.hasSuffix($0) }) else { return nil }
        let chars = Array(word.dropLast(counter.count))
        var start = chars.count
        while start > 0, chars[start - 1].isASCII, chars[start - 1].isNumber { start -= 1 }
        guard start > 0, start < chars.count else { return nil }
        return (String(chars[..<start]), String(chars[start...]) + counter)
    }

    /// "2", "1.5", "0,5", "1½".
    static func isNumber(_ s: String) -> Bool {
        guard let first = s.first, first.isASCII, first.isNumber else { return false }
        var seenSeparator = false
        for (i, c) in s.enumerated() {
            if c.isASCII && c.isNumber { continue }
            if (c == "." || c == ",") && !seenSeparator && i > 0 && i < s.count - 1 {
                seenSeparator = true
                continue
            }
            if vulgarFractions.contains(c) && i == s.count - 1 { continue }
            return false
        }
        return true
    }

    /// "1/2", "½".
    static func isFraction(_ s: String) -> Bool {
        if s.count == 1, let c = s.first, vulgarFractions.contains(c) { return true }
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
