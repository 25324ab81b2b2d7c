public import BasketCore

/// One write in an item's history, and whether it is the write its register shows.
public struct HistoryEntry: Hashable, Sendable {
    /// The write.
    public var operation: Op
    /// Whether its register shows it.
    public var isWinner: Bool
    /// Why it won or lost, in words: "latest write", "superseded by a later write (…)",
    /// "same timestamp as …, lower replica id".
    public var reason: String
}
