import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// The state of the interactive search, apart from the terminal: what was typed, what is
/// selected, and what to show. Tests drive it directly; the terminal loop feeds it keys.
struct InteractiveState {
    /// Which part of the list is shown, as the seed's scope bar has it; Ctrl-S goes to the next.
    enum Scope: Hashable {
        case all, toBuy, checked
        case category(String)

        /// The query token that narrows a search to the scope.
        var token: String {
            switch self {
            case .all: ""
            case .toBuy: "is:todo"
            case .checked: "is:done"
            case .category(let name): "in:" + name.split(separator: " ").joined(separator: "-")
            }
        }

        var label: String {
            switch self {
            case .all: "all"
            case .toBuy: "to buy"
            case .checked: "checked"
            case .category(let name): name
            }
        }
    }

    var query = ""
    var selection = 0
    var scope = Scope.all
    /// Group headings shown before some matches (by match index): the aisles of the items to buy.
    var headings: [Int: String] = [:]
    var result = SearchResult(query: "", offer: nil, matches: [])
    /// Removed items to bring back, ranked by how often and how recently they were added.
    var suggestions: [Item] = []
    /// Usuals that are due and not on the list to buy: they lead what is offered.
    var due: [Item] = []
    /// Common groceries from the bundled catalogue that the list does not have, with how each matched.
    var catalogue: [SearchMatch] = []
    /// Beside the create row: the closest item, items had before and the catalogue's names, in
    /// the order both clients offer them (``Offers``).
    var offers: [Offers.Offer] = []
    var message = ""

    /// Rows that can be selected, in the order shown. When Enter adds what was typed (no item has
    /// its key: ``SearchResult/enter``), the offer comes first, so Enter never takes a prefix,
    /// typo or "had it before" row; then ``offers`` (the closest item, "did you mean …?", items
    /// had before and the catalogue's names, ranked as the phone ranks them: one ↓ away), then the
    /// list's other matches. Otherwise the matches (the exact one first), the suggestions, then
    /// the catalogue's.
    var rows: [Row] {
        let matches = result.matches.map(Row.match)
        if offerFirst, let offer = result.offer {
            let offered = offers.compactMap { offered -> Row? in
                switch offered.source {
                case .due: return .due(offered.name)
                case .list: return result.matches.first.map(Row.match)
                case .before:
                    let key = ItemKey.normalize(offered.name)
                    return suggestions.first { $0.key == key }.map(Row.suggestion)
                case .catalogue: return .catalogue(offered.name)
                }
            }
            let meantShown = offers.contains { $0.source == .list }
            return [.offer(offer)] + offered + (meantShown ? Array(matches.dropFirst()) : matches)
        }
        // Nothing typed: the due usuals not on the list lead what is suggested.
        let leading = query.trimmingCharacters(in: .whitespaces).isEmpty ? due.map { Row.due($0.name) } : []
        let dueKeys = Set(leading.isEmpty ? [] : due.map(\.key))
        return leading + matches + suggestions.filter { !dueKeys.contains($0.key) }.map(Row.suggestion)
            + (result.offer.map { [Row.offer($0)] } ?? [])
            + catalogue.map { Row.catalogue($0.item.name) }
    }

    /// Whether `match` is shown as "did you mean …?": the list's closest item, among ``offers``.
    func isMeant(_ match: SearchMatch) -> Bool {
        result.matches.first?.item.id == match.item.id && offers.contains { $0.source == .list }
    }

    /// Whether the offer leads: something was typed and Enter adds it.
    var offerFirst: Bool {
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty, case .add = result.enter else { return false }
        return true
    }

    var rowCount: Int { rows.count }

    /// What a selectable row is.
    enum Row {
        case match(SearchMatch)
        case suggestion(Item)
        case offer(String)
        case catalogue(String)
        /// A usual that is due, not on the list to buy.
        case due(String)
    }

    /// The row at `index` (in ``rows``' order).
    func row(_ index: Int) -> Row? {
        let all = rows
        return index >= 0 && index < all.count ? all[index] : nil
    }

    mutating func clampSelection() {
        selection = max(0, min(selection, max(0, rowCount - 1)))
    }

    /// What Tab completes to: an `is:` token, or the selected item's name.
    func completion() -> String? {
        let words = query.split(separator: " ", omittingEmptySubsequences: false)
        if let last = words.last, last.hasPrefix("is:") || last == "is" {
            let options = ["is:todo", "is:done", "is:checked", "is:unchecked"]
            if let match = options.first(where: { $0.hasPrefix(last) && $0 != last }) {
                return (words.dropLast().map(String.init) + [match]).joined(separator: " ") + " "
            }
            return nil
        }
        let name: String?
        switch row(selection) {
        case .match(let match): name = match.item.name
        case .suggestion(let item): name = item.name
        case .catalogue(let catalogued), .due(let catalogued): name = catalogued
        // On the create row, the closest item's name ("did you mean?"), else the first suggestion's
        // (history first, then the catalogue).
        case .offer:
            name =
                offers.first?.name ?? result.matches.first?.item.name ?? suggestions.first?.name
                ?? catalogue.first?.item.name
        case nil: name = nil
        }
        // The name takes the place of the words typed; tokens (is:todo, in:dairy, -word) stay.
        let tokens = words.filter { Self.isToken($0) }.map(String.init)
        return name.map { (tokens + [$0]).joined(separator: " ") }
    }

    /// Whether a query word narrows rather than names: `is:`, `in:`, or an exclusion (-word, !word).
    static func isToken(_ word: Substring) -> Bool {
        word.hasPrefix("is:") || word.hasPrefix("in:")
            || (word.count > 1 && (word.hasPrefix("-") || word.hasPrefix("!")))
    }
}
