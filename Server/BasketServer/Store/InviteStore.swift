public import BasketCore

/// Invites to a list, kept by their code's hash: made by members, previewed and redeemed by
/// whoever holds the code (`BasketService+Lists.swift`).
public protocol InviteStore: Sendable {
    /// Stores an invite by its code's hash, usable `uses` times until `expiresAt`, in one
    /// statement that checks its maker is still a member allowed to make it (an owner; an editor
    /// for an editor's or a viewer's invite) and that the list and the maker have fewer working
    /// invites than `limits` allow: an invite made while its maker is removed or demoted is
    /// either refused or withdrawn with the maker's others.
    /// An encrypted list's invite carries its keys in the code (`keyEpoch`: the newest epoch it
    /// carries): it is stored only while that is the list's newest and no rotation is due, under the
    /// list's lock, so no invite outlives a rotation with a key a removed member held.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember`` (the maker may not make
    ///   it), ``StoreError/tooManyInvites``, ``StoreError/rotationDue``, ``StoreError/staleKey(keyEpoch:)``.
    func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?, keyEpoch: Int64?) throws
    /// What the working invite hashed `hash` is for, as `account` may see it before joining
    /// (nil when there is no such invite at `now`).
    func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview?
    /// Adds the account to the invite's list with the invite's role and uses the invite once (it
    /// is gone after its last use). An account that is a member already keeps its role and the
    /// invite is not used: roles change only through ``ListStore/setRole(_:of:in:)``.
    /// - Throws: ``StoreError/noSuchInvite``; ``StoreError/tooManyMembers`` when the account is not
    ///   a member yet and the list has `maxMembers`.
    func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> MembershipRecord
    /// The list's invites that still work at `now`.
    func invites(of list: ListID, now: Int64) throws -> [InviteRecord]
    /// Withdraws the list's invite with this id; returns it (nil when the list has none).
    func revokeInvite(id: String, of list: ListID) throws -> InviteRecord?
}

/// An invite as a list's members see it: never its code, nor its hash.
public struct InviteRecord: Hashable, Sendable {
    public var id: String
    /// The role it gives.
    public var role: Role
    /// The account that made it.
    public var createdBy: String
    /// When it was made, Unix milliseconds.
    public var created: Int64
    /// When it stops working, Unix milliseconds.
    public var expires: Int64
    /// How many more times it works.
    public var usesLeft: Int
}

/// How many working invites may be out at once (``InviteStore/saveInvite(hash:id:list:role:createdBy:createdAt:expiresAt:uses:limits:title:)``).
public struct InviteLimits: Sendable, Hashable {
    /// On one list, whoever made them.
    public var perList: Int
    /// Made by one member on one list.
    public var perMember: Int

    /// Limits of `perList` working invites on a list and `perMember` by one member.
    public init(perList: Int, perMember: Int) {
        self.perList = perList
        self.perMember = perMember
    }
}

extension InviteStore {
    /// A plain list's invite (``saveInvite(hash:id:list:role:createdBy:createdAt:expiresAt:uses:limits:title:keyEpoch:)``).
    public func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?
    ) throws {
        try saveInvite(
            hash: hash, id: id, list: list, role: role, createdBy: createdBy, createdAt: createdAt,
            expiresAt: expiresAt, uses: uses, limits: limits, title: title, keyEpoch: nil)
    }
}
