import BasketCore
import BasketSearch
import Foundation
import SeededRandom

/// `basket-bench search`: per-keystroke search time over 100,000 generated product names, every
/// tier included, against a `localizedStandardContains` scan of the same names.
struct SearchBenchmark {
    var itemCount = 100_000
    var queriesPerKind = 30

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, n in
            switch name {
            case "--items": itemCount = n
            case "--queries": queriesPerKind = n
            default: return false
            }
            return true
        }
    }

    static let adjectives = [
        "Organic", "Fresh", "Smoked", "Crème", "Gluten-free", "Whole", "Greek", "Spicy", "Sweet", "Dried", "Frozen",
        "Wild", "Red", "Green", "Golden", "Crispy", "Light", "Extra", "Natural", "Café", "Pâtisserie", "Jalapeño",
    ]
    static let nouns = [
        "yogurt", "milk", "cheese", "bread", "butter", "tomatoes", "spinach", "salmon", "chicken", "rice", "pasta",
        "coffee", "tea", "chocolate", "cookies", "crackers", "juice", "apples", "bananas", "strawberries", "olive oil",
        "mozzarella", "parmesan", "broccoli", "cucumber", "lettuce", "potatoes", "onions", "garlic", "ginger",
        "crêpes", "pâté", "fraîche", "jambon", "smørrebrød", "øl", "müsli", "brötchen", "croissants", "baguette",
    ]
    static let brands = ["Acme", "Nordic", "Bella", "Zürich", "Łąka", "Ærø", "Sunny", "Valle", "Mont", "Hof"]

    func names() -> [String] {
        var rng = SplitMix64(seed: 11)
        var seen = Set<String>()
        var result: [String] = []
        result.reserveCapacity(itemCount)
        while result.count < itemCount {
            let a = Self.adjectives[Int(rng.next() % UInt64(Self.adjectives.count))]
            let n = Self.nouns[Int(rng.next() % UInt64(Self.nouns.count))]
            let b = Self.brands[Int(rng.next() % UInt64(Self.brands.count))]
            let size = rng.next() % 4 == 0 ? " \(100 + rng.next() % 900) g" : ""
            let name = rng.next() % 3 == 0 ? "\(b) \(a) \(n)\(size)" : "\(a) \(n) \(b) \(rng.next() % 1000)\(size)"
            if seen.insert(ItemKey.normalize(name)).inserted { result.append(name) }
        }
        return result
    }

    func run() throws {
        let names = names()
        let list = ListID(raw: ID128(high: 1, low: 2))
        let items = names.enumerated().map { i, name in
            Item(id: ItemID(raw: ID128(high: 0, low: UInt64(i + 1))), name: name, isChecked: i % 7 == 0)
        }
        _ = list
        var buildTimes: [Double] = []
        var index: SearchIndex?
        for _ in 0..<3 { buildTimes.append(seconds { index = SearchIndex(items: items) }) }
        let searchIndex = index!
        if let traced = ProcessInfo.processInfo.environment["BASKET_BENCH_QUERY"] {
            // One query, each keystroke timed 50 times (median): for looking into a slow one.
            var typed = ""
            for character in traced {
                typed.append(character)
                let text = typed
                let repeats = Int(ProcessInfo.processInfo.environment["BASKET_BENCH_REPEAT"] ?? "") ?? 50
                let times = (0..<repeats).map { _ in
                    seconds { _ = SearchSession(index: searchIndex).search(text, limit: 20) }
                }
                print("\(formatMicros(median(times)))  \"\(text)\"")
            }
            return
        }

        var rng = SplitMix64(seed: 5)
        func pick() -> String { names[Int(rng.next() % UInt64(names.count))] }
        func folded(_ s: String) -> String {
            s.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
        }
        func typo(_ s: String) -> String {
            var chars = Array(s)
            let i = 2 + Int(rng.next() % UInt64(max(1, chars.count - 3)))
            if i + 1 < chars.count { chars.swapAt(i, i + 1) }
            return String(chars)
        }
        let kinds: [(String, () -> String)] = [
            ("exact", { pick() }),
            ("prefix", { String(pick().prefix(8)) }),
            (
                "word prefixes",
                {
                    pick().split(separator: " ").prefix(2).map { String($0.prefix(3)) }.joined(separator: " ")
                }
            ),
            ("substring", { String(pick().dropFirst(3).prefix(6)) }),
            ("accents typed plainly", { folded(String(pick().prefix(12))) }),
            ("fuzzy", { String(pick().split(separator: " ")[1].filter { !"aeiou".contains($0) }.prefix(6)) }),
            ("typo", { typo(String(pick().split(separator: " ")[1])) + "x" }),
            ("no match (offer)", { "Kimchi \(rng.next() % 1000)" }),
        ]
        var table = Table(
            title: "Search: \(itemCount) names, per keystroke (each query typed one character at a time)",
            header: ["query kind", "keystrokes", "p50", "p99", "max"])
        var all: [Double] = []
        var slowest: [(Double, String, String)] = []
        var fullQueries: [String] = []
        for (kind, make) in kinds {
            var times: [Double] = []
            for _ in 0..<queriesPerKind {
                let query = make()
                fullQueries.append(query)
                // As the interactive mode does: one session per typed query.
                let session = SearchSession(index: searchIndex)
                var typed = ""
                for character in query {
                    typed.append(character)
                    let text = typed
                    let time = seconds { _ = session.search(text, limit: 20) }
                    times.append(time)
                    slowest.append((time, kind, text))
                }
            }
            all += times
            times.sort()
            table.add(
                kind, "\(times.count)", formatMicros(times[times.count / 2]),
                formatMicros(times[times.count * 99 / 100]),
                formatMicros(times.last!))
        }
        all.sort()
        table.add(
            "all kinds", "\(all.count)", formatMicros(all[all.count / 2]), formatMicros(all[all.count * 99 / 100]),
            formatMicros(all.last!))

        // Baseline: localizedStandardContains over the same names, for whole queries.
        var baseline: [Double] = []
        for query in fullQueries.prefix(20) {
            baseline.append(seconds { _ = names.filter { $0.localizedStandardContains(query) } })
        }
        let baselineMedian = median(baseline)
        var comparison = Table(
            title: "Search against a localizedStandardContains scan", header: ["measure", "time", "vs baseline"])
        comparison.add(
            "localizedStandardContains scan, one query (baseline, median of 20)", formatMicros(baselineMedian), "1.00x")
        comparison.add(
            "SearchIndex keystroke p50, all tiers", formatMicros(all[all.count / 2]),
            String(format: "%.4fx", all[all.count / 2] / baselineMedian))
        comparison.add(
            "SearchIndex keystroke p99, all tiers", formatMicros(all[all.count * 99 / 100]),
            String(format: "%.4fx", all[all.count * 99 / 100] / baselineMedian))
        comparison.add(
            "SearchIndex build (fold every name, pair/triple lists, short-query hits; median of 3)",
            formatMicros(median(buildTimes)), "")
        print(table.render())
        print(comparison.render())
        if ProcessInfo.processInfo.environment["BASKET_BENCH_SLOWEST"] != nil {
            for (time, kind, text) in slowest.sorted(by: { $0.0 > $1.0 }).prefix(25) {
                print("\(formatMicros(time))  \(kind): \"\(text)\"")
            }
        }
    }
}

func formatMicros(_ s: Double) -> String {
    s >= 0.01 ? String(format: "%.1f ms", s * 1000) : String(format: "%.0f µs", s * 1e6)
}
