/// Amounts as a shopping list writes them ("2", "500 g", "1,5 kg", "1 1/2 cups", "½", "3本"), and
/// what adding one to another makes: a family adding milk for two recipes wants "3", not the
/// second amount in place of the first. The web client's quantity.js follows it rule for rule;
/// the conformance vectors hold them together.
public enum Quantity {
    /// The longest quantity a sum makes; past it the added amount replaces the old one, as before.
    public static let maxSumBytes = 200

    /// `added` added to `existing`: amounts of the same unit (compared without case) are summed
    /// ("2" + "1" → "3", "500 g" + "250 g" → "750 g", "1,5 l" + "0,5 l" → "2 l"); an amount of
    /// another unit, or one that is not a number, is kept beside the others ("500 g" + "1 pack" →
    /// "500 g + 1 pack"), never converted (no weight becomes a volume, no kg becomes g).
    public static func adding(_ added: String, to existing: String) -> String {
        let parts = existing.split(separator: " + ", omittingEmptySubsequences: true).map(String.init)
        guard let new = Amount(added) else { return joined(parts + [added]) ?? added }
        for (index, part) in parts.enumerated() {
            guard let old = Amount(part), old.unit.lowercased() == new.unit.lowercased(),
                let sum = old.value.adding(new.value)
            else { continue }
            var summed = parts
            summed[index] =
                Amount(value: sum, unit: old.unit, style: old.style.merged(with: new.style), glued: old.glued)
                .description
            return joined(summed) ?? added
        }
        return joined(parts + [added]) ?? added
    }

    /// The parts joined with " + ", nil when that is too long.
    static func joined(_ parts: [String]) -> String? {
        let text = parts.joined(separator: " + ")
        return text.utf8.count <= maxSumBytes ? text : nil
    }

    /// A number and its unit: "1,5 kg" is 3/2 of "kg", written with a decimal comma.
    struct Amount: CustomStringConvertible {
        var value: Fraction
        var unit: String
        var style: Style
        /// Whether the unit is written onto the number ("500ml", "3本").
        var glued: Bool

        init(value: Fraction, unit: String, style: Style, glued: Bool) {
            self.value = value
            self.unit = unit
            self.style = style
            self.glued = glued
        }

        /// How a number was written, so a sum is written the same way.
        enum Style: Equatable {
            case whole
            case decimal(separator: Character)
            case fraction

            /// The style of a sum: decimals win over fractions, fractions over whole numbers; the
            /// first decimal separator stays.
            func merged(with other: Style) -> Style {
                switch (self, other) {
                case (.decimal, _): self
                case (_, .decimal): other
                case (.fraction, _), (_, .fraction): .fraction
                case (.whole, .whole): .whole
                }
            }
        }

        /// The amount `text` is, nil when it does not start with a number (a number, a decimal,
        /// a fraction "1/2", a vulgar fraction "½", or a whole number and one of those).
        init?(_ text: String) {
            var rest = Substring(text.trimmingSpaces)
            guard let (first, firstStyle) = Self.number(&rest) else { return nil }
            var value = first
            var style = firstStyle
            // "1 1/2", "1½": a whole number and a fraction.
            if firstStyle == .whole {
                var after = rest.drop { $0 == " " }
                if let (fraction, fractionStyle) = Self.number(&after), fractionStyle == .fraction,
                    fraction.numerator < fraction.denominator, let sum = value.adding(fraction)
                {
                    value = sum
                    style = .fraction
                    rest = after
                }
            }
            let unit = String(rest).trimmingSpaces
            self.init(value: value, unit: unit, style: style, glued: !unit.isEmpty && rest.first != " ")
        }

        /// Reads a number at the start of `text` and drops it from there.
        static func number(_ text: inout Substring) -> (Fraction, Style)? {
            if let first = text.first, let vulgar = vulgarFractions[first] {
                text = text.dropFirst()
                return (vulgar, .fraction)
            }
            let digits = text.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 9, let whole = Int64(digits) else { return nil }
            var rest = text.dropFirst(digits.count)
            if let separator = rest.first, separator == "." || separator == "," {
                let decimals = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
                if !decimals.isEmpty, decimals.count <= 6, let part = Int64(decimals) {
                    var scale: Int64 = 1
                    for _ in 0..<decimals.count { scale *= 10 }
                    text = rest.dropFirst(1 + decimals.count)
                    return Fraction(whole * scale + part, scale).map { ($0, .decimal(separator: separator)) }
                }
            }
            if rest.first == "/" {
                let denominator = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
                if !denominator.isEmpty, denominator.count <= 6, let d = Int64(denominator), d > 0 {
                    text = rest.dropFirst(1 + denominator.count)
                    return Fraction(whole, d).map { ($0, .fraction) }
                }
            }
            // "1½": a vulgar fraction written onto a whole number.
            if let next = rest.first, let vulgar = vulgarFractions[next], let sum = Fraction(whole, 1)?.adding(vulgar) {
                text = rest.dropFirst()
                return (sum, .fraction)
            }
            rest = text.dropFirst(digits.count)
            text = rest
            return Fraction(whole, 1).map { ($0, .whole) }
        }

        var description: String {
            let number = value.written(style)
            return unit.isEmpty ? number : glued ? number + unit : "\(number) \(unit)"
        }
    }

    /// The vulgar fractions a quantity may start with.
    static let vulgarFractions: [Character: Fraction] = {
        let table: [(Character, Int64, Int64)] = [
            ("½", 1, 2), ("⅓", 1, 3), ("⅔", 2, 3), ("¼", 1, 4), ("¾", 3, 4), ("⅕", 1, 5), ("⅖", 2, 5), ("⅗", 3, 5),
            ("⅘", 4, 5), ("⅙", 1, 6), ("⅚", 5, 6), ("⅛", 1, 8), ("⅜", 3, 8), ("⅝", 5, 8), ("⅞", 7, 8),
        ]
        var out: [Character: Fraction] = [:]
        for (character, numerator, denominator) in table { out[character] = Fraction(numerator, denominator) }
        return out
    }()

    /// A non-negative rational number in lowest terms; nil where it would overflow.
    struct Fraction: Equatable {
        let numerator: Int64
        let denominator: Int64

        init?(_ numerator: Int64, _ denominator: Int64) {
            guard denominator > 0, numerator >= 0 else { return nil }
            let divisor = Self.gcd(numerator, denominator)
            self.numerator = numerator / divisor
            self.denominator = denominator / divisor
        }

        static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
            var (a, b) = (a, b)
            while b != 0 { (a, b) = (b, a % b) }
            return max(a, 1)
        }

        func adding(_ other: Fraction) -> Fraction? {
            let (left, o1) = numerator.multipliedReportingOverflow(by: other.denominator)
            let (right, o2) = other.numerator.multipliedReportingOverflow(by: denominator)
            let (sum, o3) = left.addingReportingOverflow(right)
            let (bottom, o4) = denominator.multipliedReportingOverflow(by: other.denominator)
            guard !(o1 || o2 || o3 || o4) else { return nil }
            return Fraction(sum, bottom)
        }

        /// Written in `style`: "3", "1,5" (at most three decimals), "1 1/2".
        func written(_ style: Amount.Style) -> String {
            let whole = numerator / denominator
            let rest = numerator % denominator
            if rest == 0 { return String(whole) }
            switch style {
            case .decimal(let separator) where rest <= Int64.max / 1000 - denominator:
                let thousandths = (rest * 1000 + denominator / 2) / denominator
                if thousandths >= 1000 { return String(whole + 1) }
                var digits = String(thousandths)
                digits = String(repeating: "0", count: 3 - digits.count) + digits
                while digits.hasSuffix("0") { digits.removeLast() }
                return digits.isEmpty ? String(whole) : "\(whole)\(separator)\(digits)"
            case .whole, .fraction, .decimal:
                return whole == 0 ? "\(rest)/\(denominator)" : "\(whole) \(rest)/\(denominator)"
            }
        }
    }
}

extension String {
    /// The text without spaces around it.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
