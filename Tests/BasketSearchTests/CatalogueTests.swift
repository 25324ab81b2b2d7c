import BasketCore
import Testing

@testable import BasketSearch

struct CatalogueTests {
    @Test func theLanguageComesFromTheLocaleVariablesInPosixOrder() {
        #expect(Catalogue.language(environment: ["LANG": "fr_FR.UTF-8"]) == "fr")
        #expect(Catalogue.language(environment: ["LANG": "fr_FR.UTF-8", "LC_MESSAGES": "de_DE"]) == "de")
        #expect(Catalogue.language(environment: ["LC_ALL": "ja_JP.UTF-8", "LC_MESSAGES": "de_DE"]) == "ja")
        #expect(Catalogue.language(environment: ["LANG": "nl_NL.UTF-8"]) == "nl")
        // The C locale, no locale, and a language the catalogue lacks: English.
        #expect(Catalogue.language(environment: ["LANG": "C.UTF-8"]) == "en")
        #expect(Catalogue.language(environment: [:]) == "en")
        #expect(Catalogue.language(environment: ["LANG": "sv_SE.UTF-8"]) == "en")
    }

    /// Nine languages, hundreds of groceries each, nothing twice, the same aisles in each.
    @Test func everyLanguageHasHundredsOfGroceriesAndNothingTwice() {
        #expect(Catalogue.languages == ["de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt"])
        for language in Catalogue.languages {
            let names = Catalogue.names(in: language)
            #expect(names.count >= 400, "\(language): \(names.count)")
            #expect(Set(names.map(ItemKey.normalize)).count == names.count, "\(language)")
            #expect(Catalogue.aisles(in: language).count == Catalogue.aisles(in: "en").count, "\(language)")
        }
    }

    /// What a person writes on a list, in their language; household goods too.
    @Test func theEverydayGroceriesAreThere() {
        let expected: [String: [String]] = [
            "en": ["milk", "flour", "sugar", "pasta", "eggs", "butter", "toilet paper", "rice", "coffee"],
            "de": ["Milch", "Käse", "Mehl", "Zucker", "Nudeln", "Eier", "Butter", "Toilettenpapier"],
            "fr": ["lait", "farine", "sucre", "beurre", "pâtes", "œufs", "papier toilette"],
            "es": ["leche", "harina", "azúcar", "huevos"],
            "it": ["latte", "farina", "zucchero", "uova"],
            "ja": ["卵", "パスタ", "トイレットペーパー"],
        ]
        for (language, words) in expected {
            let names = Set(Catalogue.names(in: language).map(ItemKey.normalize))
            for word in words { #expect(names.contains(ItemKey.normalize(word)), "\(language): \(word)") }
        }
    }

    @Test func eachGroceryHasItsAisleInTheListsLanguage() {
        #expect(Catalogue.aisle(of: "Milk", language: "en") == "Dairy & eggs")
        #expect(Catalogue.aisle(of: "milch", language: "de") == "Milchprodukte & Eier")
        #expect(Catalogue.aisle(of: "toilet paper", language: "en") == "Household")
        #expect(Catalogue.aisle(of: "banana", language: "en") == "Fruit & vegetables")
        // An English name on a German list: the same aisle, in German.
        #expect(Catalogue.aisle(of: "toilet paper", language: "de") == "Haushalt")
        #expect(Catalogue.aisle(of: "garden hose", language: "en") == nil)
        #expect(Catalogue.aisle(of: "milk", language: "xx") == "Dairy & eggs")
        // A German name on an English list, from a German device: named in the list's language.
        #expect(Catalogue.grocery("Klopapier", in: ["en", "de"]) == Catalogue.Grocery(aisle: "Household", icon: "🧻"))
    }

    /// The names the issue found without an aisle, as a family types them.
    @Test func whatFamiliesTypeGetsAnAisle() {
        let typed: [(String, String, String)] = [
            ("en", "yoghurt", "dairy"), ("en", "zucchini", "produce"), ("en", "courgette", "produce"),
            ("en", "diapers", "baby"), ("en", "chicken breast", "meat"), ("en", "oat milk", "dairy"),
            ("en", "cat litter", "pet"), ("en", "frozen peas", "frozen"),
            ("de", "Brötchen", "bakery"), ("de", "Semmel", "bakery"), ("de", "Wurst", "meat"),
            ("de", "Kartoffeln", "produce"), ("de", "Zwiebeln", "produce"), ("de", "Klopapier", "household"),
            ("de", "Hafermilch", "dairy"), ("de", "Vollkornbrot", "bakery"),
        ]
        for (language, name, aisle) in typed {
            let found = Catalogue.grocery(name, in: [language])?.aisle
            #expect(found == Catalogue.aisles(in: language)[Catalogue.aisleKeys.firstIndex(of: aisle)!], "\(name)")
        }
    }

    /// Each step of the rule, in the order it is taken.
    @Test func theRuleFindsFormsFrozenWordsHeadsAndCompounds() {
        func aisle(_ name: String, _ language: String) -> String? {
            Catalogue.grocery(name, in: [language]).flatMap { found in
                Catalogue.aisles(in: language).firstIndex(of: found.aisle).map { Catalogue.aisleKeys[$0] }
            }
        }
        // Forms: a plural the catalogue writes in the singular, and the other way round.
        #expect(Catalogue.forms(of: "hahnchenkeule", language: "de").contains("hahnchenkeulen"))
        #expect(aisle("Hähnchenkeule", "de") == "meat")
        #expect(aisle("limões", "pt") == "produce" && aisle("limão", "pt") == "produce")
        #expect(aisle("pomodoro", "it") == "produce")
        // A frozen word: the freezer, with the icon of what is frozen.
        #expect(Catalogue.grocery("frozen broccoli", in: ["en"]) == Catalogue.Grocery(aisle: "Frozen", icon: "🥦"))
        #expect(aisle("TK-Spinat", "de") == "frozen" && aisle("Tiefkühlspinat", "de") == "frozen")
        #expect(aisle("冷凍ブロッコリー", "ja") == "frozen")
        // But a name the catalogue has wins over the rule ("freezer bags" are household).
        #expect(aisle("Gefrierbeutel", "de") == "household" && aisle("diepvrieszakjes", "nl") == "household")
        // Fewer words: the words a phrase is about, by the first language's order.
        #expect(aisle("strawberry yogurt", "en") == "dairy")
        #expect(aisle("filete de salmón", "es") == "fish")
        #expect(aisle("yaourt à la fraise", "fr") == "dairy")
        // Compounds, the longest known end first ("Naturreis" is rice, not ice).
        #expect(aisle("Erdbeerjoghurt", "de") == "dairy")
        #expect(aisle("Naturreis", "de") == "pantry")
        #expect(aisle("いちごジャム", "ja") == "pantry")
        // Not in English: "strawberry" alone is fruit, and nothing is made of the ending of a word.
        #expect(aisle("strawberryjam", "en") == nil)
    }

    @Test func iconsAreWhereOneEmojiSaysIt() {
        #expect(Catalogue.icon(of: "milk", language: "en") == "🥛")
        #expect(Catalogue.icon(of: "Brot", language: "de") == "🍞")
        #expect(Catalogue.icon(of: "toilet paper", language: "en") == "🧻")
        #expect(Catalogue.icon(of: "Hafermilch", language: "de") == "🥛")
        #expect(Catalogue.icon(of: "flour", language: "en") == nil)
        #expect(Catalogue.icon(of: "garden hose", language: "en") == nil)
    }

    @Test func suggestionsRankLikeTheSearchAndLeaveOutWhatTheListHas() {
        #expect(Catalogue.suggestions("mil", language: "en").first == "milk")
        #expect(Catalogue.suggestions("choc", language: "en").contains("chocolate"))
        #expect(Catalogue.suggestions("mil", language: "de").first == "Milch")
        #expect(Catalogue.suggestions("tomatos", language: "en").first == "tomatoes")
        #expect(Catalogue.suggestions("brot", language: "de").first == "Brot")
        #expect(!Catalogue.suggestions("mil", language: "en", excluding: ["milk"]).contains("milk"))
        #expect(Catalogue.suggestions("", language: "en").isEmpty)
        #expect(Catalogue.suggestions("zzqx", language: "en").isEmpty)
        #expect(Catalogue.suggestions("mil", language: "xx").isEmpty)
        // Words and their beginnings, not letters inside a word.
        #expect(Catalogue.suggestions("tea", language: "en").first == "tea")
        #expect(!Catalogue.suggestions("tea", language: "en").contains("steak"))
    }
}
