import BasketCore
import Foundation
import Testing

/// Version 1 of item keys was first computed with Foundation's `String.folding`; it is now
/// defined by a table generated from the Unicode 15.0.0 data (Scripts/make-itemkey.py). Keys
/// decide item identity, so the table must give the key the old code gave for every name a
/// person types: these tests compare the two on a large corpus, and every difference must be
/// one of the few decided in docs/encoding.md.
struct ItemKeyTableTests {
    /// Every name of the search corpus, the catalogue, every string literal of the tests, every
    /// Latin, Greek and Cyrillic letter (precomposed and decomposed), the arrows and mathematical
    /// operators, the fullwidth and halfwidth forms, the special letters, white space and dashes.
    @Test func givesTheKeysFoundationGaveOnTheCorpus() throws {
        let corpus = try Corpus.names()
        #expect(corpus.count > 50_000)
        var undecided: [String] = []
        var decided: [String: Int] = [:]
        for name in corpus {
            let old = FoundationKeyV1.normalize(name)
            let new = ItemKey.normalize(name)
            if old == new { continue }
            if let reason = DecidedDifference.reason(for: name) {
                decided[reason, default: 0] += 1
            } else {
                undecided.append("\(Corpus.hex(name)) \"\(name)\": Foundation \"\(old)\", table \"\(new)\"")
            }
        }
        #expect(
            undecided.isEmpty,
            "\(undecided.count) undecided differences:\n\(undecided.prefix(40).joined(separator: "\n"))")
        // The decided differences are few, and each class of them occurs in the corpus.
        #expect(decided.count == DecidedDifference.reasons.count, "\(decided)")
        #expect(decided.values.reduce(0, +) < 200, "\(decided)")
    }

    /// Each decided difference, pinned: what the table gives and what Foundation gave.
    @Test(arguments: [
        // A combining mark with no letter before it: dropped (Foundation kept it).
        ("\u{301}x", "x", "\u{301}x"),
        // Cyrillic letter variants that CaseFolding.txt folds (Foundation kept them).
        ("\u{1C80}", "\u{432}", "\u{1C80}"),
        // Halfwidth Hangul: UCD's <narrow> mapping gives compatibility jamo.
        ("\u{FFA1}", "\u{3131}", "\u{1100}"),
        // Greek spacing accents take their canonical decomposition, as their decomposed
        // forms' keys do (Foundation kept them).
        ("\u{1FCD}", "\u{1FBF}", "\u{1FCD}"),
        ("\u{1FDD}", "\u{1FFE}", "\u{1FDD}"),
        // The fullwidth macron takes its <wide> mapping.
        ("\u{FFE3}", "\u{AF}", "\u{FFE3}"),
        // Halfwidth katakana with a halfwidth voicing mark: both take their <narrow> mapping.
        ("\u{FF76}\u{FF9E}", "\u{30AB}\u{3099}", "\u{30AB}\u{FF9E}"),
        // A negated arrow is its arrow, as "≠" is "=" in both (canonical decomposition, and
        // U+0338 is a diacritic).
        ("\u{219A}", "\u{2190}", "\u{219A}"),
        ("\u{2260}", "=", "="),
        // Marks of another script on a Latin letter stay (Foundation dropped them).
        ("a\u{5B0}", "a\u{5B0}", "a"),
    ])
    func decidedDifference(name: String, table: String, foundation: String) {
        #expect(ItemKey.normalize(name) == table)
        #expect(FoundationKeyV1.normalize(name) == foundation)
    }

    /// A precomposed letter and its canonical decomposition have one key ("é" and "e" + U+0301),
    /// for every Latin, Greek and Cyrillic letter.
    @Test func canonicallyEquivalentLettersHaveOneKey() {
        var checked = 0
        for scalar in Corpus.alphabetScalars() {
            let composed = String(Character(scalar))
            let decomposed = composed.decomposedStringWithCanonicalMapping
            guard decomposed.unicodeScalars.count > 1 else { continue }
            checked += 1
            #expect(ItemKey.normalize(composed) == ItemKey.normalize(decomposed), "\(Corpus.hex(composed))")
        }
        #expect(checked > 780)
    }

    @Test func otherScriptsKeepTheirMarksAndEmojiTheirSelectors() {
        #expect(ItemKey.normalize("ガム") != ItemKey.normalize("カム"))
        #expect(ItemKey.normalize("パン") == "パン")
        #expect(ItemKey.normalize("क़") == "क़")
        #expect(ItemKey.normalize("가") == "가")
        #expect(ItemKey.normalize("I ♥️ NY") == "i ♥️ ny")
        #expect(ItemKey.normalize("\u{FA10}") == "\u{FA10}")  // a CJK compatibility ideograph
        #expect(ItemKey.normalize("Ω Ω") == "ω ω")  // OHM SIGN is Omega
        #expect(ItemKey.normalize("ᾀ") == "α")  // ypogegrammeni is a diacritic
        #expect(ItemKey.normalize("ŉ") == "ʼn")
        #expect(ItemKey.normalize("ﬁsh") == "fish")
    }
}

/// The inputs of the comparison.
enum Corpus {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized

    static func names() throws -> [String] {
        var names = Set<String>()
        let products = try String(
            contentsOf: root.appendingPathComponent("Benchmarks/quality/products.txt"), encoding: .utf8)
        for line in products.split(separator: "\n") { names.insert(String(line)) }
        let everyday = try String(
            contentsOf: root.appendingPathComponent("Benchmarks/quality/everyday.tsv"), encoding: .utf8)
        for line in everyday.split(separator: "\n") {
            for field in line.split(separator: "\t") { names.insert(String(field)) }
        }
        var sources = [root.appendingPathComponent("Client/BasketSearch/Catalogue+Names.swift")]
        if let files = FileManager.default.enumerator(atPath: root.appendingPathComponent("Tests").path) {
            for case let path as String in files where path.hasSuffix(".swift") {
                sources.append(root.appendingPathComponent("Tests").appendingPathComponent(path))
            }
        }
        for source in sources {
            let text = try String(contentsOf: source, encoding: .utf8)
            for literal in stringLiterals(in: text) { names.insert(literal) }
        }
        for scalar in alphabetScalars() {
            let letter = String(Character(scalar))
            names.insert(letter)
            names.insert(letter.decomposedStringWithCanonicalMapping)
            names.insert("x" + letter + "y")
        }
        for base in ["a", "E", "z", "α", "Ω", "и", "Ж"] {
            for mark in UInt32(0x300)...0x36F { names.insert(base + String(Character(Unicode.Scalar(mark)!))) }
        }
        // Arrows and mathematical operators, with their negated forms.
        for value in UInt32(0x2190)...0x22FF { names.insert(String(Character(Unicode.Scalar(value)!))) }
        for value in UInt32(0xFF01)...0xFFEE {
            if let scalar = Unicode.Scalar(value), scalar.properties.generalCategory != .unassigned {
                names.insert("Ｍ" + String(Character(scalar)))
            }
        }
        let special = "ßẞıİøØłŁæÆœŒđĐðÐþÞŉǰﬀﬁﬂﬃﬄﬅﬆǅǄǆǈǋǲſµΩKÅ ‐‑‒–—―－\u{A0}\u{2009}\u{3000}\u{200B}\u{FEFF}’‘ʼ´′"
        for scalar in special.unicodeScalars { names.insert("milk" + String(Character(scalar)) + "bread") }
        return names.filter { !$0.isEmpty }.sorted()
    }

    /// Every code point of the Latin, Greek and Cyrillic blocks that Unicode 15.0 assigns.
    static func alphabetScalars() -> [Unicode.Scalar] {
        let blocks: [ClosedRange<UInt32>] = [
            0x00C0...0x024F, 0x0370...0x03FF, 0x0400...0x052F, 0x1C80...0x1C8F, 0x1E00...0x1EFF,
            0x1F00...0x1FFF, 0x2C60...0x2C7F, 0xA640...0xA69F, 0xA720...0xA7FF, 0xAB30...0xAB6F,
        ]
        return blocks.flatMap { $0 }.compactMap(Unicode.Scalar.init).filter {
            $0.properties.generalCategory != .unassigned
                && $0.properties.age.map { $0.major < 15 || ($0.major == 15 && $0.minor == 0) } ?? false
        }
    }

    static func stringLiterals(in source: String) -> [String] {
        var literals: [String] = []
        for line in source.split(separator: "\n") {
            let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
            guard parts.count >= 3 else { continue }
            for index in stride(from: 1, to: parts.count - 1, by: 2) where !parts[index].contains("\\") {
                literals.append(String(parts[index]))
            }
        }
        return literals
    }

    static func hex(_ s: String) -> String {
        s.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}

/// The differences between the table and Foundation's folding that docs/encoding.md decides.
enum DecidedDifference {
    static let reasons = [
        "a mark with no letter", "Cyrillic variants folded", "halfwidth Hangul to compatibility jamo",
        "Greek spacing accents decomposed", "fullwidth and halfwidth forms mapped", "negated symbols decomposed",
    ]

    static func reason(for name: String) -> String? {
        let scalars = Array(name.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let value = scalar.value
            let category = scalar.properties.generalCategory
            let isMark = category == .nonspacingMark || category == .enclosingMark
            if isMark && (index == 0 || scalars[index - 1] == " ") { return "a mark with no letter" }
            if (0x1C80...0x1C88).contains(value) { return "Cyrillic variants folded" }
            if (0xFFA0...0xFFDC).contains(value) { return "halfwidth Hangul to compatibility jamo" }
            if (0x1FCD...0x1FCF).contains(value) || (0x1FDD...0x1FDF).contains(value) {
                return "Greek spacing accents decomposed"
            }
            if value == 0xFFE3 || value == 0xFF9E || value == 0xFF9F { return "fullwidth and halfwidth forms mapped" }
            let isSymbol = category == .mathSymbol || category == .otherSymbol
            if isSymbol
                && String(Character(scalar)).decomposedStringWithCanonicalMapping.unicodeScalars.last == "\u{338}"
            {
                return "negated symbols decomposed"
            }
        }
        return nil
    }
}

/// Version 1 as it was computed before the table: Foundation's folding (kept as the reference).
enum FoundationKeyV1 {
    static func normalize(_ name: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7F {
                mapped.append(scalar == "-" ? " " : scalar)
            } else if scalar.properties.isWhitespace || scalar.properties.generalCategory == .dashPunctuation {
                mapped.append(" ")
            } else if [0x2019, 0x2018, 0x02BC, 0x00B4, 0x2032].contains(scalar.value) {
                mapped.append("'")
            } else if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                continue
            } else {
                mapped.append(scalar)
            }
        }
        let folded = String(mapped).folding(
            options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var result = ""
        for scalar in folded.unicodeScalars {
            if let replacement = letters[scalar.value] {
                result += replacement
            } else if scalar.properties.isWhitespace {
                result += " "
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result.split(separator: " ").joined(separator: " ")
    }

    private static let letters: [UInt32: String] = [
        0xDF: "ss", 0x1E9E: "ss", 0x131: "i", 0xF8: "o", 0xD8: "o", 0x142: "l", 0x141: "l", 0xE6: "ae",
        0xC6: "ae", 0x153: "oe", 0x152: "oe", 0x111: "d", 0x110: "d", 0xF0: "d", 0xD0: "d", 0xFE: "th",
        0xDE: "th",
    ]
}
