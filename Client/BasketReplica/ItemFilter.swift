import BasketCore

/// Which items ``Replica/items(in:filter:)`` returns.
public enum ItemFilter: String, Sendable, CaseIterable {
    /// Everything on the list, checked or not (the default).
    case onList
    /// Only items still to buy.
    case unchecked
    /// Only items crossed off.
    case checked
    /// Everything, removed items included.
    case all
}
