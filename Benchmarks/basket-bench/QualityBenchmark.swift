import BasketCore
import BasketSearch
import Foundation
import SeededRandom
import Spawn

/// `basket-bench quality`: whether the search puts first the item a person meant. Over the corpus
/// of Benchmarks/quality (50,000 real product names and short everyday names in 14 languages, see
/// SOURCES.md there), queries of many kinds — accents typed plainly, one and two typos of each
/// sort, keyboard neighbours, word prefixes, other casing, words in another order, nothing
/// matching — are run through Basket's search and two baselines of the same run: a plain
/// case-insensitive `contains` (in the list's order) and `fzf --filter` (Debian's fzf).
struct QualityBenchmark {
    var corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("quality")
    var seed: UInt64 = 14
    var productTargets = 600
    var perKind = 150
    var skipFzf = false

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            switch option {
            case "--corpus":
                guard let path = rest.popFirst() else { throw UsageError("--corpus takes a directory") }
                corpus = URL(fileURLWithPath: path)
            case "--seed":
                guard let text = rest.popFirst(), let n = UInt64(text) else {
                    throw UsageError("--seed takes a number")
                }
                seed = n
            case "--per-kind":
                guard let text = rest.popFirst(), let n = Int(text), n > 0 else {
                    throw UsageError("--per-kind takes a positive number")
                }
                perKind = n
            case "--no-fzf": skipFzf = true
            default: throw UsageError("unknown option \(option)")
            }
        }
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
        init(_ text: String) { description = text }
    }

    /// A corpus name: its text, and the keyboard its language types on.
    struct Name {
        var text: String
        var layout: Keyboard
        var isEveryday: Bool
    }

    /// A query and the item meant (nil: nothing should match).
    struct Case {
        var kind: String
        var query: String
        var meant: String?
    }

    func load() throws -> [Name] {
        let products = try String(contentsOf: corpus.appendingPathComponent("products.txt"), encoding: .utf8)
        let everyday = try String(contentsOf: corpus.appendingPathComponent("everyday.tsv"), encoding: .utf8)
        var seen = Set<String>()
        var names: [Name] = []
        for line in everyday.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let text = String(parts[1])
            let layout: Keyboard = parts[0] == "fr" ? .azerty : parts[0] == "de" ? .qwertz : .qwerty
            if seen.insert(ItemKey.normalize(text)).inserted {
                names.append(Name(text: text, layout: layout, isEveryday: true))
            }
        }
        for line in products.split(separator: "\n") where seen.insert(ItemKey.normalize(String(line))).inserted {
            names.append(Name(text: String(line), layout: .qwerty, isEveryday: false))
        }
        return names
    }

    func run() throws {
        let names = try load()
        let keys = Set(names.map { ItemKey.normalize($0.text) })
        var rng = SplitMix64(seed: seed)
        let everyday = names.filter(\.isEveryday)
        var products = names.filter { !$0.isEveryday }
        for i in stride(from: products.count - 1, to: 0, by: -1) {
            products.swapAt(i, Int(rng.next() % UInt64(i + 1)))
        }
        // Targets: every everyday name and some products, in a seeded order; each kind of query
        // takes the first `perKind` targets it applies to.
        var targets = everyday + products.prefix(productTargets)
        for i in stride(from: targets.count - 1, to: 0, by: -1) {
            targets.swapAt(i, Int(rng.next() % UInt64(i + 1)))
        }
        var cases: [Case] = []
        for kind in QueryKinds.all {
            var made = 0
            for target in targets where made < perKind {
                guard let query = kind.make(target.text, target.layout, &rng) else { continue }
                // A slip that lands on another item's name is that item's query, not this one's.
                let key = ItemKey.normalize(query)
                if key != ItemKey.normalize(target.text) && keys.contains(key) { continue }
                cases.append(Case(kind: kind.name, query: query, meant: target.text))
                made += 1
            }
        }
        for _ in 0..<perKind {
            let query = QueryKinds.gibberish(&rng)
            if !keys.contains(where: { $0.contains(ItemKey.normalize(query)) }) {
                cases.append(Case(kind: "nothing matches", query: query, meant: nil))
            }
        }

        let items = names.enumerated().map { i, name in
            Item(id: ItemID(raw: ID128(high: 0, low: UInt64(i + 1))), name: name.text)
        }
        let index = SearchIndex(items: items)
        let texts = names.map(\.text)
        let lowered = texts.map { $0.lowercased() }
        var ranks: [String: [String: [Int?]]] = [:]  // kind → engine → rank of the meant item (1-based)
        func record(_ engine: String, _ c: Case, _ ranked: [String]) {
            let rank: Int?
            if let meant = c.meant {
                let key = ItemKey.normalize(meant)
                rank = ranked.prefix(50).firstIndex { ItemKey.normalize($0) == key }.map { $0 + 1 }
            } else {
                rank = ranked.isEmpty ? 1 : nil  // nothing shown is right
            }
            ranks[c.kind, default: [:]][engine, default: []].append(rank)
        }
        let started = Date()
        // BASKET_QUALITY_MISSES=1 prints every query whose meant item Basket did not put first.
        let showMisses = ProcessInfo.processInfo.environment["BASKET_QUALITY_MISSES"] != nil
        for c in cases {
            let found = index.search(Query(c.query), limit: 50).matches
            record("basket", c, found.map(\.item.name))
            if showMisses, let meant = c.meant,
                found.first.map({ ItemKey.normalize($0.item.name) }) != ItemKey.normalize(meant)
            {
                let first = found.first.map { "\($0.item.name) [\($0.tier.name)]" } ?? "nothing"
                print("miss (\(c.kind)): \"\(c.query)\" meant \"\(meant)\", first \(first)")
            }
            if showMisses, c.meant == nil, let shown = found.first {
                print("miss (\(c.kind)): \"\(c.query)\" shows \"\(shown.item.name)\" [\(shown.tier.name)]")
            }
            let needle = c.query.lowercased()
            record("contains", c, zip(texts, lowered).filter { $0.1.contains(needle) }.prefix(50).map(\.0))
        }
        let basketSeconds = Date().timeIntervalSince(started)
        var fzfNote = "not run (--no-fzf)"
        if !skipFzf {
            let list = FileManager.default.temporaryDirectory.appendingPathComponent("basket-quality-\(getpid()).txt")
            try texts.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: list) }
            let fzfStarted = Date()
            for c in cases {
                let output = try Self.fzf(c.query, list: list.path)
                record("fzf", c, output)
            }
            fzfNote = String(format: "%.1f s for %d queries", Date().timeIntervalSince(fzfStarted), cases.count)
        }

        var table = Table(
            title:
                "Search quality (\(names.count) names: \(products.count) products, \(everyday.count) everyday names; "
                + "\(cases.count) queries, seed \(seed))",
            header: [
                "kind", "queries", "top-1", "top-5", "MRR", "contains top-1", "contains top-5", "fzf top-1",
                "fzf top-5",
            ])
        func percent(_ part: Int, _ whole: Int) -> String {
            whole == 0 ? "-" : String(format: "%.1f %%", 100 * Double(part) / Double(whole))
        }
        func summary(_ list: [Int?]) -> (top1: String, top5: String, mrr: String) {
            let top1 = list.filter { $0 == 1 }.count
            let top5 = list.filter { ($0 ?? 99) <= 5 }.count
            let mrr = list.isEmpty ? 0 : list.reduce(0.0) { $0 + ($1.map { 1 / Double($0) } ?? 0) } / Double(list.count)
            return (percent(top1, list.count), percent(top5, list.count), String(format: "%.3f", mrr))
        }
        var all: [String: [Int?]] = [:]
        for kind in QueryKinds.all.map(\.name) + ["nothing matches"] {
            guard let engines = ranks[kind] else { continue }
            let b = summary(engines["basket"] ?? [])
            let c = summary(engines["contains"] ?? [])
            let f = summary(engines["fzf"] ?? [])
            table.add(kind, "\(engines["basket"]?.count ?? 0)", b.top1, b.top5, b.mrr, c.top1, c.top5, f.top1, f.top5)
            for (engine, list) in engines { all[engine, default: []] += list }
        }
        let b = summary(all["basket"] ?? [])
        let c = summary(all["contains"] ?? [])
        let f = summary(all["fzf"] ?? [])
        table.add("all", "\(cases.count)", b.top1, b.top5, b.mrr, c.top1, c.top5, f.top1, f.top5)
        print(table.render())
        print(
            String(
                format: "Basket: %.1f s for %d queries (index of %d names); fzf: %@", basketSeconds, cases.count,
                names.count, fzfNote))
    }

    /// `fzf --filter QUERY` over the names in `list`: its ranked lines.
    static func fzf(_ query: String, list: String) throws -> [String] {
        let process = try Subprocess(
            "/usr/bin/env", ["fzf", "--filter", query], stdin: try Data(contentsOf: URL(fileURLWithPath: list)),
            stderr: .discard)
        _ = try process.finish(timeout: 60)
        return process.stdout.split(separator: "\n", omittingEmptySubsequences: true).prefix(50).map(String.init)
    }
}

/// A keyboard, for slips onto a neighbouring key.
enum Keyboard: Sendable {
    case qwerty, azerty, qwertz

    var rows: [[Character]] {
        switch self {
        case .qwerty: ["qwertyuiop", "asdfghjkl", "zxcvbnm"].map(Array.init)
        case .azerty: ["azertyuiop", "qsdfghjklm", "wxcvbn"].map(Array.init)
        case .qwertz: ["qwertzuiopü", "asdfghjklöä", "yxcvbnm"].map(Array.init)
        }
    }

    /// The keys around `key` (same row, and the rows above and below), when it is on the keyboard.
    func neighbours(of key: Character) -> [Character] {
        let lower = Character(key.lowercased())
        for (r, row) in rows.enumerated() {
            guard let c = row.firstIndex(of: lower) else { continue }
            var found: [Character] = []
            for dr in -1...1 {
                let rr = r + dr
                guard rr >= 0, rr < rows.count else { continue }
                for dc in (dr == 0 ? [-1, 1] : [0, 1]) {
                    let cc = c + dc - (dr < 0 ? 0 : (dr > 0 ? 1 : 0))
                    if cc >= 0, cc < rows[rr].count, rows[rr][cc] != lower { found.append(rows[rr][cc]) }
                }
            }
            return found
        }
        return []
    }
}

/// The kinds of queries a person types for an item, each made from the item's name.
struct QueryKinds: Sendable {
    var name: String
    var make: @Sendable (String, Keyboard, inout SplitMix64) -> String?

    static func pick<T>(_ values: [T], _ rng: inout SplitMix64) -> T { values[Int(rng.next() % UInt64(values.count))] }

    /// Positions of letters in words of at least `minimum` letters, where a slip is plausible.
    static func letterPositions(_ chars: [Character], minimum: Int = 4) -> [Int] {
        var positions: [Int] = []
        var start = 0
        for i in 0...chars.count {
            if i == chars.count || !chars[i].isLetter {
                if i - start >= minimum { positions += Array(start..<i) }
                start = i + 1
            }
        }
        return positions
    }

    static func edit(_ text: String, _ sort: String, _ layout: Keyboard, _ rng: inout SplitMix64) -> String? {
        var chars = Array(text)
        let positions = letterPositions(chars).filter { chars[$0].isASCII || sort == "delete" || sort == "doubled" }
        guard !positions.isEmpty else { return nil }
        let at = pick(positions, &rng)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz")
        switch sort {
        case "insert": chars.insert(pick(alphabet, &rng), at: at + 1)
        case "delete":
            guard at > 0 else { return nil }  // the first letter is rarely missed
            chars.remove(at: at)
        case "substitute":
            let other = alphabet.filter { String($0) != chars[at].lowercased() }
            chars[at] = pick(other, &rng)
        case "transpose":
            guard at + 1 < chars.count, chars[at + 1].isLetter, chars[at] != chars[at + 1] else { return nil }
            chars.swapAt(at, at + 1)
        case "doubled": chars.insert(chars[at], at: at)
        case "neighbour":
            let near = layout.neighbours(of: chars[at])
            guard !near.isEmpty else { return nil }
            chars[at] = pick(near, &rng)
        default: return nil
        }
        return String(chars)
    }

    static let sorts = ["insert", "delete", "substitute", "transpose", "doubled", "neighbour"]

    static let all: [QueryKinds] =
        [
            QueryKinds(name: "exact name") { text, _, _ in text },
            QueryKinds(name: "accents typed plainly") { text, _, _ in
                let plain = text.folding(options: .diacriticInsensitive, locale: nil)
                return plain == text ? nil : plain
            },
            QueryKinds(name: "other casing") { text, _, rng in
                let changed = rng.next() % 2 == 0 ? text.uppercased() : text.lowercased()
                return changed == text ? text.capitalized == text ? nil : text.capitalized : changed
            },
        ]
        + sorts.map { sort in
            QueryKinds(name: "1 typo: \(sort)") { text, layout, rng in edit(text, sort, layout, &rng) }
        }
        + [
            QueryKinds(name: "2 typos") { text, layout, rng in
                guard letterPositions(Array(text), minimum: 7).count >= 7 else { return nil }
                guard let once = edit(text, pick(sorts, &rng), layout, &rng) else { return nil }
                return edit(once, pick(sorts, &rng), layout, &rng)
            },
            QueryKinds(name: "word prefixes") { text, _, _ in
                let words = text.split(separator: " ").filter { $0.count >= 3 }
                guard words.count >= 2 else { return nil }
                return words.prefix(3).map { String($0.prefix(3)) }.joined(separator: " ")
            },
            QueryKinds(name: "words in another order") { text, _, _ in
                let words = text.split(separator: " ")
                guard words.count >= 2, words.count <= 4 else { return nil }
                return words.reversed().joined(separator: " ")
            },
        ]

    /// Letters that spell nothing on a shopping list.
    static func gibberish(_ rng: inout SplitMix64) -> String {
        let consonants = Array("bcdfghjklmnpqrstvwxz")
        return String((0..<(6 + Int(rng.next() % 4))).map { _ in pick(consonants, &rng) })
    }
}
