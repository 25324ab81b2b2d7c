public import BasketCore
import Foundation

/// What to suggest adding: items bought or removed before, ranked by how often and how recently
/// they were added, each add weighing `0.5^(age / half-life)` (14 days by default).
public enum Suggestions {
    /// How fast an add's weight fades, in days: it halves every 14 days.
    public static let halfLifeDays = 14.0

    /// The score of an item added at `times` (Unix ms), seen at `now`.
    public static func score(times: [UInt64], now: UInt64, halfLifeDays: Double = halfLifeDays) -> Double {
        times.reduce(0) { total, time in
            let ageDays = Double(now > time ? now - time : 0) / 86_400_000
            return total + pow(2, -ageDays / halfLifeDays)
        }
    }

    /// Items not on the list now (checked or removed), best first; `query` narrows them by the
    /// search tiers when it has text.
    public static func rank(
        _ history: [(item: Item, times: [UInt64])], now: UInt64, query: String = "", limit: Int = 10
    ) -> [Item] {
        let candidates = history.filter { $0.item.isChecked || $0.item.isDeleted }
        let scores = Dictionary(candidates.map { ($0.item.id, score(times: $0.times, now: now)) }) { a, _ in a }
        let items = candidates.map { entry -> Item in
            var item = entry.item
            item.isChecked = false  // ranked as suggestions, not by state
            item.isDeleted = false
            return item
        }
        if !Query(query).hasText {
            return Array(
                items.sorted { a, b in
                    let (x, y) = (scores[a.id] ?? 0, scores[b.id] ?? 0)
                    return x != y ? x > y : a.name < b.name
                }.prefix(limit))
        }
        // While typing: the search's tiers first, the history score within a tier.
        let matches = SearchIndex(items: items).search(Query(query), limit: .max).matches
        return Array(
            matches.sorted { a, b in
                if a.tier != b.tier { return a.tier < b.tier }
                return (scores[a.item.id] ?? 0) > (scores[b.item.id] ?? 0)
            }.map(\.item).prefix(limit))
    }
}
