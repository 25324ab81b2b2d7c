public import BasketCore

/// A list as the replica knows it.
public struct ListInfo: Hashable, Sendable, Identifiable {
    /// The list's id.
    public var id: ListID
    /// The list's title.
    public var title: String
    /// Items on the list (checked or not, removed ones excluded).
    public var itemCount: Int
    /// Items still to buy.
    public var uncheckedCount: Int
    /// The aisle order: category names in the order of the shop (empty when not set).
    public var aisles: [String] = []
    /// Whether the list is archived (read-only until an owner unarchives it).
    public var isArchived = false
    /// The language its aisles are named in ("en", "de"), as its creator or an owner set it; nil
    /// for a list made before lists had one.
    public var language: String?
}
