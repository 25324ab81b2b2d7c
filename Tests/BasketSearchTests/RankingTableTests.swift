import BasketCore
import BasketSearch
import Testing

/// Query → expected first result over a realistic list. `nil` expects no result; `offer` says
/// whether the "+ Add" row must show.
struct RankingCase: CustomStringConvertible, Sendable {
    var query: String
    var first: String?
    var offer: Bool

    var description: String { "\"\(query)\"" }
}

let groceries: [Item] = {
    let list = ListID(raw: ID128(high: 9, low: 9))
    let names = [
        "Milk", "Oat milk", "Milk chocolate", "Soy milk", "Buttermilk", "Greek yogurt", "Yogurt", "Crème fraîche",
        "Sour cream", "Cream cheese", "Cheddar", "Parmesan", "Mozzarella", "Feta", "Bread", "Sourdough bread",
        "Baguette", "Croissants", "Eggs", "Butter", "Olive oil", "Sunflower oil", "Salt", "Black pepper", "Sugar",
        "Brown sugar", "Flour", "Rice", "Basmati rice", "Pasta", "Spaghetti", "Tomatoes", "Cherry tomatoes",
        "Tomato sauce", "Potatoes", "Sweet potatoes", "Onions", "Red onions", "Garlic", "Carrots", "Cucumber",
        "Lettuce", "Spinach", "Broccoli", "Apples", "Bananas", "Oranges", "Lemons", "Limes", "Strawberries",
        "Blueberries", "Coca-Cola", "7 Up", "Orange juice", "Coffee", "Tea", "Green tea", "Jalapeño", "Øl",
        "Ｍｉｓｏ", "Pâté", "Crêpes", "Item 2", "Item 10", "Item 1", "Dish soap", "Toilet paper", "Paper towels",
    ]
    let checked: Set = ["Bread", "Salt", "Item 1", "Green tea", "Soy milk"]
    return names.map {
        Item(id: ItemID(list: list, key: ItemKey.normalize($0)), name: $0, isChecked: checked.contains($0))
    }
}()

let rankingCases: [RankingCase] = [
    // Exact key, pinned first, no offer; case, accents and width both ways.
    .init(query: "milk", first: "Milk", offer: false),
    .init(query: "MILK", first: "Milk", offer: false),
    .init(query: "  milk ", first: "Milk", offer: false),
    .init(query: "creme fraiche", first: "Crème fraîche", offer: false),
    .init(query: "CRÈME FRAÎCHE", first: "Crème fraîche", offer: false),
    .init(query: "jalapeno", first: "Jalapeño", offer: false),
    .init(query: "ol", first: "Øl", offer: false),
    .init(query: "miso", first: "Ｍｉｓｏ", offer: false),
    .init(query: "pate", first: "Pâté", offer: false),
    .init(query: "coca cola", first: "Coca-Cola", offer: false),
    .init(query: "7 up", first: "7 Up", offer: false),
    .init(query: "rice", first: "Rice", offer: false),
    .init(query: "tea", first: "Tea", offer: false),
    // Prefix of the key.
    .init(query: "mil", first: "Milk", offer: true),
    .init(query: "milk ch", first: "Milk chocolate", offer: true),
    .init(query: "sour", first: "Sour cream", offer: true),
    .init(query: "cro", first: "Croissants", offer: true),
    .init(query: "crê", first: "Crêpes", offer: true),
    .init(query: "gre", first: "Green tea", offer: true),  // shorter before unchecked, as specified
    .init(query: "bas", first: "Basmati rice", offer: true),
    // Every word a word-prefix, any order.
    .init(query: "gr yog", first: "Greek yogurt", offer: true),
    .init(query: "yog gr", first: "Greek yogurt", offer: true),
    .init(query: "oat m", first: "Oat milk", offer: true),
    .init(query: "ch tom", first: "Cherry tomatoes", offer: true),
    .init(query: "sw pot", first: "Sweet potatoes", offer: true),
    .init(query: "pap tow", first: "Paper towels", offer: true),
    .init(query: "b pep", first: "Black pepper", offer: true),
    .init(query: "red", first: "Red onions", offer: true),
    // Substrings, also across separators.
    .init(query: "cocacola", first: "Coca-Cola", offer: true),
    .init(query: "ogurt", first: "Yogurt", offer: true),
    .init(query: "berries", first: "Blueberries", offer: true),
    .init(query: "ghetti", first: "Spaghetti", offer: true),
    .init(query: "mozz", first: "Mozzarella", offer: true),
    .init(query: "zzarel", first: "Mozzarella", offer: true),
    // Fuzzy subsequences.
    .init(query: "spgti", first: "Spaghetti", offer: true),
    .init(query: "strwbrr", first: "Strawberries", offer: true),
    .init(query: "mzrl", first: "Mozzarella", offer: true),
    .init(query: "brcl", first: "Broccoli", offer: true),
    .init(query: "bttrmlk", first: "Buttermilk", offer: true),
    // Typos: one edit from 5 letters, two from 9, first letter right, last word may be a prefix.
    .init(query: "bananass", first: "Bananas", offer: true),
    .init(query: "tomatoos", first: "Tomatoes", offer: true),
    .init(query: "yoghurt", first: "Yogurt", offer: true),
    .init(query: "parmsean", first: "Parmesan", offer: true),
    .init(query: "strawbreries", first: "Strawberries", offer: true),
    .init(query: "cucumbre", first: "Cucumber", offer: true),
    .init(query: "brocoli", first: "Broccoli", offer: true),
    .init(query: "brocolli", first: "Broccoli", offer: true),  // 2 edits at 8 letters: allowed
    .init(query: "spinnach", first: "Spinach", offer: true),
    .init(query: "letuce", first: "Lettuce", offer: true),
    .init(query: "orange juic", first: "Orange juice", offer: true),
    .init(query: "xilk", first: "Milk", offer: true),  // a slip in the first letter is a typo too
    .init(query: "milj", first: "Milk", offer: true),  // 4 letters: one edit (j beside k)
    // The offer shows only when no item has the query's key.
    .init(query: "Kimchi", first: nil, offer: true),
    .init(query: "Oat Milk", first: "Oat milk", offer: false),
    .init(query: "is:todo", first: "7 Up", offer: false),  // no text: the list in its own order
    // Tokens: state, exclusions, phrases, anchors; unknown x:y is text.
    .init(query: "milk is:checked", first: "Soy milk", offer: false),  // "Milk" exists: no offer
    .init(query: "milk is:todo", first: "Milk", offer: false),
    .init(query: "milk is:done", first: "Soy milk", offer: false),
    .init(query: "milk -chocolate", first: "Milk", offer: false),
    .init(query: "milk -milk", first: nil, offer: false),
    .init(query: "milk !oat !soy !butter !chocolate", first: "Milk", offer: false),
    .init(query: "oil -olive", first: "Sunflower oil", offer: true),
    .init(query: "\"sour cream\"", first: "Sour cream", offer: false),
    .init(query: "\"cream sour\"", first: nil, offer: true),
    .init(query: "^bread", first: "Bread", offer: false),
    .init(query: "^sugar", first: "Sugar", offer: false),
    .init(query: "^tom", first: "Tomatoes", offer: true),
    .init(query: "size:xl", first: nil, offer: true),
    // Natural order, unchecked before checked, shorter first.
    .init(query: "item", first: "Item 2", offer: true),
    .init(query: "salt", first: "Salt", offer: false),
    .init(query: "bread", first: "Bread", offer: false),
    .init(query: "sugar", first: "Sugar", offer: false),
]

struct RankingTableTests {
    let index = SearchIndex(items: groceries)

    @Test func theTableHasAtLeastSixtyCases() {
        #expect(rankingCases.count >= 60)
    }

    @Test(arguments: rankingCases)
    func firstResult(_ testCase: RankingCase) {
        let result = index.search(Query(testCase.query), limit: 10)
        #expect(
            result.matches.first?.item.name == testCase.first,
            "got \(result.matches.prefix(3).map { "\($0.item.name) (\($0.tier.name))" })")
        #expect((result.offer != nil) == testCase.offer, "offer: \(String(describing: result.offer))")
    }

    @Test func naturalOrderAndCheckedLast() {
        let items = index.search(Query("item"), limit: 10).matches.map(\.item.name)
        #expect(items == ["Item 2", "Item 1", "Item 10"])  // shorter first; then unchecked before checked
        let milks = index.search(Query("milk"), limit: 10).matches.map(\.item.name)
        #expect(milks == ["Milk", "Milk chocolate", "Oat milk", "Soy milk", "Buttermilk"])
    }

    @Test func typosOnlyFillInWhenTheTiersBeforeFindFewerThanThree() {
        // "tomato" finds three items by substring: no typo tier is consulted.
        let result = index.search(Query("tomato"), limit: 10)
        #expect(result.matches.count == 3 && !result.matches.contains { $0.tier == .typo })
    }

    @Test func theOfferKeepsTheUsersCasing() {
        #expect(index.search(Query("  Kimchi   Jjigae "), limit: 5).offer == "Kimchi Jjigae")
        #expect(index.search(Query("is:todo"), limit: 5).offer == nil)
    }
}
