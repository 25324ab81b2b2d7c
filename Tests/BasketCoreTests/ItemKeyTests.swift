import BasketCore
import Foundation
import Testing

struct ItemKeyTests {
    @Test(arguments: [
        ("Crème fraîche", "creme fraiche"),
        ("Straße", "strasse"),
        ("STRASSE", "strasse"),
        ("Ｍｉｌｋ", "milk"),
        ("Øl", "ol"),
        ("Milk\u{00A0}", "milk"),
        ("  Oat \t  milk ", "oat milk"),
        ("Coca-Cola", "coca cola"),
        ("coca cola", "coca cola"),
        ("Coca–Cola", "coca cola"),
        ("Łódź", "lodz"),
        ("Æble", "aeble"),
        ("Œufs", "oeufs"),
        ("Đakovo", "dakovo"),
        ("Ðe", "de"),
        ("Þorri", "thorri"),
        ("ıspanak", "ispanak"),
        ("İstanbul", "istanbul"),
        ("Ben & Jerry’s", "ben & jerry's"),
        ("Ben & Jerry's", "ben & jerry's"),
        ("ＡＢＣ　ｄｅｆ", "abc def"),
        ("Jalapeño", "jalapeno"),
        ("7 Up", "7 up"),
        ("Milk\u{200B}", "milk"),
        ("Cre\u{0300}me", "creme"),  // decomposed accents fold like precomposed ones
        ("Café", "cafe"),
    ])
    func normalizesAsDocumented(name: String, key: String) {
        #expect(ItemKey.normalize(name) == key)
    }

    @Test func punctuationOtherThanDashesIsKept() {
        #expect(ItemKey.normalize("7up") != ItemKey.normalize("7 up"))
        #expect(ItemKey.normalize("1.5% milk") == "1.5% milk")
    }

    @Test func asciiFastPathAgreesWithTheUnicodePath() {
        // An accent anywhere sends the name down the Unicode path; the rest must fold the same.
        let names = ["Milk", "  Greek   Yogurt ", "Coca-Cola", "A-B-C", "Tab\there", "MiXeD CaSe 10"]
        for name in names {
            #expect(ItemKey.normalize(name + " é") == ItemKey.normalize(name) + " e", "\(name)")
        }
    }

    @Test func itemIDDependsOnListAndKeyOnly() {
        let list = ListID(raw: ID128(high: 1, low: 2))
        let other = ListID(raw: ID128(high: 1, low: 3))
        let milk = ItemID(list: list, key: ItemKey.normalize("Milk"))
        #expect(milk == ItemID(list: list, key: ItemKey.normalize("milk ")))
        #expect(milk != ItemID(list: other, key: "milk"))
        #expect(milk != ItemID(list: list, key: "bread"))
        #expect(milk != .list)
        #expect(ItemID(hex: milk.description) == milk)
    }

    /// Keys and ids are persisted and exchanged between builds and platforms: pinned to the
    /// literal values of Tests/Vectors/core-v1.json (the ids computed apart from this code, with
    /// Python's hashlib, from the rule in docs/encoding.md), which any other client checks too.
    @Test func keysAndItemIDsMatchTheConformanceVectors() throws {
        let vectors = try ConformanceVectors.load()
        #expect(vectors.keys.count >= 8 && vectors.itemIDs.count >= 4)
        for vector in vectors.keys { #expect(ItemKey.normalize(vector.name) == vector.key, "\(vector.name)") }
        for vector in vectors.itemIDs {
            let list = try #require(ListID(hex: vector.list))
            #expect(ItemID(list: list, key: vector.key).description == vector.id, "\(vector.key)")
        }
    }
}

/// Tests/Vectors/core-v1.json: item keys, item ids and encodings every client must reproduce.
struct ConformanceVectors: Decodable {
    struct Key: Decodable {
        var name: String
        var key: String
    }
    struct Identifier: Decodable {
        var list: String
        var key: String
        var id: String
    }
    struct Encoding: Decodable {
        var text: String
    }
    var keys: [Key]
    var itemIDs: [Identifier]
    var encodings: [Encoding]

    static func load() throws -> ConformanceVectors {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Vectors/core-v1.json").standardized
        return try JSONDecoder().decode(ConformanceVectors.self, from: Data(contentsOf: url))
    }
}

struct ItemNameTests {
    @Test func keepsCasingAndTidiesWhiteSpace() throws {
        #expect(try ItemName.clean("  Greek \t yogurt ") == "Greek yogurt")
        #expect(try ItemName.clean("Milk\u{00A0}") == "Milk")
        #expect(try ItemName.clean("Crème  fraîche") == "Crème fraîche")
    }

    @Test func refusesEmptyNames() {
        #expect(throws: ItemName.Problem.empty) { try ItemName.clean("") }
        #expect(throws: ItemName.Problem.empty) { try ItemName.clean("   \u{00A0}") }
        #expect(throws: ItemName.Problem.empty) { try ItemName.clean("---") }
    }

    @Test func refusesNamesOver500Characters() throws {
        #expect(try ItemName.clean(String(repeating: "a", count: 500)).count == 500)
        #expect(try ItemName.clean(String(repeating: "é", count: 500)).count == 500)
        #expect(throws: ItemName.Problem.tooLong(501)) { try ItemName.clean(String(repeating: "a", count: 501)) }
        #expect(throws: ItemName.Problem.tooLong(501)) { try ItemName.clean(String(repeating: "é", count: 501)) }
    }

    @Test func refusesControlCharactersAndInvalidUTF8() {
        #expect(throws: ItemName.Problem.controlCharacter) { try ItemName.clean("Milk\u{1B}[31m") }
        #expect(throws: ItemName.Problem.controlCharacter) { try ItemName.clean("Mi\u{7F}lk") }
        // Bidirectional controls: a name that displays reversed, or runs into what follows it.
        for bidi: UInt32 in [0x061C, 0x200E, 0x200F, 0x202A, 0x202D, 0x202E, 0x2066, 0x2069] {
            let text = "Milk " + String(Unicode.Scalar(bidi)!) + "kcab"
            #expect(throws: ItemName.Problem.controlCharacter, "U+\(String(bidi, radix: 16))") {
                try ItemName.clean(text)
            }
            #expect(Printable.escaped(text) == "Milk \\u{\(String(bidi, radix: 16))}kcab")
        }
        #expect((try? ItemName.clean("חלב \u{05D3}")) != nil)  // right-to-left letters themselves are text
        #expect(throws: ItemName.Problem.invalidUTF8) { try ItemName.clean(bytes: [0x4D, 0xFF, 0x6B]) }
        #expect((try? ItemName.clean(bytes: Array("Øl".utf8))) == "Øl")
    }

    /// One visible letter followed by 1.8 million combining accents is one character and 3.6 MB:
    /// refused by bytes, after reading no more than a limit's worth of it.
    @Test func refusesAnAccentFloodByBytes() throws {
        let flood = "a" + String(repeating: "\u{0301}", count: 1_800_000)
        #expect(flood.count == 1 && flood.utf8.count == 3_600_001)
        #expect(throws: ItemName.Problem.tooManyCombiningMarks) { try ItemName.clean(flood) }
        // Without the run limit the byte limit still holds: spaced accents on many letters.
        let wide = String(repeating: "é", count: 1_100)  // 2,200 bytes, precomposed
        #expect(throws: ItemName.Problem.tooManyBytes(2_200, limit: 2_048)) { try ItemName.clean(wide) }
        let flags = String(repeating: "🇫🇷", count: 257)  // 257 characters, 2,056 bytes
        #expect(throws: ItemName.Problem.tooManyBytes(2_056, limit: 2_048)) { try ItemName.clean(flags) }
        #expect(try ItemName.clean(String(repeating: "🇫🇷", count: 256)).utf8.count == 2_048)
        let thirty = "e" + String(repeating: "\u{0301}", count: 30)
        #expect(try ItemName.clean(thirty) == thirty)
        #expect(throws: ItemName.Problem.tooManyCombiningMarks) { try ItemName.clean(thirty + "\u{0301}") }
    }

    @Test func everyTextFieldHasAByteLimit() throws {
        #expect(Field.name.maxBytes == 2_048 && Field.title.maxBytes == 2_048)
        for (field, limit) in [(Field.quantity, 256), (.category, 256), (.note, 4_096)] {
            #expect(field.maxBytes == limit)
            let fits = String(repeating: "x", count: limit)
            #expect(try ItemName.clean(fits, for: field) == fits)
            #expect(throws: ItemName.Problem.tooManyBytes(limit + 1, limit: limit)) {
                try ItemName.clean(fits + "x", for: field)
            }
        }
        // A note of 4,096 ASCII bytes is longer than a name may be, and fine.
        #expect(try ItemName.clean(String(repeating: "n", count: 4_000), for: .note).count == 4_000)
        // Quantities and notes need no key character ("-" is a fine quantity).
        #expect(try ItemName.clean("-", for: .quantity) == "-")
    }

    @Test func controlCharactersAreRefusedInEveryTextField() {
        for field in [Field.name, .title, .quantity, .note, .category] {
            for control in ["\u{0}", "\u{1B}[2J", "\u{7F}", "\u{9B}31m", "\u{80}"] {
                #expect(throws: ItemName.Problem.controlCharacter, "\(field) \(control.unicodeScalars.first!.value)") {
                    try ItemName.clean("Milk\(control)", for: field)
                }
            }
        }
    }
}
