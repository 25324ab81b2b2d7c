import BasketCore

/// The outcome of ``Replica/merge(_:)``.
public struct MergeResult: Hashable, Sendable {
    /// Operations new to this replica (kept in history).
    public var new: Int
    /// Operations already known, ignored.
    public var duplicates: Int
    /// Registers whose value changed.
    public var changedItems: Int
}
