public import BasketCore

/// An invite to a list. Its code is known only to whoever made it, once.
public struct Invite: Hashable, Sendable {
    /// The invite's public id (for withdrawing it).
    public var id: String
    /// The code, for the one who just made it; nil in a listing.
    public var code: String?
    /// The role it gives.
    public var role: Role
    /// The account that made it.
    public var createdBy: String
    /// Unix milliseconds.
    public var expiresAt: Int64
    /// How many more people may join with it.
    public var usesLeft: Int

    /// An invite as the server described it.
    public init(id: String, code: String?, role: Role, createdBy: String, expiresAt: Int64, usesLeft: Int) {
        self.id = id
        self.code = code
        self.role = role
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.usesLeft = usesLeft
    }
}
