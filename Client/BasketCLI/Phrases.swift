package import BasketCore
package import BasketReplica

/// What the library reports, said in words: the CLI's sentences (the web client's twin is
/// phrases.js; the conformance vectors pin the add's).
package enum Phrases {
    /// "1 change", "3 changes" (changes as a person counts them: one per item).
    package static func changes(_ n: Int) -> String { n == 1 ? "1 change" : "\(n) changes" }

    /// "1 item", "12 items".
    package static func items(_ n: Int) -> String { n == 1 ? "1 item" : "\(n) items" }

    /// What an add says, phrase by phrase, as a person reads it (the web client's `addPhrases`):
    /// "Added milk (2), bread", "Brought back eggs", "milk: now 3", "milk is already on
    /// the list".
    package static func added(_ results: [AddResult]) -> [String] {
        let added = results.filter { $0.outcome == .added }.map { result in
            result.item.name + (result.item.quantity.map { " (\($0))" } ?? "")
        }
        var phrases = added.isEmpty ? [] : ["Added " + added.joined(separator: ", ")]
        for result in results where result.outcome != .added {
            let item = result.item
            switch result.outcome {
            case .restored, .unchecked:
                phrases.append(
                    "Brought back \(item.name)"
                        + (result.quantityChanged ? " (quantity now \(item.quantity ?? ""))" : ""))
            case .added, .alreadyOnList:
                phrases.append(
                    result.quantityChanged
                        ? "\(item.name): now \(item.quantity ?? "")" : "\(item.name) is already on the list")
            }
        }
        return phrases
    }

    /// The status line of a live sync: "synced", "sending 2 changes…", "can't reach the server ·
    /// 1 change waiting".
    package static func status(_ status: LiveSync.Status) -> String {
        switch status {
        case .connecting: "connecting…"
        case .synced: "synced"
        case .sending(let n): "sending \(changes(n))…"
        case .offline(let n, _): "can't reach the server" + (n > 0 ? " · \(changes(n)) waiting" : "")
        case .failed(let n, let reason): "not sent: \(reason)" + (n > 0 ? " · \(changes(n)) waiting" : "")
        }
    }

    /// What other devices did since the list was last shown, a line per person and kind
    /// (phrases.js `newsPhrases`): "anna added 3 items", "anna added milk", "bob changed 2 items".
    /// Who is the member's name, or "someone" while the members answer does not say.
    package static func news(_ entries: [(who: String, added: Bool, name: String)]) -> [String] {
        var groups: [(who: String, added: Bool, names: [String])] = []
        for entry in entries {
            if let index = groups.firstIndex(where: { $0.who == entry.who && $0.added == entry.added }) {
                groups[index].names.append(entry.name)
            } else {
                groups.append((entry.who, entry.added, [entry.name]))
            }
        }
        groups.sort { ($0.added ? 0 : 1, $0.who) < ($1.added ? 0 : 1, $1.who) }
        return groups.map { group in
            "\(group.who) \(group.added ? "added" : "changed") "
                + (group.names.count == 1 ? group.names[0] : items(group.names.count))
        }
    }

    /// A write of this device that another member's later one replaced, said once (phrases.js
    /// `lostWrite`): "bob unchecked milk after you checked it", "anna set the note of milk to
    /// 'oat' after you set 'any'".
    package static func lostWrite(who: String, name: String, field: Field, mine: Value, theirs: Value) -> String {
        func quoted(_ value: Value) -> String { value.textValue.map { "'\($0)'" } ?? "nothing" }
        switch field {
        case .checked:
            return theirs == .bool(true)
                ? "\(who) checked \(name) after you unchecked it" : "\(who) unchecked \(name) after you checked it"
        case .deleted:
            return theirs == .bool(true)
                ? "\(who) removed \(name) after you added it back" : "\(who) brought back \(name) after you removed it"
        case .name:
            return "\(who) renamed \(quoted(mine)) to \(quoted(theirs)) after you named it"
        case .title:
            return "\(who) renamed the list \(quoted(theirs)) after you named it \(quoted(mine))"
        case .quantity, .note, .category:
            let what = field == .category ? "aisle" : field.rawValue
            if theirs == .null { return "\(who) cleared the \(what) of \(name) after you set \(quoted(mine))" }
            return "\(who) set the \(what) of \(name) to \(quoted(theirs)) after you "
                + (mine == .null ? "cleared it" : "set \(quoted(mine))")
        case .aisles, .archived, .language, .typed:
            return "\(who) changed the list's \(field.rawValue) after you did"
        case .shops: return "\(who) changed the shops of \(name) after you did"
        case .places: return "\(who) moved \(name) to another aisle after you did"
        case .dismissed: return "\(who) changed whether \(name) is a usual after you did"
        case .shop, .shopRemoved, .order, .pinned, .learned: return "\(who) changed a shop after you did"
        }
    }

    /// How often a usual is bought (phrases.js `every`): "every day", "every 6 days", "every
    /// week", "every 2 weeks", from an interval in milliseconds rounded to whole days.
    package static func every(_ interval: Int64) -> String {
        let days = max(1, Int((Double(interval) / 86_400_000).rounded()))
        if days == 1 { return "every day" }
        if days == 7 { return "every week" }
        if days % 7 == 0 { return "every \(days / 7) weeks" }
        return "every \(days) days"
    }
}
