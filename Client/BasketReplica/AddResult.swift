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
}
