import BasketCore
import BasketSearch
import Foundation

/// `basket-bench catalogue`: whether what families type gets the right aisle. Over
/// Benchmarks/quality/aisles.txt (everyday names as people write them, in nine languages, each
/// with the aisle a shop keeps it in), the catalogue's rule (``Catalogue/grocery(_:in:)``) against
/// a baseline of the same run: the catalogue and rule before issue 44 (the ingredients taxonomy,
/// Client/BasketSearch/catalogue.tsv, looked up by the name and by the name without an English
/// plural's "s" or "es", then in English).
struct CatalogueBenchmark {
    var root = Self.repository
    var showMisses = false

    init(arguments: [String]) throws {
        showMisses = try Self.misses(arguments)
    }

    /// The repository this file is in (the quality sets are read from its Benchmarks/quality).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Whether `arguments` ask for the misses (`--misses`, the one option of a quality table).
    static func misses(_ arguments: [String]) throws -> Bool {
        for option in arguments where option != "--misses" {
            throw QualityBenchmark.UsageError("unknown option \(option)")
        }
        return !arguments.isEmpty
    }

    /// A name typed in a language, and the key of the aisle it belongs in.
    struct Case {
        var language: String
        var name: String
        var aisle: String
    }

    /// aisles.txt: lines `LANG AISLE: name, name, …`.
    func cases() throws -> [Case] {
        let text = try String(
            contentsOf: root.appendingPathComponent("Benchmarks/quality/aisles.txt"), encoding: .utf8)
        var out: [Case] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: ":", maxSplits: 1)
            let head = parts.first?.split(separator: " ") ?? []
            guard parts.count == 2, head.count == 2 else { continue }
            for name in parts[1].split(separator: ",") {
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty {
                    out.append(Case(language: String(head[0]), name: trimmed, aisle: String(head[1])))
                }
            }
        }
        return out
    }

    /// The catalogue before issue 44: language → key → aisle key, from catalogue.tsv.
    func before() throws -> [String: [String: String]] {
        let text = try String(
            contentsOf: root.appendingPathComponent("Client/BasketSearch/catalogue.tsv"), encoding: .utf8)
        var out: [String: [String: String]] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t")
            guard fields.count == 3 else { continue }
            let key = ItemKey.normalize(String(fields[2]))
            if out[String(fields[0]), default: [:]][key] == nil {
                out[String(fields[0]), default: [:]][key] = String(fields[1])
            }
        }
        return out
    }

    /// The old rule: the name, then without an English plural's ending, in the language, then in English.
    static func oldAisle(_ name: String, _ language: String, _ catalogue: [String: [String: String]]) -> String? {
        let key = ItemKey.normalize(name)
        var keys = [key]
        if key.count > 3 {
            if key.hasSuffix("s") { keys.append(String(key.dropLast())) }
            if key.hasSuffix("es") { keys.append(String(key.dropLast(2))) }
        }
        for language in [language, "en"] {
            for key in keys { if let aisle = catalogue[language]?[key] { return aisle } }
        }
        return nil
    }

    func run() throws {
        let cases = try cases()
        let old = try before()
        var table = Table(
            title: "Aisles of everyday names (\(cases.count) names in \(Catalogue.languages.count) languages)",
            header: ["language", "names", "right aisle before", "right aisle now", "ratio", "no aisle now", "icon now"])
        var totals = (count: 0, before: 0, now: 0, none: 0, icons: 0)
        var misses: [String] = []
        for language in ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "ja"] {
            let mine = cases.filter { $0.language == language }
            var right = (before: 0, now: 0, none: 0, icons: 0)
            for c in mine {
                if Self.oldAisle(c.name, language, old) == c.aisle { right.before += 1 }
                let grocery = Catalogue.grocery(c.name, in: [language])
                let key = grocery.flatMap { found in
                    Catalogue.aisles(in: language).firstIndex(of: found.aisle).map { Catalogue.aisleKeys[$0] }
                }
                if key == c.aisle {
                    right.now += 1
                } else {
                    misses.append("\(language) \(c.name): \(key ?? "none"), not \(c.aisle)")
                }
                if grocery == nil { right.none += 1 }
                if grocery?.icon != nil { right.icons += 1 }
            }
            func percent(_ n: Int) -> String { String(format: "%.1f %%", 100 * Double(n) / Double(max(1, mine.count))) }
            let ratio = right.before == 0 ? "-" : String(format: "%.2f×", Double(right.now) / Double(right.before))
            table.add(
                language, "\(mine.count)", percent(right.before), percent(right.now), ratio, "\(right.none)",
                percent(right.icons))
            totals = (
                totals.count + mine.count, totals.before + right.before, totals.now + right.now,
                totals.none + right.none, totals.icons + right.icons
            )
        }
        func percent(_ n: Int) -> String { String(format: "%.1f %%", 100 * Double(n) / Double(max(1, totals.count))) }
        table.add(
            "all", "\(totals.count)", percent(totals.before), percent(totals.now),
            String(format: "%.2f×", Double(totals.now) / Double(max(1, totals.before))), "\(totals.none)",
            percent(totals.icons))
        print(table.render())
        if showMisses { for miss in misses { print("  miss: \(miss)") } }
    }
}
