import BasketCore
import BasketSearch
import Foundation

/// `basket-bench parser`: how often the add box reads a line as the family meant it. Over
/// Benchmarks/quality/parser.tsv (lines typed or pasted into a shopping list, in eight
/// languages, each with the name, quantity and note it says; the rules were written with it) and
/// parser-heldout.tsv (written after the rules were fixed, in five languages), the share read
/// exactly by ``EntryParser`` against the parser before issue 44 (``ParserBefore``), in the same run.
struct ParserBenchmark {
    var root = CatalogueBenchmark.repository
    var showMisses = false

    init(arguments: [String]) throws {
        showMisses = try CatalogueBenchmark.misses(arguments)
    }

    /// One line of parser.tsv: the language, the line, and what it says.
    struct Case {
        var language: String
        var line: String
        var name: String
        var quantity: String?
        var note: String?
    }

    /// The lines of `file` in Benchmarks/quality (`#` lines are comments).
    static func cases(root: URL, file: String = "parser.tsv") throws -> [Case] {
        let text = try String(
            contentsOf: root.appendingPathComponent("Benchmarks/quality").appendingPathComponent(file), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { return nil }
            return Case(
                language: fields[0], line: fields[1], name: fields[2], quantity: fields[3].isEmpty ? nil : fields[3],
                note: fields[4].isEmpty ? nil : fields[4])
        }
    }

    func run() throws {
        try run(file: "parser.tsv", title: "the rules' own set")
        try run(file: "parser-heldout.tsv", title: "held out (read once, then its misses fixed)")
        try run(file: "parser-heldout-2.tsv", title: "held out, second round")
    }

    func run(file: String, title: String) throws {
        let cases = try Self.cases(root: root, file: file)
        var table = Table(
            title: "Lines read exactly: name, amount, unit and note, \(title) (\(file), \(cases.count) lines)",
            header: ["language", "lines", "exact before", "exact now", "ratio", "name right now", "quantity right now"])
        var totals = (count: 0, before: 0, now: 0, names: 0, quantities: 0)
        var misses: [String] = []
        for language in ["en", "de", "fr", "es", "it", "nl", "pl", "pt"] {
            let mine = cases.filter { $0.language == language }
            if mine.isEmpty { continue }
            var right = (before: 0, now: 0, names: 0, quantities: 0)
            for c in mine {
                let old = ParserBefore.parse(c.line, existingKeys: [])
                if old.name == c.name && old.quantity == c.quantity && c.note == nil { right.before += 1 }
                let entry = EntryParser.parse(c.line, existingKeys: [])
                if entry.name == c.name { right.names += 1 }
                if entry.quantity == c.quantity { right.quantities += 1 }
                if entry.name == c.name && entry.quantity == c.quantity && entry.note == c.note {
                    right.now += 1
                } else {
                    misses.append(
                        "\(language) \(c.line): \(entry.name) | \(entry.quantity ?? "") | \(entry.note ?? "")")
                }
            }
            func percent(_ n: Int) -> String { String(format: "%.1f %%", 100 * Double(n) / Double(max(1, mine.count))) }
            table.add(
                language, "\(mine.count)", percent(right.before), percent(right.now),
                right.before == 0 ? "-" : String(format: "%.2f×", Double(right.now) / Double(right.before)),
                percent(right.names),
                percent(right.quantities))
            totals = (
                totals.count + mine.count, totals.before + right.before, totals.now + right.now,
                totals.names + right.names, totals.quantities + right.quantities
            )
        }
        func percent(_ n: Int) -> String { String(format: "%.1f %%", 100 * Double(n) / Double(max(1, totals.count))) }
        table.add(
            "all", "\(totals.count)", percent(totals.before), percent(totals.now),
            String(format: "%.2f×", Double(totals.now) / Double(max(1, totals.before))), percent(totals.names),
            percent(totals.quantities))
        print(table.render())
        if showMisses { for miss in misses { print("  miss: \(miss)") } }
    }
}
