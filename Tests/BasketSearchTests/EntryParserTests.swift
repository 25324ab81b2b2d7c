import BasketSearch
import Testing

struct EntryParserTests {
    @Test(arguments: [
        ("2 milk", "milk", "2"),
        ("milk x2", "milk", "2"),
        ("milk x 3", "milk", "3"),
        ("Milk ×2", "Milk", "2"),
        ("500 g flour", "flour", "500 g"),
        ("1/2 lemon", "lemon", "1/2"),
        ("½ lemon", "lemon", "½"),
        ("1 1/2 cups sugar", "sugar", "1 1/2 cups"),
        ("1½ l milk", "milk", "1½ l"),
        ("0,5 kg apples", "apples", "0,5 kg"),
        ("2 dozen eggs", "eggs", "2 dozen"),
        ("  3   Greek   yogurts ", "Greek yogurts", "3"),
    ])
    func quantitiesAreTakenOutOfTheName(text: String, name: String, quantity: String) {
        #expect(EntryParser.parse(text, existingKeys: []) == Entry(name: name, quantity: quantity))
    }

    @Test(arguments: ["Milk", "mac and cheese", "2", "g flour", "Vitamin B12", "Area 51 crisps", "x2"])
    func textWithoutAQuantityStaysTheName(text: String) {
        #expect(EntryParser.parse(text, existingKeys: []) == Entry(name: text))
    }

    @Test func aNameThatExistsAsTypedIsNotParsed() {
        #expect(EntryParser.parse("7 Up", existingKeys: ["7 up"]) == Entry(name: "7 Up"))
        #expect(EntryParser.parse("7 Up", existingKeys: []) == Entry(name: "Up", quantity: "7"))
    }

    @Test func severalItemsAreSeparatedByCommasSemicolonsAndNewlinesButNotAnd() {
        let entries = EntryParser.parseAll("2 milk, bread; mac and cheese\n500 g flour,, ", existingKeys: [])
        #expect(
            entries == [
                Entry(name: "milk", quantity: "2"), Entry(name: "bread"), Entry(name: "mac and cheese"),
                Entry(name: "flour", quantity: "500 g"),
            ])
    }

    /// A comma between digits is a decimal comma, as German, French or Polish write amounts.
    @Test func aDecimalCommaDoesNotSplitAnItem() {
        #expect(EntryParser.parseAll("0,5 l Sahne", existingKeys: []) == [Entry(name: "Sahne", quantity: "0,5 l")])
        #expect(
            EntryParser.parseAll("Milch, 1,5 kg Kartoffeln,Brot", existingKeys: []) == [
                Entry(name: "Milch"), Entry(name: "Kartoffeln", quantity: "1,5 kg"), Entry(name: "Brot"),
            ])
        // A comma after a letter or before a space still separates.
        #expect(EntryParser.split("Milch,2 Eier") == ["Milch", "2 Eier"])
        #expect(EntryParser.split("1, 2 milk") == ["1", " 2 milk"])
    }
}
