public import BasketCore

/// Lists and their members: what ``BasketService``'s list routes (`BasketService+Lists.swift`)
/// need of a store, invites aside (``InviteStore``).
public protocol ListStore: Sendable {
    /// Creates a list owned by `owner` with a new epoch.
    func createList(_ list: ListID, owner: Int64, encrypted: Bool) throws -> MembershipRecord
    /// The lists the account is a member of, with its role and where each log stands.
    func memberships(of account: Int64) throws -> [MembershipRecord]
    /// The account's role in the list; nil when it is not a member (or there is no such list).
    func role(of account: Int64, in list: ListID) throws -> Role?
    /// The account's role in the list and whether the list is encrypted end to end; nil when it
    /// is not a member (or there is no such list).
    func access(of account: Int64, in list: ListID) throws -> ListAccess?
    /// The list's members, with the replica ids each has written with.
    func members(of list: ListID) throws -> [MemberRecord]
    /// Removes a member, and the invites it made to the list (it may no longer invite); the last
    /// owner cannot leave while others remain. The last member takes the list with it (its log
    /// and invites): nobody could reach it again. Returns whether it did. With
    /// `withdrawingInvitesItUsed` (an owner removed it), the invites it joined with are withdrawn
    /// too: a multi-use code would let it back in as a new account.
    @discardableResult
    func removeMember(_ account: Int64, from list: ListID, withdrawingInvitesItUsed: Bool) throws -> Bool
    /// Gives a member another role. The invites it made for a role above what it may invite now
    /// are withdrawn (an editor's owner invites; all of a viewer's); the last owner cannot become
    /// an editor or a viewer.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember``, ``StoreError/lastOwner``.
    func setRole(_ role: Role, of account: Int64, in list: ListID) throws
    /// Deletes a list: its log, members and invites. Returns false when there was no such list.
    func deleteList(_ list: ListID) throws -> Bool
    /// How many lists count against the account's quota: those it is a member of, and those it
    /// made that still exist.
    func listCount(of account: Int64) throws -> Int
}

/// A list as one member sees it.
public struct MembershipRecord: Hashable, Sendable {
    /// The list.
    public var list: ListID
    /// The member's role.
    public var role: Role
    /// The list's epoch (a new one after a restore).
    public var epoch: String
    /// The list's last sequence number.
    public var cursor: Int64
    /// Whether the list is encrypted end to end.
    public var encrypted = false
}

/// What a push needs to know of its list before it reads the operations: the pusher's role, and
/// whether the list takes sealed values only.
public struct ListAccess: Hashable, Sendable {
    /// The member's role.
    public var role: Role
    /// Whether the list is encrypted end to end.
    public var encrypted: Bool
}

/// A member of a list, as the other members see it.
public struct MemberRecord: Hashable, Sendable {
    /// The member's account name.
    public var account: String
    /// The member's role.
    public var role: Role
    /// The replica ids this member's devices wrote to the list with (the first to push each
    /// one owns it), its first ``maxReplicas``: a history names who made each write.
    public var replicas: [ReplicaID] = []
    /// The member's public key (base64url), when its account has a key pair (``KeyStore``).
    public var publicKey: String?

    /// The most replica ids told per member (a device has one; an account a few). The server
    /// lets an account bind no more to a list (`BasketService.Configuration.maxReplicasPerMember`),
    /// so the answer names every one: a write under another id is not "another device" of theirs.
    public static let maxReplicas = 100
}

extension ListStore {
    /// Makes a plain list (``createList(_:owner:encrypted:)``).
    public func createList(_ list: ListID, owner: Int64) throws -> MembershipRecord {
        try createList(list, owner: owner, encrypted: false)
    }

    /// Removes a member who leaves (``removeMember(_:from:withdrawingInvitesItUsed:)``): the
    /// invites it joined with stay for the others they were meant for.
    @discardableResult
    public func removeMember(_ account: Int64, from list: ListID) throws -> Bool {
        try removeMember(account, from: list, withdrawingInvitesItUsed: false)
    }
}
