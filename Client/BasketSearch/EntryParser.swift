import BasketCore

/// What the user typed to add one item: its name and, when given, a quantity, an aisle and a note.
public struct Entry: Hashable, Sendable {
    /// The item name, without the quantity.
    public var name: String
    /// The quantity typed with it ("2", "500 g"); nil when none.
    public var quantity: String?
    /// The aisle typed after it ("milk @dairy", or "milk #dairy" where a shell leaves the `#`),
    /// as typed; ``Catalogue/aisle(named:language:known:)`` finds the aisle it means.
    public var category: String?
    /// A note typed with it: in parentheses ("flour (for the cake)"), or after a comma in a line
    /// of several lines ("1 onion, chopped"); nil when none.
    public var note: String?
    /// The line as typed, spaces collapsed: kept with the item, so nothing typed is lost.
    public var typed: String?

    /// An entry for `name`, with `quantity`, `category`, `note` and the text it was `typed` as.
    public init(
        name: String, quantity: String? = nil, category: String? = nil, note: String? = nil, typed: String? = nil
    ) {
        self.name = name
        self.quantity = quantity
        self.category = category
        self.note = note
        self.typed = typed
    }
}

/// Reads what is typed into an add box: several items separated by commas, semicolons or
/// newlines ("and" does not separate: "mac and cheese" is one item), or, for text of several
/// lines (a recipe, a chat message), one item per line. Each item may carry a quantity in front
/// ("2 milk", "500 g flour", "500ml cream", "2 x tomatoes", "2x milk", "1/2 lemon", "½ lemon",
/// "1 1/2 cups sugar", "2-3 onions", "zwei Flaschen Wasser", "2 c. à s. d'huile") or behind
/// ("milk x2", "eggs x 12", "milk 2l", "flour 500 g", "ビール 3本", "ビール3本"), a note in
/// parentheses, and a bullet, number or checkbox in front, which is dropped. A name that already
/// exists as typed is taken whole, as are names that begin with a number ("7 Up"); a quantity
/// with nothing after it is a name ("2 kg"). The web client's entry.js, rule for rule.
public enum EntryParser {
    /// Splits on commas, semicolons and newlines, dropping empty pieces; a comma between two
    /// digits is a decimal comma ("0,5 l Sahne" is one item, "Milch,Brot" two).
    public static func split(_ text: String) -> [String] {
        let characters = Array(text)
        var pieces: [String] = []
        var current = ""
        for (i, character) in characters.enumerated() {
            if isSeparator(characters, i) || character.isNewline {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        return pieces.filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// The items of `text`: its lines when it has two or more that are not blank (a pasted recipe
    /// or chat message: a comma inside a line then starts the item's note), else ``split(_:)``.
    public static func pieces(_ text: String) -> [String] {
        let lines = text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        return lines.count >= 2 ? lines.map(String.init) : split(text)
    }

    /// Whether `characters[i]` separates items: a semicolon, or a comma that is not between digits.
    static func isSeparator(_ characters: [Character], _ i: Int) -> Bool {
        let character = characters[i]
        if character == ";" { return true }
        guard character == "," else { return false }
        return !(i > 0 && i + 1 < characters.count && isDigit(characters[i - 1]) && isDigit(characters[i + 1]))
    }

    /// An ASCII digit (the only digits a quantity is read from).
    static func isDigit(_ character: Character) -> Bool { character.isASCII && character.isNumber }

    /// Parses every piece of `text`; `existingKeys` holds the keys of items on the list.
    public static func parseAll(_ text: String, existingKeys: Set<String>) -> [Entry] {
        pieces(text).map { parse($0, existingKeys: existingKeys) }
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
            var spelled = entry
            spelled.name = name
            return spelled
        }
    }

    /// One item: a bullet, number or checkbox in front is dropped; an aisle after an `@` (or a
    /// `#`) that follows a space at its end, a note after a comma and one in parentheses are
    /// taken out (parentheses holding only a quantity give the quantity: "Eier (10 Stück)"); then
    /// the quantity and the name (`parseQuantity`). Text that is already the
    /// name of an item is taken whole.
    public static func parse(_ raw: String, existingKeys: Set<String>) -> Entry {
        let typed = raw.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if existingKeys.contains(ItemKey.normalize(typed)) { return Entry(name: typed, typed: typed) }
        var text = withoutLineMark(typed)
        if text.isEmpty { return Entry(name: typed, typed: typed) }
        var entry = Entry(name: text, typed: typed)
        if existingKeys.contains(ItemKey.normalize(text)) { return entry }
        if let (rest, aisle) = aisleTag(text) {
            text = rest
            entry.category = aisle
        }
        var notes: [String] = []
        if let (rest, note) = commaNote(text) {
            text = rest
            notes.append(note)
        }
        var inParentheses: String?
        if let (rest, inner) = parenthesised(text) {
            text = rest
            if let quantity = standaloneQuantity(inner.split(separator: " ").map(String.init)) {
                inParentheses = quantity
            } else {
                notes.insert(inner, at: 0)
            }
        }
        // "Milch, 1 l": a note that is only a quantity is the quantity.
        if inParentheses == nil, let note = notes.last,
            let quantity = standaloneQuantity(note.split(separator: " ").map(String.init))
        {
            notes.removeLast()
            inParentheses = quantity
        }
        let read = parseQuantity(text, existingKeys: existingKeys)
        entry.name = read.name
        entry.quantity = read.quantity ?? inParentheses
        if read.quantity != nil, let inParentheses { notes.insert(inParentheses, at: 0) }
        entry.note = notes.isEmpty ? nil : notes.joined(separator: ", ")
        return entry
    }

    /// `text` without the bullet, dash, checkbox or number ("1.", "2)") a list line begins with.
    static func withoutLineMark(_ text: String) -> String {
        var text = Substring(text)
        for _ in 0..<2 {
            if let mark = lineMarks.first(where: { text.hasPrefix($0 + " ") }) {
                text = text.dropFirst(mark.count + 1)
                continue
            }
            // "1. milk", "12) eggs": at most three digits, a dot or a bracket, a space.
            let digits = text.prefix(4).prefix(while: isDigit)
            let after = text.dropFirst(digits.count)
            if !digits.isEmpty, digits.count <= 3, after.first == "." || after.first == ")",
                after.dropFirst().first == " "
            {
                text = after.dropFirst(2)
                continue
            }
            break
        }
        return String(text)
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

    /// "1 onion, chopped" → ("1 onion", "chopped"): what follows the first comma or semicolon that
    /// separates, when something is on both sides (only a line of several lines has one).
    static func commaNote(_ text: String) -> (rest: String, note: String)? {
        let characters = Array(text)
        guard let i = characters.indices.first(where: { isSeparator(characters, $0) }) else { return nil }
        let rest = String(characters[..<i]).trimmingSpaces
        let note = String(characters[(i + 1)...]).trimmingSpaces
        return rest.isEmpty || note.isEmpty ? nil : (rest, note)
    }

    /// "flour (for the cake) 500 g" → ("flour 500 g", "for the cake"): the last group in
    /// parentheses that stands apart (a space or the text's edge on both sides: "alert(3)" is a
    /// name), when something is left around it.
    static func parenthesised(_ text: String) -> (rest: String, inner: String)? {
        let characters = Array(text)
        guard let open = characters.lastIndex(of: "("),
            let close = characters[open...].firstIndex(of: ")"),
            open == 0 || characters[open - 1] == " ", close + 1 == characters.count || characters[close + 1] == " "
        else { return nil }
        let inner = String(characters[(open + 1)..<close]).trimmingSpaces
        let rest = (String(characters[..<open]) + " " + String(characters[(close + 1)...]))
            .split(separator: " ").joined(separator: " ")
        return inner.isEmpty || rest.isEmpty ? nil : (rest, inner)
    }

    /// One item's quantity and name (``parse(_:existingKeys:)`` without the aisle and note).
    static func parseQuantity(_ text: String, existingKeys: Set<String>) -> (name: String, quantity: String?) {
        if existingKeys.contains(ItemKey.normalize(text)) { return (text, nil) }
        let words = text.split(separator: " ").map(String.init)
        if let numbered = numberedName(words) { return numbered }
        if let trailing = trailingQuantity(words) { return trailing }
        // "ビール3本": a counter glued to the name.
        if let last = words.last, let (name, quantity) = gluedCounter(last) {
            return ((words.dropLast() + [name]).joined(separator: " "), quantity)
        }
        guard let leading = leadingQuantity(words) else { return (text, nil) }
        if !leading.rest.isEmpty { return (leading.rest.joined(separator: " "), leading.quantity) }
        // "2 rolls", "zwei Flaschen": a packaging with nothing after it is what is bought.
        if let unit = leading.packaging { return (unit, leading.amount) }
        return (text, nil)
    }

    /// A name that begins with a number ("7 Up", "4711 Echt Kölnisch Wasser") taken whole, or
    /// after a quantity ("2 7 Up"); nil for other text.
    static func numberedName(_ words: [String]) -> (name: String, quantity: String?)? {
        let key = ItemKey.normalize(words.joined(separator: " "))
        for name in numberedNames {
            if key == name || key.hasPrefix(name + " ") { return (words.joined(separator: " "), nil) }
            let count = name.split(separator: " ").count
            guard words.count > count, key.hasSuffix(" " + name),
                let quantity = standaloneQuantity(Array(words.dropLast(count)))
            else { continue }
            return (words.suffix(count).joined(separator: " "), quantity)
        }
        return nil
    }

    /// A quantity written after the name: "milk x2", "milk 2x", "eggs x 12", "milk 2l",
    /// "ビール 3本", "flour 500 g".
    static func trailingQuantity(_ words: [String]) -> (name: String, quantity: String?)? {
        guard words.count >= 2 else { return nil }
        let last = words[words.count - 1]
        let lower = last.lowercased()
        let name = words.dropLast().joined(separator: " ")
        if let times = timesAmount(lower) { return (name, times) }
        if words.count >= 3, times.contains(words[words.count - 2].lowercased()), isAmount(last) {
            return (words.dropLast(2).joined(separator: " "), last)
        }
        if isMeasure(last) { return (name, last) }
        if words.count >= 3, isAmount(words[words.count - 2]), isUnit(last) {
            return (words.dropLast(2).joined(separator: " "), words.suffix(2).joined(separator: " "))
        }
        return nil
    }

    /// "x2", "×3", "2x", "3×" as the amount; nil for another word.
    static func timesAmount(_ lower: String) -> String? {
        for mark in times {
            if lower.hasPrefix(mark), isAmount(String(lower.dropFirst(mark.count))) {
                return String(lower.dropFirst(mark.count))
            }
            if lower.hasSuffix(mark), isAmount(String(lower.dropLast(mark.count))) {
                return String(lower.dropLast(mark.count))
            }
        }
        return nil
    }

    static let times = ["x", "×"]

    /// A quantity read from the front of `words`: the amount with its unit, the words after it,
    /// and the unit when it is a single packaging word (``packagings``).
    struct Leading {
        var quantity: String
        var amount: String
        var packaging: String?
        var rest: [String]
    }

    /// The quantity in front: an optional "about", then a measure ("500ml"), "2x", or an amount
    /// (a number, fraction, range, mixed number or number word; "a"/"an" before a unit), then
    /// "x" or a unit of up to three words, then a linking "of"/"de"/"di"/"d'" after a unit.
    static func leadingQuantity(_ words: [String]) -> Leading? {
        var i = 0
        if words.count > 1, approximately.contains(words[0].lowercased()), startsAmount(words[1]) { i = 1 }
        guard i < words.count else { return nil }
        let first = words[i]
        let lower = first.lowercased()
        var amount: [String] = []
        var unit: String?
        i += 1
        if isMeasure(first) {
            amount.append(first)
            unit = ""
        } else if let times = timesAmount(lower), first.first.map(isDigit) == true {
            return Leading(quantity: times, amount: times, rest: Array(words[i...]))
        } else if isAmount(first) {
            amount.append(first)
            if isNumber(first), i + 1 < words.count, isFraction(words[i]) {
                amount.append(words[i])  // "1 1/2"
                i += 1
            }
        } else if let value = numberWords[lower], i < words.count {
            amount.append(value)
            // "half a lemon", "half an onion"; "eine halbe Gurke", "una media sandía".
            if value == "½", i + 1 < words.count, articles.contains(words[i].lowercased()) { i += 1 }
            if value == "1", i + 1 < words.count, numberWords[words[i].lowercased()] == "½" {
                amount = ["½"]
                i += 1
            }
        } else if articles.contains(lower), i < words.count, unitLength(words, at: i) > 0 {
            amount.append("1")
        } else {
            return nil
        }
        var packaging: String?
        if unit == nil, i < words.count, times.contains(words[i].lowercased()) {
            i += 1  // "2 x tomatoes"; "2 x 500ml cream", "2 x 400 g tomatoes"
            if i + 1 < words.count, isMeasure(words[i]) {
                amount += [words[i - 1].lowercased(), words[i]]
                unit = ""
                i += 1
            } else if i + 2 < words.count, isAmount(words[i]), unitLength(words, at: i + 1) == 1 {
                amount += [words[i - 1].lowercased(), words[i], words[i + 1]]
                unit = ""
                i += 2
            }
        } else if unit == nil, case let length = unitLength(words, at: i), length > 0 {
            unit = words[i..<(i + length)].joined(separator: " ")
            if length == 1, packagings.contains(bare(words[i].lowercased())) { packaging = words[i] }
            i += length
        }
        var rest = Array(words[i...])
        if unit != nil { rest = withoutLink(rest) }
        let quantity = (amount + (unit.map { $0.isEmpty ? [] : [$0] } ?? [])).joined(separator: " ")
        return Leading(quantity: quantity, amount: amount.joined(separator: " "), packaging: packaging, rest: rest)
    }

    /// `words` without the "of", "de", "di" or elision a unit is joined to the name with.
    static func withoutLink(_ words: [String]) -> [String] {
        guard let first = words.first else { return words }
        let lower = first.lowercased()
        if linkWords.contains(lower), words.count > 1 {
            // "1 kg de la farine".
            let after = words[1].lowercased() == "la" && words.count > 2 ? 2 : 1
            return withoutElision(Array(words.dropFirst(after)))
        }
        return withoutElision(words)
    }

    /// "d'ail" → "ail", "dell'olio" → "olio".
    static func withoutElision(_ words: [String]) -> [String] {
        guard let first = words.first else { return words }
        let lower = first.lowercased()
        for elision in elisions where lower.hasPrefix(elision) && lower.count > elision.count {
            return [String(first.dropFirst(elision.count))] + words.dropFirst()
        }
        return words
    }

    /// How many words from `i` make a unit (1 to 3; the longest); 0 for none.
    static func unitLength(_ words: [String], at i: Int) -> Int {
        for length in stride(from: 3, through: 2, by: -1) where i + length <= words.count {
            if phraseUnits.contains(words[i..<(i + length)].joined(separator: " ").lowercased()) { return length }
        }
        return i < words.count && isUnit(words[i]) ? 1 : 0
    }

    /// Text that is only a quantity ("10 Stück", "250 g", "x2", "500ml"), as that quantity.
    static func standaloneQuantity(_ words: [String]) -> String? {
        if words.count == 1, let times = timesAmount(words[0].lowercased()) { return times }
        if words.count == 1, isAmount(words[0]) || isMeasure(words[0]) { return words[0] }
        guard let leading = leadingQuantity(words), leading.rest.isEmpty, leading.quantity != leading.amount
        else { return nil }
        return leading.quantity
    }

    /// Whether `word` may begin an amount (a digit, a fraction, or a number word).
    static func startsAmount(_ word: String) -> Bool {
        isAmount(word) || isMeasure(word) || numberWords[word.lowercased()] != nil
    }

    /// `word` without one trailing dot ("pck." → "pck").
    static func bare(_ word: String) -> String { word.hasSuffix(".") ? String(word.dropLast()) : word }

    static func isUnit(_ word: String) -> Bool {
        let lower = bare(word.lowercased())
        return measures.contains(lower) || packagings.contains(lower) || counters.contains(word)
    }

    /// A number with its unit written on: "500ml", "2l", "1.5kg", "2EL", "6er", "3本".
    static func isMeasure(_ word: String) -> Bool {
        let chars = Array(word)
        guard let first = chars.first, isDigit(first) else { return false }
        // The number is the longest run of digits and one separator ("1.5"): at most 12 characters.
        var end = 0
        while end < min(chars.count, 12), isDigit(chars[end]) || chars[end] == "." || chars[end] == "," {
            end += 1
        }
        return end < chars.count && isNumber(String(chars[..<end])) && isUnit(String(chars[end...]))
    }

    /// "ビール3本" as ("ビール", "3本"): a name, digits, then a counter.
    static func gluedCounter(_ word: String) -> (String, String)? {
        guard let counter = counters.first(where: { word.hasSuffix($0) }) else { return nil }
        let chars = Array(word.dropLast(counter.count))
        var start = chars.count
        while start > 0, isDigit(chars[start - 1]) { start -= 1 }
        guard start > 0, start < chars.count else { return nil }
        return (String(chars[..<start]), String(chars[start...]) + counter)
    }

    /// A number, a fraction or a range: "2", "1,5", "1/2", "½", "2-3".
    static func isAmount(_ s: String) -> Bool { isNumber(s) || isFraction(s) || isRange(s) }

    /// "2", "1.5", "0,5", "1½".
    static func isNumber(_ s: String) -> Bool {
        guard let first = s.first, isDigit(first) else { return false }
        var seenSeparator = false
        for (i, c) in s.enumerated() {
            if isDigit(c) { continue }
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
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isDigit) }
    }

    /// "2-3", "2–3", "1,5-2": two numbers joined by a hyphen or an en dash.
    static func isRange(_ s: String) -> Bool {
        let parts = s.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "–" }
        return parts.count == 2 && parts.allSatisfy { isNumber(String($0)) }
    }

    static let vulgarFractions: Set<Character> = [
        "½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞",
    ]
}

extension String {
    /// The text without spaces around it.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
