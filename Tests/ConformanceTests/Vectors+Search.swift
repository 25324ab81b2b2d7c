import BasketCLI
import BasketCore
import BasketReplica
import BasketSearch
import Foundation
import TestSupport

// The search, catalogue and entry vectors: what the web client must rank, offer and parse.
extension Vectors {
    // MARK: Searches

    static func searchSets(_ random: inout SeededGenerator) throws -> [String: [SearchItem]] {
        let family: [(String, Bool, String?)] = [
            ("Milk", false, "Dairy"), ("Oat milk", false, "Dairy"), ("Milk chocolate", true, "Sweets"),
            ("Crème fraîche", false, "Dairy"), ("Greek yogurt", false, "Dairy"), ("Bread", false, "Bakery"),
            ("Breadcrumbs", false, nil), ("Brown bread", true, "Bakery"), ("Eggs", false, nil),
            ("Spaghetti", false, "Pasta"), ("Jalapeño peppers", false, nil), ("Tomatoes", false, "Produce"),
            ("Cherry tomatoes", true, "Produce"), ("Toilet paper", false, "Household"), ("Coca-Cola", false, "Drinks"),
            ("7 Up", false, "Drinks"), ("Item 2", false, nil), ("Item 10", false, nil), ("Äpfel", false, "Obst"),
            ("Apfelsaft", false, "Getränke"), ("Straße Kreide", false, nil), ("Øl", true, nil),
            ("パン", false, nil), ("キュウリ", false, nil), ("пицца", false, nil), ("Ben & Jerry’s", false, "Frozen food"),
            ("Peanut butter", false, nil), ("Butter", false, "Dairy"), ("Buttermilk", false, "Dairy"),
            ("Chicken breast", false, "Meat"), ("Chickpeas", false, nil), ("Coffee beans", false, nil),
            ("Washing-up liquid", false, "Household"), ("Bananas", false, "Produce"), ("Banana bread", false, "Bakery"),
        ]
        var used: UInt64 = 1_764_000_000_000
        let familyItems = family.map { name, checked, category -> SearchItem in
            used += 60_000
            return SearchItem(
                name: name, checked: checked, category: category, lastUsed: name.count % 3 == 0 ? used : nil)
        }
        let products = try sample(lines("Benchmarks/quality/products.txt"), 400, &random)
        let everyday = try lines("Benchmarks/quality/everyday.tsv").compactMap {
            $0.split(separator: "\t").last.map(String.init)
        }
        var seen = Set<String>()
        let shop = (products + sample(everyday, 200, &random)).filter { seen.insert(ItemKey.normalize($0)).inserted }
            .map { SearchItem(name: $0, checked: random.chance(15), category: nil, lastUsed: nil) }
        // German names a keyboard without umlauts spells with ae, oe, ue and ss.
        let german = [
            "Gemüsebrühe", "Küchenrolle", "Blätterteig", "Käse", "Brötchen", "Müsli", "Sahne", "Grüne Bohnen", "Öl",
            "Blue cheese", "Kaese-Sticks", "Weißwurst", "Zucchini", "Champignons", "Croissants", "Ketchup", "Quark",
        ].map { SearchItem(name: $0, checked: false, category: nil, lastUsed: nil) }
        return ["family": familyItems, "shop": shop, "german": german]
    }

    static func searchCases(_ sets: [String: [SearchItem]], _ random: inout SeededGenerator) -> [SearchCase] {
        var queries: [(String, String, Int?)] = []
        let typed = [
            "Milk", "milk", "MILK", "mil", "m", "bread", "brea", "creme", "crème fraiche", "fraiche", "yog", "yoghurt",
            "jalapeno", "tomato", "tomatoes", "cola", "coca cola", "coca-cola", "7up", "7 up", "item", "item 1",
            "apfel", "apfle", "strasse", "ol", "pan", "パ", "キュ", "пиц", "пица", "ben", "jerry's", "peanut", "butter",
            "buter", "buttr", "chick", "chikcen", "cofee beans", "washing up", "liquid wash", "banana", "bananna",
            "bnana", "choc", "chocolate milk", "milk choc", "is:checked", "is:unchecked bread", "-bread bread",
            "\"peanut butter\"", "^butter", "in:dairy", "in:frozen-food", "milk !oat", "cheese", "zzz", "Kiwi fruit",
            "eggs", "eg", "toilet", "paper", "cherry", "sp", "spagetti", "spghetti", "x", "",
        ]
        for query in typed { queries.append(("family", query, nil)) }
        let shop = sets["shop"] ?? []
        for _ in 0..<40 {
            let name = shop[random.below(shop.count)].name
            let words = name.split(separator: " ")
            switch random.below(4) {
            case 0: queries.append(("shop", String(name.prefix(1 + random.below(max(1, min(name.count, 8))))), 12))
            case 1: queries.append(("shop", String(words[random.below(words.count)]), 12))
            case 2:
                var letters = Array(name.prefix(9))
                if letters.count > 4 { letters.swapAt(2, 3) }
                queries.append(("shop", String(letters), 12))
            default: queries.append(("shop", ItemKey.normalize(name), 12))
            }
        }
        for query in ["a", "the", "chocolate", "lait", "käse", "oignon", "tomate", "wasser"] {
            queries.append(("shop", query, 12))
        }
        for query in [
            "gemuesebruehe", "Gemuesebruehe", "kuechenrolle", "blaetterteig", "kaese", "Kaese", "broetchen", "muesli",
            "gruene bohnen", "oel", "weisswurst", "blue", "kase", "gemuese", "bratterteig", "kaese is:checked", "sahne",
            // Still being typed: "ae", "oe", "ue", "ss" find what the umlaut or ß finds.
            "kae", "kaes", "broet", "muesl", "kuechen", "gruene b", "weiss", "blae", "ue", "oe", "kaes is:checked",
            // Spelled by sound, as a loanword is heard: found when nothing else is close.
            "zukini", "tsukini", "schampions", "schampinjons", "kroasan", "ketschup", "kwark", "zukini is:todo",
            "zuk", "xyzzy",
        ] {
            queries.append(("german", query, nil))
        }
        for query in ["mlik", "Batter", "spag", "tomatos", "choc milk"] { queries.append(("family", query, nil)) }
        return queries.map { set, query, limit in
            let items = (sets[set] ?? []).map(searchItem)
            var lastUsed: [ItemID: UInt64] = [:]
            for item in sets[set] ?? [] {
                if let used = item.lastUsed { lastUsed[ItemID(list: listID, key: ItemKey.normalize(item.name))] = used }
            }
            let result = Search.search(query, in: items, lastUsed: lastUsed, limit: limit ?? .max)
            let enter: String? =
                switch result.enter {
                case .existing(let item): "existing:" + item.name
                case .add(let text): "add:" + text
                case .nothing: nil
                }
            return SearchCase(
                set: set, query: query, limit: limit, offer: result.offer,
                results: result.matches.map { Hit(name: $0.item.name, tier: $0.tier.name, exact: $0.isExact) },
                enter: enter, didYouMean: result.didYouMean?.name)
        }
    }

    static func searchItem(_ item: SearchItem) -> Item {
        Item(
            id: ItemID(list: listID, key: ItemKey.normalize(item.name)), name: item.name, isChecked: item.checked,
            category: item.category)
    }

    // MARK: Catalogue

    static func catalogueCases() -> [CatalogueCase] {
        // Each step of the rule (the name, a form of it, frozen words, fewer words in each word
        // order, compounds), names of other languages, and names the catalogue does not know.
        let typed: [([String], [String])] = [
            (
                ["en"],
                [
                    "milk", "mil", "choc", "toilet paper", "tomatos", "tea", "flour", "eggs", "birthday candles",
                    "Milch", "bananas", "banana", "tomatoes", "apples", "peas", "gas", "yoghurt", "zucchini",
                    "diapers", "chicken breast", "oat milk", "strawberry yogurt", "frozen broccoli",
                    "chocolate ice cream", "raspberry jam", "garden hose", "pepper", "red pepper", "berries",
                    "loaves", "cherry", "7up", "",
                ]
            ),
            (
                ["de"],
                [
                    "mil", "Milch", "Käse", "kase", "nudeln", "milk", "toilet paper", "brot", "Sahne", "Brötchen",
                    "Wurst", "Kartoffeln", "Kartoffel", "Zwiebeln", "Klopapier", "Hafermilch", "Vollkornbrot",
                    "Erdbeerjoghurt", "Dinkelbrötchen", "TK-Spinat", "Tiefkühlspinat", "Hähnchenkeule",
                    "Schokoladeneis", "Naturreis", "bio Hafermilch",
                ]
            ),
            (["de", "en"], ["eggs", "frozen peas"]),
            (
                ["fr"],
                [
                    "lait", "farine", "pâtes", "papier toilette", "fromage", "yaourt à la fraise", "filet de saumon",
                    "épinards surgelés", "glace à la vanille", "choux",
                ]
            ),
            (["es"], ["leche", "huevos", "pan", "pechuga de pavo", "filete de salmón", "helado de vainilla"]),
            (["it"], ["latte", "pasta", "uova", "pomodoro", "gelato al cioccolato", "filetto di salmone"]),
            (["nl"], ["melk", "kaas", "aardbeienyoghurt", "frambozenjam", "diepvriesspinazie", "appel"]),
            (["pl"], ["mleko", "chleb", "jogurt truskawkowy", "lody czekoladowe", "mrożony szpinak", "cytryna"]),
            (["pt"], ["leite", "arroz", "iogurte de morango", "limão", "limões", "gelado de chocolate"]),
            (["ja"], ["卵", "パスタ", "牛乳", "ミルク", "いちごジャム", "豚ひき肉", "冷凍ブロッコリー", "チョコアイス"]),
            (["xx"], ["milk", "mil"]),
        ]
        return typed.flatMap { languages, queries in
            queries.map {
                let grocery = Catalogue.grocery($0, in: languages)
                return CatalogueCase(
                    languages: languages, query: $0,
                    suggestions: Catalogue.suggestions($0, language: languages[0], limit: 5), aisle: grocery?.aisle,
                    icon: grocery?.icon)
            }
        }
    }

    static func quantitySumCases() -> [QuantitySumCase] {
        let pairs: [(String, String)] = [
            ("2", "1"), ("500 g", "250 g"), ("500 g", "250 G"), ("1,5 l", "0,5 l"), ("1.5 kg", "1 kg"),
            ("1,5 kg", "0.25 kg"),
            ("500 g", "1 pack"), ("500 g + 1 pack", "2 pack"), ("500 g + 1 pack", "1 jar"), ("1/2", "1/4"), ("½", "½"),
            ("1 1/2 cups", "1/2 cups"), ("1½", "1"), ("500ml", "250ml"), ("500ml", "250 ml"), ("3本", "2本"),
            ("2", "x2"), ("some", "2"), ("2", "some"), ("1/3", "1/3"), ("0,333", "0,333"), ("0.1", "0.2"),
            ("999999999", "999999999"), ("1 kg", "500 g"), ("1 l", "1 kg"), ("2 Packung", "1 packung"),
            ("2 + 3 eggs", "1"), ("3/0", "1"),
            (String(repeating: "a", count: 150), "2 pack with a long name like this one here"),
            ("9223372036854775807", "1"), ("1/999999", "1/999998"),
        ]
        return pairs.map { QuantitySumCase(existing: $0, added: $1, result: Quantity.adding($1, to: $0)) }
    }

    static func listTextCases() -> [ListTextCase] {
        func item(_ name: String, quantity: String? = nil, note: String? = nil, category: String? = nil) -> Item {
            Item(
                id: ItemID(list: listID, key: ItemKey.normalize(name)), name: name, quantity: quantity, note: note,
                category: category)
        }
        var checked = item("Tea", category: "Drinks")
        checked.isChecked = true
        var removed = item("Jam", category: "Pantry")
        removed.isDeleted = true
        let family = [
            item("milk", quantity: "2", category: "Dairy & eggs"), item("Bread", note: "sliced", category: "Bakery"),
            item("eggs", quantity: "12", category: "dairy & eggs"), item("garden hose"), checked, removed,
            item("*star* [fruit] #1 <b>", quantity: "1_000", category: "Fruit & vegetables"),
        ]
        let cases: [(String, [String], [Item])] = [
            ("Groceries", ["Bakery", "Dairy & eggs"], family),
            ("Quick", [], [item("milk"), item("bread", quantity: "1")]),
            ("Done", [], [checked]), ("#1 list", [], []),
        ]
        return cases.flatMap { title, aisles, items in
            ListText.Format.allCases.map { format in
                ListTextCase(
                    title: title, aisles: aisles, items: items, format: format.rawValue,
                    text: ListText.render(title: title, items: items, aisles: aisles, format: format))
            }
        }
    }

    static func aisleLanguageCases() -> [AisleLanguageCase] {
        let lists: [[String]] = [
            [], ["Dairy & eggs"], ["Getränke", "Obst & Gemüse", "Drinks"], ["drinks", "DAIRY & EGGS"], ["party"],
            ["Bebidas"], ["Bebidas", "Lácteos y huevos"], ["Bebidas", "Laticínios e ovos"], ["Baby"], ["飲料"],
        ]
        return lists.map { AisleLanguageCase(categories: $0, language: Catalogue.language(ofAisles: $0)) }
    }

    static func aisleNameCases() -> [AisleNameCase] {
        let typed: [(String, String, [String])] = [
            ("dairy", "en", []), ("Dairy", "de", []), ("dairy", "en", ["DAIRY"]), ("obst", "de", []),
            ("fruit", "fr", []), ("Milchprodukte & Eier", "en", []), ("frozen", "ja", []), ("Kühlregal", "de", []),
            ("household", "xx", []), ("fruit & veg", "en", []), ("", "en", []), ("drinks", "pl", ["Napoje zimne"]),
        ]
        return typed.map { typed, language, known in
            AisleNameCase(
                typed: typed, language: language, known: known,
                aisle: Catalogue.aisle(named: typed, language: language, known: known))
        }
    }

    // MARK: Entries

    static func entryCases() -> [EntryCase] {
        let existing = ["7 Up", "2 Minute Noodles", "Käse", "Gemüsebrühe", "Kaese-Sticks"]
        let texts = [
            "milk", "2 milk", "milk x2", "milk x 2", "milk ×3", "500 g flour", "1/2 lemon", "½ lemon",
            "1 1/2 cups sugar",
            "1½ kg potatoes", "milk, bread, eggs", "milk; bread\neggs", "mac and cheese", "7 Up", "7 up",
            "2 Minute Noodles",
            "3 2 Minute Noodles", "1.5 l water", "2 kg", "kg flour", " oat   milk ", ",, milk ,",
            "12 eggs, 2 pack yoghurt",
            "x2", "milk x", "3 bottles of wine", "Ｍｉｌｋ x2",
            "2 x tomatoes", "2 × tomatoes", "2 kg potatoes", "500ml cream", "500ML cream", "milk 2l", "flour 500 g",
            "eggs x12", "1.5kg apples", "apples 1,5kg", "2 Stück Butter", "ビール 3本", "ビール3本", "3本 ビール", "牛乳1パック",
            "3本", "2 x", "Route 66", "7up", "B12", "2 l", "1l", "tomatoes 2", "6 eggs x2",
            "kaese", "kaese x2", "2 gemuesebruehe, kaese-sticks", "kase", "KAESE",
            "0,5 l Sahne", "1,5 kg Kartoffeln", "Milch, 0,5 l Sahne,Brot", "Milch,2 Eier", "2,5", "1, 2 milk",
            "milk @dairy", "2 milk #dairy", "eggs @ fruit & veg", "@dairy", "milk @", "milk #dairy @Kühlregal",
            "kaese @käse", "Käse @dairy",
            // Lines pasted from a recipe or a chat: one item per line, a comma starting the note.
            "- 2 onions, chopped\n- 1 tin tomatoes\n\n3. 500 g mince (lean)", "Milch, Brot\nEier",
            "• Milch\r\n• Brot", "[ ] eggs\n[x] bread", "1) milk\n2) bread", "-", "- ", "1.", "1. 5",
            "(milk)", "milk (", "milk )(", "flour (for the cake) @baking", "eggs (12) x2", "2-3", "2–3 onions",
            "2-in-1 shampoo", "a", "a bag", "an egg", "half", "zwei", "zwei Flaschen", "2 Flaschen", "2 rolls",
            "d'ail", "2 de", "2 kg de", "1 kg de la", "ca.", "ca. milk", "7 Up x2", "2 7 Up", "4711",
            "2 x 500ml", "2 x 400 g tomatoes", "2 x 400 g", "eine halbe", "x2 milk", "2x", "×2 milk",
            "Eier (Bio, 10 Stück)", "\" onmouseover=\"alert(3)", "Eier(10)", "(Bio) Eier",
        ]
        // Every line of the parser's measured sets too (Benchmarks/quality/parser*.tsv).
        let measured = ["parser.tsv", "parser-heldout.tsv", "parser-heldout-2.tsv"].flatMap { file in
            ((try? String(
                contentsOf: repository.appendingPathComponent("Benchmarks/quality").appendingPathComponent(file),
                encoding: .utf8)) ?? "").split(separator: "\n").filter { !$0.hasPrefix("#") }
                .compactMap { $0.split(separator: "\t").dropFirst().first.map(String.init) }
        }
        precondition(measured.count > 250, "the parser's line sets are read")
        let keys = Set(existing.map(ItemKey.normalize))
        return (texts + measured).map { text in
            EntryCase(
                text: text, existing: existing,
                entries: EntryParser.resolvingSpellings(
                    EntryParser.parseAll(text, existingKeys: keys), names: existing
                ).map {
                    EntryValue(
                        name: $0.name, quantity: $0.quantity, category: $0.category, note: $0.note, typed: $0.typed)
                })
        }
    }

    // MARK: Offers

    static func offerCases() -> [OfferCase] {
        let list = ["Milk", "chicken breast", "Bread", "Tomatoes", "Greek yogurt", "Käse", "Brötchen"]
        let removed = ["Chocolate cookies", "Oat milk", "Butter", "Cheddar", "Tortillas"]
        // Due usuals: one also had before (offered once, as due), one the list does not name.
        let due = ["Oat milk", "Bananas"]
        let queries = [
            "choc", "mlik", "milk", "but", "ched", "tom", "oat", "zzzz", "yog", "kaes", "bre", "chicken", "cho", "to",
            "apple", "app", "tort", "chese", "bana", "broetchen", "broet", "Milk", "2 milk", "ch",
        ]
        let item = { (name: String) in Item(id: ItemID(list: listID, key: ItemKey.normalize(name)), name: name) }
        return ["en", "de"].flatMap { language in
            queries.map { query in
                let result = SearchIndex(items: list.map(item)).search(Query(query))
                let excluding = Set((list + removed).map(ItemKey.normalize)).union([ItemKey.normalize(query)])
                let offers = Offers.ranked(
                    meant: result.didYouMean == nil ? nil : result.matches.first,
                    due: Offers.due(due.map(item), query: query),
                    before: Offers.before(removed.map(item), query: query),
                    catalogue: Catalogue.suggestionMatches(query, language: language, excluding: excluding, limit: 3))
                return OfferCase(
                    list: list, removed: removed, due: due, language: language, query: query,
                    offers: offers.map { OfferValue(name: $0.name, source: $0.source.rawValue, tier: $0.tier.name) })
            }
        }
    }
}

/// A register's value in JSON: a string, a flag, or null (as the web's operations hold them).
enum JSONScalar: Codable, Equatable {
    case text(String)
    case flag(Bool)
    case null

    init(_ value: Value) {
        switch value {
        case .text(let text): self = .text(text)
        case .bool(let flag): self = .flag(flag)
        case .null: self = .null
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .flag(flag)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .flag(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }
}

extension Vectors {
    static func newsCases() -> [NewsCase] {
        let sets: [[(String, Bool, String)]] = [
            [("anna", true, "milk")],
            [("anna", true, "milk"), ("anna", true, "eggs"), ("anna", true, "bread")],
            [("bob", false, "milk"), ("anna", true, "eggs"), ("anna", true, "jam"), ("bob", false, "tea")],
            [("bob", true, "milk"), ("anna", true, "eggs"), ("someone", false, "jam")],
            [("you", true, "Crème fraîche")],
            [],
        ]
        return sets.map { entries in
            NewsCase(
                entries: entries.map { NewsEntryValue(who: $0.0, added: $0.1, name: $0.2) },
                lines: Phrases.news(entries.map { (who: $0.0, added: $0.1, name: $0.2) }))
        }
    }

    static func lostWriteCases() -> [LostWriteCase] {
        let cases: [(Field, Value, Value)] = [
            (.checked, .bool(true), .bool(false)), (.checked, .bool(false), .bool(true)),
            (.deleted, .bool(false), .bool(true)), (.deleted, .bool(true), .bool(false)),
            (.name, .text("Milk"), .text("Oat milk")), (.title, .text("Family"), .text("Home")),
            (.quantity, .text("2"), .text("3")), (.quantity, .null, .text("1 l")), (.note, .text("any"), .null),
            (.category, .text("dairy"), .text("drinks")), (.aisles, .text("a,b"), .text("b,a")),
            (.shops, .null, .text(String(repeating: "a", count: 32))), (.places, .null, .text("x")),
            (.dismissed, .null, .text("1")), (.learned, .null, .text("1 1")),
        ]
        return cases.map { field, mine, theirs in
            LostWriteCase(
                who: "bob", name: "milk", field: field.rawValue, mine: JSONScalar(mine), theirs: JSONScalar(theirs),
                line: Phrases.lostWrite(who: "bob", name: "milk", field: field, mine: mine, theirs: theirs))
        }
    }
}
