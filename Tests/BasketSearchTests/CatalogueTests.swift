import BasketCore
import BasketSearch
import Testing

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
        #expect(Catalogue.aisle(of: "birthday candles", language: "en") == nil)
        #expect(Catalogue.aisle(of: "milk", language: "xx") == "Dairy & eggs")
    }

    @Test func suggestionsRankLikeTheSearchAndLeaveOutWhatTheListHas() {
        #expect(Catalogue.suggestions("mil", language: "en").first == "milk")
        #expect(Catalogue.suggestions("mil", language: "de").first == "Milch")
        #expect(Catalogue.suggestions("tomatos", language: "en").contains("tomato"))
        #expect(Catalogue.suggestions("brot", language: "de").first == "Brot")
        #expect(!Catalogue.suggestions("mil", language: "en", excluding: ["milk"]).contains("milk"))
        #expect(Catalogue.suggestions("", language: "en").isEmpty)
        #expect(Catalogue.suggestions("zzqx", language: "en").isEmpty)
        #expect(Catalogue.suggestions("mil", language: "xx").isEmpty)
        // Words and their beginnings, not letters inside a word.
        #expect(Catalogue.suggestions("tea", language: "en").contains("green tea"))
        #expect(!Catalogue.suggestions("tea", language: "en").contains("steak"))
    }
}
