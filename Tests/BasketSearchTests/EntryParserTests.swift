import BasketCore
import BasketSearch
import Foundation
import Testing

struct EntryParserTests {
    /// What `text` reads as: name and quantity (the note and the line as typed checked apart).
    static func read(_ text: String, existing: Set<String> = []) -> Entry {
        var entry = EntryParser.parse(text, existingKeys: existing)
        entry.typed = nil
        return entry
    }

    @Test(arguments: [
        ("2 milk", "milk", "2"),
        ("milk x2", "milk", "2"),
        ("milk x 3", "milk", "3"),
        ("Milk ×2", "Milk", "2"),
        ("2x milk", "milk", "2"),
        ("milk 2x", "milk", "2"),
        ("500 g flour", "flour", "500 g"),
        ("1/2 lemon", "lemon", "1/2"),
        ("½ lemon", "lemon", "½"),
        ("1 1/2 cups sugar", "sugar", "1 1/2 cups"),
        ("1½ l milk", "milk", "1½ l"),
        ("0,5 kg apples", "apples", "0,5 kg"),
        ("2 dozen eggs", "eggs", "2 dozen"),
        ("  3   Greek   yogurts ", "Greek yogurts", "3"),
        ("2-3 onions", "onions", "2-3"),
        ("2–3 Zwiebeln", "Zwiebeln", "2–3"),
        ("zwei Flaschen Wasser", "Wasser", "2 Flaschen"),
        ("une pincée de sel", "sel", "1 pincée"),
        ("2 c. à s. d'huile d'olive", "huile d'olive", "2 c. à s."),
        ("3 spicchi d'aglio", "aglio", "3 spicchi"),
        ("2 colheres de sopa de azeite", "azeite", "2 colheres de sopa"),
        ("1 Pck. Backpulver", "Backpulver", "1 Pck."),
        ("2 EL Olivenöl", "Olivenöl", "2 EL"),
        ("2 cups of flour", "flour", "2 cups"),
        ("a bag of rice", "rice", "1 bag"),
        ("half a cucumber", "cucumber", "½"),
        ("eine halbe Gurke", "Gurke", "½"),
        ("ca. 500 g Mehl", "Mehl", "500 g"),
        ("6er Eier", "Eier", "6er"),
        ("2 x 500ml cream", "cream", "2 x 500ml"),
        ("2 x 400 g tomatoes", "tomatoes", "2 x 400 g"),
        ("2 rolls", "rolls", "2"),
        ("2 7 Up", "7 Up", "2"),
        ("a bag", "bag", "1"),
    ])
    func quantitiesAreTakenOutOfTheName(text: String, name: String, quantity: String) {
        #expect(Self.read(text) == Entry(name: name, quantity: quantity))
    }

    @Test(arguments: [
        "Milk", "mac and cheese", "2", "g flour", "Vitamin B12", "Area 51 crisps", "x2", "2 kg", "7 Up", "7up",
        "2-in-1 shampoo", "4711 Echt Kölnisch Wasser", "an egg", "Eins", "zwei", "\" onmouseover=\"alert(3)",
        "Eier(10)",
    ])
    func textWithoutAQuantityStaysTheName(text: String) {
        #expect(Self.read(text) == Entry(name: text))
    }

    @Test func aNameThatExistsAsTypedIsNotParsed() {
        #expect(Self.read("2 Minute Noodles", existing: ["2 minute noodles"]) == Entry(name: "2 Minute Noodles"))
        #expect(Self.read("2 Minute Noodles") == Entry(name: "Minute Noodles", quantity: "2"))
    }

    /// Bullets, dashes, checkboxes and numbers in front of a line are not part of the name.
    @Test(arguments: [
        "- milk", "* milk", "• milk", "[ ] milk", "[x] milk", "- [ ] milk", "1. milk", "12) milk", "☐ milk",
    ])
    func aListMarkInFrontIsDropped(text: String) {
        #expect(Self.read(text) == Entry(name: "milk"))
        #expect(Self.read(text + " x2") == Entry(name: "milk", quantity: "2"))
    }

    @Test func aNoteInParenthesesOrAfterACommaIsTheNote() {
        #expect(Self.read("flour (for the cake)") == Entry(name: "flour", note: "for the cake"))
        #expect(Self.read("Eier (10 Stück)") == Entry(name: "Eier", quantity: "10 Stück"))
        #expect(Self.read("2 Eier (Bio)") == Entry(name: "Eier", quantity: "2", note: "Bio"))
        #expect(Self.read("1 onion, chopped") == Entry(name: "onion", quantity: "1", note: "chopped"))
        #expect(Self.read("Milch, 1 l") == Entry(name: "Milch", quantity: "1 l"))
        #expect(
            Self.read("flour (for the cake) @baking") == Entry(name: "flour", category: "baking", note: "for the cake"))
    }

    @Test func theLineAsTypedIsKept() {
        let entry = EntryParser.parse("  - 2 onions,   chopped ", existingKeys: [])
        #expect(entry == Entry(name: "onions", quantity: "2", note: "chopped", typed: "- 2 onions, chopped"))
    }

    @Test func severalItemsAreSeparatedByCommasSemicolonsAndNewlinesButNotAnd() {
        let entries = EntryParser.parseAll("2 milk, bread; mac and cheese", existingKeys: []).map { $0.name }
        #expect(entries == ["milk", "bread", "mac and cheese"])
    }

    /// Text of several lines (a recipe, a chat message) is one item per line; a comma in a line
    /// starts its note.
    @Test func severalLinesAreOneItemEach() {
        let text = "Ingredients for 4\n- 2 onions, finely chopped\n\n- 1 tin tomatoes\r\n3. 500 g mince (lean)\n"
        #expect(
            EntryParser.parseAll(text, existingKeys: []).map {
                Entry(name: $0.name, quantity: $0.quantity, note: $0.note)
            } == [
                Entry(name: "Ingredients for 4"), Entry(name: "onions", quantity: "2", note: "finely chopped"),
                Entry(name: "tomatoes", quantity: "1 tin"), Entry(name: "mince", quantity: "500 g", note: "lean"),
            ])
        #expect(EntryParser.pieces("milk, bread") == ["milk", " bread"])
        #expect(EntryParser.pieces("milk, bread\n\n") == ["milk", " bread"])
    }

    /// A comma between digits is a decimal comma, as German, French or Polish write amounts.
    @Test func aDecimalCommaDoesNotSplitAnItem() {
        #expect(EntryParser.parseAll("0,5 l Sahne", existingKeys: []).map(\.quantity) == ["0,5 l"])
        #expect(
            EntryParser.parseAll("Milch, 1,5 kg Kartoffeln,Brot", existingKeys: []).map(\.name) == [
                "Milch", "Kartoffeln", "Brot",
            ])
        // A comma after a letter or before a space still separates.
        #expect(EntryParser.split("Milch,2 Eier") == ["Milch", "2 Eier"])
        #expect(EntryParser.split("1, 2 milk") == ["1", " 2 milk"])
    }

    /// Every line of the measured sets (Benchmarks/quality/parser.tsv and parser-heldout.tsv)
    /// reads as written there: `basket-bench parser` scores the same lines.
    @Test(arguments: ["parser.tsv", "parser-heldout.tsv", "parser-heldout-2.tsv"])
    func everyMeasuredLineReadsAsWritten(file: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Benchmarks/quality/\(file)")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.count > 50)
        for line in lines {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            try #require(f.count == 5, "\(line)")
            let expected = Entry(
                name: f[2], quantity: f[3].isEmpty ? nil : f[3], note: f[4].isEmpty ? nil : f[4], typed: f[1])
            #expect(EntryParser.parse(f[1], existingKeys: []) == expected, "\(f[0]): \(f[1])")
        }
    }
}
