import BasketCore
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
}
