public import BasketCore

/// What one commit changed; sent to every ``Replica/updates()`` stream.
public struct ReplicaUpdate: Hashable, Sendable {
    /// Where a change came from.
    public enum Origin: String, Hashable, Sendable {
        /// A write made through this replica's API.
        case local
        /// Operations from another replica (``Replica/merge(_:)``).
        case remote
    }

    /// Whether this device or another made it.
    public var origin: Origin
    /// Lists whose items or title changed.
    public var lists: Set<ListID>
    /// Items whose state changed (not those that only gained a losing write in their history).
    public var items: Set<ItemID>
}
