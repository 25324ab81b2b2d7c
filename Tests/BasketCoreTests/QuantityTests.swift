import BasketCore
import Testing

/// What adding an amount to an item's makes: sums in one unit, amounts side by side otherwise.
struct QuantityTests {
    @Test(arguments: [
        ("2", "1", "3"), ("500 g", "250 g", "750 g"), ("1,5 l", "0,5 l", "2 l"), ("1.5 kg", "1 kg", "2.5 kg"),
        ("1/2", "1/4", "3/4"), ("1 1/2 cups", "1/2 cups", "2 cups"), ("500ml", "250 ml", "750ml"), ("3本", "2本", "5本"),
        ("2 Packung", "1 packung", "3 Packung"),
    ])
    func amountsOfOneUnitAreSummedAndWrittenAsTheFirst(existing: String, added: String, sum: String) {
        #expect(Quantity.adding(added, to: existing) == sum)
    }

    @Test func otherUnitsAndWordsStayBesideNeverConverted() {
        #expect(Quantity.adding("1 pack", to: "500 g") == "500 g + 1 pack")
        #expect(Quantity.adding("2 pack", to: "500 g + 1 pack") == "500 g + 3 pack")
        #expect(Quantity.adding("500 g", to: "1 kg") == "1 kg + 500 g")
        #expect(Quantity.adding("1 kg", to: "1 l") == "1 l + 1 kg")
        #expect(Quantity.adding("2", to: "some") == "some + 2")
    }

    @Test func whatWouldOverflowOrGrowTooLongIsNotSummed() {
        #expect(Quantity.adding("1", to: "9223372036854775807") == "9223372036854775807 + 1")
        let long = String(repeating: "a", count: Quantity.maxSumBytes)
        #expect(Quantity.adding("2", to: long) == "2")
    }
}
