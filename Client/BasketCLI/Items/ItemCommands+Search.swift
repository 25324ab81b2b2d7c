import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// `basket search` and `basket suggest`: the search over the merged list, as a script reads it.
extension ItemCommands {
    static func search(_ context: Context) throws {
        let query = context.arguments.positionals.joined(separator: " ")
        var limit = Int.max
        if let raw = context.arguments.value(.limit) {
            guard let n = Int(raw), n > 0 else {
                throw UsageError(message: "--limit takes a positive number", usage: "basket search QUERY [--limit N]")
            }
            limit = n
        }
        var items: [Item] = []
        var lastUsed: [ItemID: UInt64] = [:]
        if let list = try context.list(create: false) {
            items = try context.replica().items(in: list.id)
            lastUsed = Self.lastAdded(try context.replica().addTimes(in: list.id))
        }
        let result = Search.search(query, in: items, lastUsed: lastUsed, limit: limit)
        if context.json {
            try context.console.json(
                Output.Search(
                    query: query, offer: result.offer.map(Output.SearchOffer.init),
                    results: result.matches.map {
                        Output.SearchHit(
                            item: $0.item, exact: $0.isExact, tier: $0.tier.name, score: $0.score)
                    }))
            if result.matches.isEmpty { throw ExitStatus(code: 1) }
            return
        }
        for match in result.matches { context.console.print(line(for: match.item)) }
        if let offer = result.offer {
            context.console.print("+ Add \"\(offer)\"   (basket add \(shellQuoted(offer)))")
        }
        if result.matches.isEmpty && result.offer == nil { context.console.print("No items.") }
        // As grep: 1 when nothing matched (an offer to add is not a match).
        if result.matches.isEmpty { throw ExitStatus(code: 1) }
    }

    static func suggest(_ context: Context) throws {
        var limit = 10
        if let raw = context.arguments.value(.limit) {
            guard let n = Int(raw), n > 0 else {
                throw UsageError(
                    message: "--limit takes a positive number", usage: "basket suggest [QUERY] [--limit N]")
            }
            limit = n
        }
        guard let list = try context.list(create: false) else {
            if context.json { return try context.console.json(Output.Suggestions(suggestions: [])) }
            return context.console.print("Nothing to suggest yet.")
        }
        let history = try context.replica().addTimes(in: list.id)
        let query = context.arguments.positionals.joined(separator: " ")
        let suggestions = Suggestions.rank(
            history, now: HybridClock.wallClockMilliseconds(), query: query, limit: limit)
        // Below the user's own history: the bundled catalogue, for what the list never had.
        let language = Catalogue.language(environment: context.environment)
        let catalogue = Catalogue.suggestions(
            query, language: language, excluding: Set(history.map(\.item.key)),
            limit: limit - suggestions.count)
        if context.json {
            return try context.console.json(
                Output.Suggestions(
                    suggestions: suggestions.map {
                        Output.Suggestion(name: $0.name, source: "history", item: $0)
                    } + catalogue.map { Output.Suggestion(name: $0, source: "catalogue", language: language) }))
        }
        if suggestions.isEmpty && catalogue.isEmpty { context.console.print("Nothing to suggest yet.") }
        let rows = suggestions.map { ($0.name, "bought before") } + catalogue.map { ($0, "catalogue: \(language)") }
        let width = rows.map { DisplayWidth.columns(of: $0.0) }.max() ?? 0
        for (name, source) in rows {
            context.console.print(
                name + String(repeating: " ", count: width - DisplayWidth.columns(of: name)) + "  (\(source))")
        }
    }

    /// When each item was last added (Unix ms), from the replica's `addTimes(in:)`: equal search
    /// matches rank the more recently added first.
    static func lastAdded(_ added: [(item: Item, times: [UInt64])]) -> [ItemID: UInt64] {
        var last: [ItemID: UInt64] = [:]
        for (item, times) in added { last[item.id] = times.max() }
        return last
    }

    static func shellQuoted(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" }
            ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
