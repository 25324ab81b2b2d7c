public import BasketCore

/// An account on the server.
public struct Account: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var passwordHash: String
}

/// A member's rights on a list.
public enum Role: String, Hashable, Sendable, CaseIterable, Comparable {
    case viewer, editor, owner

    public var canPush: Bool { self != .viewer }

    public static func < (a: Role, b: Role) -> Bool {
        let order: [Role] = [.viewer, .editor, .owner]
        return order.firstIndex(of: a)! < order.firstIndex(of: b)!
    }
}

/// A list as one member sees it.
public struct Membership: Hashable, Sendable {
    public var list: ListID
    public var role: Role
    public var epoch: String
    public var cursor: Int64
}

public struct Member: Hashable, Sendable {
    public var account: String
    public var role: Role
}

/// The outcome of storing a batch of operations.
public struct AppendResult: Hashable, Sendable {
    public var accepted: Int
    public var duplicates: Int
    /// The list's last sequence number after the batch.
    public var cursor: Int64
    /// The list's epoch (clients compare it with theirs).
    public var epoch: String
}

/// A page of a list's log.
public struct Page: Sendable {
    /// Encoded operations in one page at most, about 1 MiB: with every text field at its byte
    /// limit a page of 5,000 operations would be 40 MB, built in memory for every pull.
    public static let defaultMaxBytes = 1 << 20

    /// The operations, encoded (docs/encoding.md), ready to send.
    public var encoded: [UInt8]
    public var count: Int
    /// The sequence number of the last operation in the page (the cursor to ask after next).
    public var cursor: Int64
    /// Whether more operations follow.
    public var more: Bool
    public var epoch: String
    /// False when compaction dropped superseded operations after the requested cursor: the
    /// state the page builds is exact, but not every historical write is in it.
    public var historyComplete: Bool
}

/// Errors of the store, each with a stable code.
public enum StoreError: Error, Equatable, Sendable {
    case accountExists
    case listExists
    case noSuchList
    case noSuchInvite
    case noSuchMember
    case lastOwner
    /// The disk (or the store's quota) is full: the write was rolled back, nothing was stored.
    case storageFull
}

/// What a store reports about pushes committed by other instances (``Store/watchCommits(_:)``).
public enum CommitEvent: Sendable, Equatable {
    /// A push committed operations to `list`, up to this sequence number.
    case committed(ListID, Int64)
    /// Reports were lost for a while (the store's connection dropped): any list may have moved.
    case resumed
}

/// Where the server keeps its state: ``SQLiteStore`` (the embedded default) or ``PostgresStore``
/// (several instances on one database). Both pass the same tests (Tests/BasketServerTests/StoreTests).
public protocol Store: Sendable {
    /// Calls `handler` for pushes committed by other server instances on the same store, so their
    /// long-polls wake here too. A store that one process owns never calls it.
    func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void)
    /// Stops reporting commits and closes connections (the server is stopping).
    func close()
    /// The backend's own figures for /metrics (connections, whether it listens, …).
    func gauges() -> [StoreGauge]

    func createAccount(name: String, passwordHash: String) throws -> Account
    func account(named name: String) throws -> Account?
    /// Replaces an account's password hash (a stronger hash after sign-in, or a new password).
    func setPasswordHash(_ hash: String, of account: Int64) throws
    func saveToken(hash: String, account: Int64, createdAt: Int64) throws
    func account(forTokenHash hash: String) throws -> Account?
    func revokeToken(hash: String) throws

    /// Creates a list owned by `owner` with a new epoch.
    func createList(_ list: ListID, owner: Int64) throws -> Membership
    func memberships(of account: Int64) throws -> [Membership]
    func role(of account: Int64, in list: ListID) throws -> Role?
    func members(of list: ListID) throws -> [Member]
    /// Removes a member; the last owner cannot leave while others remain.
    func removeMember(_ account: Int64, from list: ListID) throws
    func saveInvite(code: String, list: ListID, role: Role, createdBy: Int64, expiresAt: Int64) throws
    /// Adds the account to the invite's list with the invite's role (never lowering a role it has).
    func redeemInvite(code: String, account: Int64, now: Int64) throws -> Membership

    /// Stores new operations of one list, each with the next sequence number; known ones are skipped.
    func append(_ operations: [Operation], to list: ListID, receivedAt: Int64) throws -> AppendResult
    /// Operations after `cursor`: at most `limit`, and no more once the encoded page holds
    /// `maxBytes` (it always holds at least one operation when one follows the cursor).
    func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int) throws -> Page
    /// The last sequence number and epoch of a list.
    func head(of list: ListID) throws -> (cursor: Int64, epoch: String)
    /// Drops operations superseded in their register and received before `before`.
    func compact(receivedBefore before: Int64) throws -> Int
    func statistics() throws -> StoreStatistics
    /// Gives every list a new epoch, so clients push again what the store forgot (after a restore).
    func renewEpochs() throws -> Int
}

extension Store {
    /// A page cut at ``Page/defaultMaxBytes``.
    public func page(of list: ListID, after cursor: Int64, limit: Int) throws -> Page {
        try page(of: list, after: cursor, limit: limit, maxBytes: Page.defaultMaxBytes)
    }

    public func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void) {}
    public func close() {}
    public func gauges() -> [StoreGauge] { [] }
}

/// A gauge a store adds to /metrics.
public struct StoreGauge: Sendable {
    public var name: String
    public var help: String
    public var value: Double
}

public struct StoreStatistics: Sendable {
    public var operations: Int64
    public var lists: Int64
    public var accounts: Int64
    public var databaseBytes: Int64
}
