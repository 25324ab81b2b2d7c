import BasketCore

/// The parser as it was before issue 44 (`git show c798783^:Client/BasketSearch/EntryParser.swift`),
/// kept only as the baseline `basket-bench parser` measures against in the same run.
enum ParserBefore {
    static func split(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == ";" || $0.isNewline }).map(String.init)
            .filter { !$0.allSatisfy(\.isWhitespace) }
    }

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

    static let counters: [String] = [
        "パック", "切れ", "本", "個", "枚", "袋", "缶", "箱", "束", "玉", "匹", "尾", "房", "丁", "株", "杯", "粒", "斤", "个",
        "瓶", "包", "盒", "罐", "颗", "只", "条", "片", "块",
    ]

    static let vulgarFractions: Set<Character> = [
        "½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞",
    ]

    static func parse(_ raw: String, existingKeys: Set<String>) -> (name: String, quantity: String?) {
        let text = raw.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if existingKeys.contains(ItemKey.normalize(text)) { return (text, nil) }
        var words = text.split(separator: " ").map(String.init)
        if words.count >= 2 {
            let last = words[words.count - 1]
            let lower = last.lowercased()
            // "milk x2", "milk ×3", "eggs x 12".
            for marker in ["x", "×"] where lower.hasPrefix(marker) && isNumber(String(lower.dropFirst(marker.count))) {
                return (words.dropLast().joined(separator: " "), String(lower.dropFirst(marker.count)))
            }
            if words.count >= 3, ["x", "×"].contains(words[words.count - 2].lowercased()), isNumber(last) {
                return (words.dropLast(2).joined(separator: " "), last)
            }
            // "milk 2l", "ビール 3本"; "flour 500 g".
            if isMeasure(last) { return (words.dropLast().joined(separator: " "), last) }
            if words.count >= 3, isNumber(words[words.count - 2]), isUnit(last) {
                return (words.dropLast(2).joined(separator: " "), words.suffix(2).joined(separator: " "))
            }
        }
        // "ビール3本": a counter glued to the name.
        if let last = words.last, let (name, quantity) = gluedCounter(last) {
            return ((words.dropLast() + [name]).joined(separator: " "), quantity)
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
        guard !quantity.isEmpty, !words.isEmpty else { return (text, nil) }
        return (words.joined(separator: " "), quantity.joined(separator: " "))
    }

    static func isUnit(_ word: String) -> Bool {
        units.contains(word.lowercased()) || counters.contains(word)
    }

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

    static func gluedCounter(_ word: String) -> (String, String)? {
        guard let counter = counters.first(where: { word.hasSuffix($0) }) else { return nil }
        let chars = Array(word.dropLast(counter.count))
        var start = chars.count
        while start > 0, chars[start - 1].isASCII, chars[start - 1].isNumber { start -= 1 }
        guard start > 0, start < chars.count else { return nil }
        return (String(chars[..<start]), String(chars[start...]) + counter)
    }

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

    static func isFraction(_ s: String) -> Bool {
        if s.count == 1, let c = s.first, vulgarFractions.contains(c) { return true }
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
