import BasketCore
import BasketSearch
import Testing

struct CatalogueTests {
    @Test func theLanguageComesFromTheLocaleVariablesInPosixOrder() {
        #expect(Catalogue.language(environment: ["LANG": "fr_FR.UTF-8"]) == "fr")
        #expect(Catalogue.language(environment: ["LANG": "fr_FR.UTF-8", "LC_MESSAGES": "de_DE"]) == "de")
        #expect(Catalogue.language(environment: ["LC_ALL": "ja_JP.UTF-8", "LC_MESSAGES": "de_DE"]) == "ja")
        // The C locale, no locale, and a language the catalogue lacks: English.
        #expect(Catalogue.language(environment: ["LANG": "C.UTF-8"]) == "en")
        #expect(Catalogue.language(environment: [:]) == "en")
        #expect(Catalogue.language(environment: ["LANG": "nl_NL.UTF-8"]) == "en")
    }

    @Test func everyLanguageHasTheSameGroceriesAndNothingTwice() {
        #expect(Catalogue.languages.count == 14)
        for language in Catalogue.languages {
            let names = Catalogue.names(in: language)
            #expect(names.count >= 100, "\(language)")
            #expect(Set(names.map(ItemKey.normalize)).count == names.count, "\(language)")
        }
    }

    @Test func suggestionsRankLikeTheSearchAndLeaveOutWhatTheListHas() {
        #expect(Catalogue.suggestions("mil", language: "en").first == "milk")
        #expect(Catalogue.suggestions("tomatos", language: "en").first == "tomatoes")
        #expect(Catalogue.suggestions("brot", language: "de").first == "brot")
        #expect(Catalogue.suggestions("хлеб", language: "ru").first == "хлеб")
        #expect(!Catalogue.suggestions("mil", language: "en", excluding: ["milk"]).contains("milk"))
        #expect(Catalogue.suggestions("", language: "en").isEmpty)
        #expect(Catalogue.suggestions("zzqx", language: "en").isEmpty)
        #expect(Catalogue.suggestions("mil", language: "xx").isEmpty)
        // Words and their beginnings, not letters inside a word.
        #expect(Catalogue.suggestions("tea", language: "en").contains("bubble tea"))
        #expect(!Catalogue.suggestions("tea", language: "en").contains("steak"))
    }
}
