import BasketCore

/// What the user typed to add one item: its name and, when given, a quantity.
public struct Entry: Hashable, Sendable {
    /// The item name, without the quantity.
    public var name: String
    /// The quantity typed with it ("2", "500 g"); nil when none.
    public var quantity: String?

    /// An entry for `name`, with `quantity` when one was typed.
    public init(name: String, quantity: String? = nil) {
        self.name = name
        self.quantity = quantity
    }
}

/// Reads what is typed into an add box: several items separated by commas, semicolons or
/// newlines ("and" does not separate: "mac and cheese" is one item), each with an optional
/// quantity in front ("2 milk", "500 g flour", "1/2 lemon", "½ lemon", "1 1/2 cups sugar") or
/// behind ("milk x2"). A name that already exists as typed is taken whole ("7 Up").
public enum EntryParser {
    /// Splits on commas, semicolons and newlines, dropping empty pieces.
    public static func split(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == ";" || $0.isNewline }).map(String.init)
            .filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// Parses every piece of `text`; `existingKeys` holds the keys of items on the list.
    public static func parseAll(_ text: String, existingKeys: Set<String>) -> [Entry] {
        split(text).map { parse($0, existingKeys: existingKeys) }
    }

    static let units: Set<String> = [
        "g", "gr", "gram", "grams", "kg", "mg", "l", "ml", "cl", "dl", "cup", "cups", "tbsp", "tsp", "oz", "lb", "lbs",
        "pack", "packs", "can", "cans", "bottle", "bottles", "bag", "bags", "box", "boxes", "dozen", "piece", "pieces",
        "pcs", "pc", "jar", "jars", "bunch", "bunches", "slice", "slices", "loaf", "loaves", "clove", "cloves",
    ]

    static let vulgarFractions: Set<Character> = [
        "½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞",
    ]

    /// One item: a leading quantity (number, fraction, mixed number, optional unit) or a trailing
    /// `x2`, unless the whole text is already the name of an item.
    public static func parse(_ raw: String, existingKeys: Set<String>) -> Entry {
        let text = raw.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if existingKeys.contains(ItemKey.normalize(text)) { return Entry(name: text) }
        var words = text.split(separator: " ").map(String.init)
        // Trailing "x2", "x 2", "×2".
        if words.count >= 2 {
            let last = words[words.count - 1].lowercased()
            for marker in ["x", "×"] where last.hasPrefix(marker) && isNumber(String(last.dropFirst(marker.count))) {
                return Entry(
                    name: words.dropLast().joined(separator: " "), quantity: String(last.dropFirst(marker.count)))
            }
            if words.count >= 3, ["x", "×"].contains(words[words.count - 2].lowercased()), isNumber(last) {
                return Entry(name: words.dropLast(2).joined(separator: " "), quantity: last)
            }
        }
        // Leading number, fraction or mixed number, then an optional unit.
        var quantity: [String] = []
        if let first = words.first, isNumber(first) || isFraction(first) {
            quantity.append(first)
            words.removeFirst()
            if isNumber(quantity[0]), let next = words.first, isFraction(next), words.count > 1 {
                quantity.append(next)  // "1 1/2"
                words.removeFirst()
            }
            if let unit = words.first, units.contains(unit.lowercased()), words.count > 1 {
                quantity.append(unit)
                words.removeFirst()
            }
        }
        guard !quantity.isEmpty, !words.isEmpty else { return Entry(name: text) }
        return Entry(name: words.joined(separator: " "), quantity: quantity.joined(separator: " "))
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
