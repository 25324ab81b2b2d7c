import BasketCore

/// A device signed in to the account (a token, as the devices list shows it).
public struct Device: Hashable, Sendable {
    /// The token's public id (for revoking it).
    public var id: String
    /// The device name given at sign-in.
    public var name: String
    /// Unix milliseconds.
    public var created: Int64
    /// When it was last used (Unix milliseconds; updated at most once an hour).
    public var lastUsed: Int64
    /// Whether it is the device asking.
    public var isCurrent: Bool

    /// A device as the devices list shows it.
    public init(id: String, name: String, created: Int64, lastUsed: Int64, isCurrent: Bool) {
        self.id = id
        self.name = name
        self.created = created
        self.lastUsed = lastUsed
        self.isCurrent = isCurrent
    }
}
