import Testing

@testable import BasketSearch

/// The weighted distance behind the typo matches, pinned case by case.
struct EditDistanceTests {
    func distance(_ a: String, _ b: String, limit: Int = 100, prefix: Bool = false) -> Int? {
        EditDistance.distance(Array(a.utf8), Array(b.utf8), limit: limit, prefix: prefix)
    }

    @Test func eachKindOfSlipHasItsCost() {
        #expect(distance("milk", "milk") == 0)
        #expect(distance("mulk", "milk") == 3)  // u and i are neighbours
        #expect(distance("mxlk", "milk") == 4)  // x and i are not
        #expect(distance("mlik", "milk") == 3)  // two letters swapped
        #expect(distance("piza", "pizza") == 2)  // one of a doubled letter missing
        #expect(distance("milkk", "milk") == 2)  // a letter typed twice
        #expect(distance("mik", "milk") == 4)  // a letter missing
        #expect(distance("smilk", "milk") == 4)  // a letter added
        // Neighbours on AZERTY (a–z) and QWERTZ (z–u) count too.
        #expect(distance("zpple", "apple") == 3)
        #expect(distance("uebra", "zebra") == 3)
    }

    @Test func charactersNotBytes() {
        // One doubled katakana letter (3 bytes), one Cyrillic letter missing (2 bytes).
        #expect(distance("キュウリリ", "キュウリ") == 2)
        #expect(distance("пица", "пицца") == 2)
        #expect(distance("пирог", "пицца", limit: 8) == nil)
        #expect(EditDistance.characters(Array("пицца".utf8)) == 5)
    }

    @Test func limitsAndBeginnings() {
        #expect(distance("mxlk", "milk", limit: 3) == nil)
        #expect(distance("strawberries", "straw", limit: 8) == nil)
        // The typed word against the closest beginning of the candidate: "chocp" is "choco" with a
        // neighbouring key.
        #expect(distance("chocp", "chocolate", limit: 4, prefix: true) == 3)
        #expect(distance("choc", "chocolate", limit: 4, prefix: true) == 0)
        #expect(EditDistance.allowance(3) == 0)
        #expect(EditDistance.allowance(5) == 4)
        #expect(EditDistance.allowance(6) == 6)
        #expect(EditDistance.allowance(7) == 8)
    }
}
