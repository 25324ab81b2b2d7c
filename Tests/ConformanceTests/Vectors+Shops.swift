import BasketCLI
import BasketCore
import TestSupport

/// Shops and usuals in the vectors: shop ids, marks and places as stored, learned orders after a
/// run of trips (pinned aisles, a hand-set order, aisles unknown to it, hostile values), and the
/// usual each run of check-offs makes (Shops.swift, shops.js).
extension Vectors {
    struct ShopIDCase: Codable, Equatable {
        var key: String
        var id: String
    }

    struct ShopOrderCase: Codable, Equatable {
        var about: String
        var base: [String]
        var pinned: [String]
        /// The stored learned value before the first trip (null: none), as a peer may have written it.
        var learned: String?
        /// The trips, each the aisles in the order checked off, ending a day apart from `start`.
        var trips: [[String]]
        var start: Int64
        /// The learned value after each trip, and the order the shop is walked in after it.
        var after: [String]
        var orders: [[String]]
    }

    struct UsualCase: Codable, Equatable {
        var checks: [Int64]
        var dismissed: String?
        /// purchases, interval, last, due; null when it is no usual.
        var pattern: [Int64]?
    }

    struct EveryCase: Codable, Equatable {
        var interval: Int64
        var phrase: String
    }

    static func everyCases() -> [EveryCase] {
        let day: Int64 = 86_400_000
        return [
            1, day / 2 - 1, day / 2, day, day * 3 / 2, 6 * day, 7 * day, 7 * day + day / 3, 13 * day, 14 * day,
            30 * day,
        ]
        .map { EveryCase(interval: $0, phrase: Phrases.every($0)) }
    }

    struct MarksCase: Codable, Equatable {
        var stored: String?
        var ids: [String]
        var formatted: String?
        var places: String?
        var parsedPlaces: [String: String]
        var formattedPlaces: String?
    }

    static func shopIDCases() -> [ShopIDCase] {
        ["lidl", "rewe", "aldi süd", "lidl #2", "ｌｉｄｌ", ""].map {
            ShopIDCase(key: $0, id: ItemID(list: listID, shopKey: $0).description)
        }
    }

    static func shopOrderCases() -> [ShopOrderCase] {
        var random = SeededGenerator(seed: 46)
        let aisles = ["Produce", "Dairy", "Bakery", "Frozen", "Drinks", "Household", "Meat", "Sweets"]
        var cases: [(String, [String], [String], String?, [[String]])] = [
            (
                "three trips that agree swap two neighbours", aisles.prefix(3).map { $0 }, [], nil,
                Array(repeating: ["Dairy", "Produce", "Bakery"], count: 4)
            ),
            (
                "a pinned aisle keeps its place", ["Produce", "Dairy", "Bakery", "Frozen"], ["dairy"], nil,
                Array(repeating: ["Frozen", "Dairy", "Bakery", "Produce"], count: 5)
            ),
            ("without an order the first trip sets it", [], [], nil, [["Frozen", "Produce", "Frozen", "Bakery"]]),
            (
                "aisles the order does not know join at the end", ["Produce", "Dairy"], [], nil,
                [["Sweets", "Dairy", "Produce"], ["Dairy", "Sweets"]]
            ),
            (
                "one aisle teaches nothing but counts; names fold by key", ["Produce", "Dairy"], ["nothing"], nil,
                [["produce", "PRODUCE"], ["DAIRY", "Produce"]]
            ),
            (
                "a stored value from a peer, hostile parts skipped", ["Produce", "Dairy", "Bakery"], [],
                "2 1700000000000 Dairy=500, bad, Produce=x, =4, Bakery=99999999999999999999, Produce=1200, dairy=7",
                [["Bakery", "Produce", "Dairy"]]
            ),
            ("not a learned value at all", ["Produce", "Dairy"], [], "+3 12 Dairy=0", [["Dairy", "Produce"]]),
            ("aisles with commas or equals signs teach nothing", ["A", "B"], [], nil, [["B", "x, y", "a=b", "A"]]),
        ]
        for n in 0..<6 {
            let base = aisles.shuffled(using: &random).prefix(Int.random(in: 0...8, using: &random)).map { $0 }
            let pinned = base.shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random)).map { $0 }
            let trips = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                aisles.shuffled(using: &random).prefix(Int.random(in: 0...8, using: &random)).map { $0 }
            }
            cases.append(("random \(n)", base, pinned, nil, trips))
        }
        return cases.map { about, base, pinned, stored, trips in
            let start: Int64 = 1_796_000_000_000
            var learned = ShopOrder.Learned(text: stored)
            var after: [String] = []
            var orders: [[String]] = []
            for (n, trip) in trips.enumerated() {
                let next = ShopOrder.learn(
                    trip: trip, base: base, pinned: pinned, learned: learned, at: start + Int64(n) * 86_400_000)
                after.append(next.text)
                learned = ShopOrder.Learned(text: next.text)
                orders.append(ShopOrder.order(base: base, pinned: pinned, learned: learned))
            }
            return ShopOrderCase(
                about: about, base: base, pinned: pinned, learned: stored, trips: trips, start: start, after: after,
                orders: orders)
        }
    }

    static func usualCases() -> [UsualCase] {
        let day: Int64 = 86_400_000
        let t: Int64 = 1_796_000_000_000
        var random = SeededGenerator(seed: 47)
        var runs: [([Int64], String?)] = [
            ([t, t + 7 * day, t + 14 * day], nil),
            ([t, t + 7 * day], nil),
            ([t + 14 * day, t, t + 7 * day, t + 7 * day + 3_600_000], nil),
            ([t, t + 6 * day, t + 13 * day, t + 20 * day, t + 21 * day], nil),
            ([t, t + 7 * day, t + 14 * day, t + 21 * day], String(t + 7 * day)),
            ([t, t + 7 * day, t + 14 * day], "not a time"),
            ((0..<30).map { t + Int64($0) * 3 * day }, nil),
            ([t, t + Usuals.sameTrip - 1, t + Usuals.sameTrip, t + 2 * Usuals.sameTrip], nil),
        ]
        for _ in 0..<8 {
            runs.append(
                (
                    (0..<Int.random(in: 0...20, using: &random)).map { _ in
                        t + Int64.random(in: 0...(90 * day), using: &random)
                    }, nil
                ))
        }
        return runs.map { checks, dismissed in
            let pattern = Usuals.pattern(checks: checks, dismissed: Usuals.dismissedAt(dismissed))
            return UsualCase(
                checks: checks, dismissed: dismissed,
                pattern: pattern.map { [Int64($0.purchases), $0.interval, $0.last, $0.due] })
        }
    }

    static func marksCases() -> [MarksCase] {
        let lidl = ItemID(list: listID, shopKey: "lidl").description
        let rewe = ItemID(list: listID, shopKey: "rewe").description
        let stored: [(String?, String?)] = [
            (nil, nil),
            ("\(rewe),\(lidl)", "\(rewe)=Frozen;\(lidl)=Dairy  & eggs"),
            ("\(lidl),\(lidl.uppercased()),nonsense,,\(rewe)", "bad;\(lidl)=;=x;\(rewe.uppercased())= Bakery "),
            ("", ""),
        ]
        return stored.map { text, places in
            let ids = ShopMarks.parse(text)
            let parsed = ShopPlaces.parse(places)
            return MarksCase(
                stored: text, ids: ids.map(\.description), formatted: ShopMarks.format(ids), places: places,
                parsedPlaces: Dictionary(uniqueKeysWithValues: parsed.map { ($0.key.description, $0.value) }),
                formattedPlaces: ShopPlaces.format(parsed))
        }
    }
}
