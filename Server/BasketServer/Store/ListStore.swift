public import BasketCore

/// Lists and their members: what ``BasketService``'s list routes (`BasketService+Lists.swift`)
/// need of a store, invites aside (``InviteStore``).
public protocol ListStore: Sendable {
    /// Creates a list owned by `owner` with a new epoch.
    func createList(_ list: ListID, owner: Int64) throws -> MembershipRecord
    func memberships(of account: Int64) throws -> [MembershipRecord]
    func role(of account: Int64, in list: ListID) throws -> Role?
    func members(of list: ListID) throws -> [MemberRecord]
    /// Removes a member, and the invites it made to the list (it may no longer invite); the last
    /// owner cannot leave while others remain. The last member takes the list with it (its log
    /// and invites): nobody could reach it again. Returns whether it did.
    @discardableResult
    func removeMember(_ account: Int64, from list: ListID) throws -> Bool
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
    public var list: ListID
    public var role: Role
    public var epoch: String
    public var cursor: Int64
}

public struct MemberRecord: Hashable, Sendable {
    public var account: String
    public var role: Role
    /// The replica ids this member's devices wrote to the list with (the first to push each
    /// one owns it), at most ``maxReplicas``: a history names who made each write.
    public var replicas: [ReplicaID] = []

    /// The most replica ids told per member (a device has one; an account a few).
    public static let maxReplicas = 100

    /// The query that reads them: each account's first ``maxReplicas`` replica ids on the list
    /// whose id is the one parameter (`?` in SQLite, `$1` in PostgreSQL).
    static func replicasQuery(_ parameter: String) -> String {
        """
        SELECT account, replica FROM (
            SELECT r.account, r.replica, row_number() OVER (PARTITION BY r.account ORDER BY r.replica) AS n
            FROM replicas r JOIN lists l ON l.no = r.list WHERE l.id = \(parameter)
        ) AS firsts WHERE n <= \(maxReplicas) ORDER BY account, replica
        """
    }
}
