public import BasketCore

/// What ``Replica/add(_:to:)-([String],_)`` did with one name.
public struct AddResult: Hashable, Sendable {
    /// What happened to the name.
    public enum Outcome: String, Hashable, Sendable {
        /// A new item.
        case added
        /// The key existed as a removed item: it is back on the list, unchecked.
        case restored
        /// The key existed checked: it is unchecked again (you need it again).
        case unchecked
        /// The key is already on the list, unchecked: nothing changed.
        case alreadyOnList
    }

    /// The item as it stands after the add.
    public var item: Item
    /// What the add did.
    public var outcome: Outcome
    /// Whether the add changed the quantity of an item that was there before ("milk x3").
    public var quantityChanged = false

    /// What an add says, phrase by phrase, as a person reads it (the web client's `addPhrases`,
    /// pinned by the conformance vectors): "Added milk (2), bread", "Brought back eggs",
    /// "milk: quantity now 3", "milk is already on the list".
    public static func phrases(_ results: [AddResult]) -> [String] {
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
            default:
                phrases.append(
                    result.quantityChanged
                        ? "\(item.name): quantity now \(item.quantity ?? "")" : "\(item.name) is already on the list")
            }
        }
        return phrases
    }
}
