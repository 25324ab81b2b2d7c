public import BasketCore

/// An account on the server.
public struct Account: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var passwordHash: String
}

/// A list as one member sees it.
public struct Membership: Hashable, Sendable {
    public var list: ListID
    public var role: Role
    public var epoch: String
    public var cursor: Int64
}

/// A signed-in device as its account sees it: never the token, nor its hash.
public struct TokenInfo: Hashable, Sendable {
    /// A public id (16 hex digits) for listing and revoking.
    public var id: String
    public var device: String
    /// Unix milliseconds.
    public var created: Int64
    /// Unix milliseconds; updated at most once an hour.
    public var lastUsed: Int64

    public init(id: String, device: String, created: Int64, lastUsed: Int64) {
        self.id = id
        self.device = device
        self.created = created
        self.lastUsed = lastUsed
    }
}

/// An invite as a list's members see it: never its code, nor its hash.
public struct InviteInfo: Hashable, Sendable {
    public var id: String
    public var role: Role
    /// The account that made it.
    public var createdBy: String
    public var created: Int64
    public var expires: Int64
    public var usesLeft: Int
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
    /// The list has as many members as the server allows.
    case tooManyMembers
    /// A push would take the list past its item or byte quota.
    case tooManyItems
    case listTooLarge
    /// The disk (or the store's quota) is full: the write was rolled back, nothing was stored.
    case storageFull
    /// The store was written by a later build (its schema version is newer than this one knows).
    case newerSchema(found: Int, supported: Int)
    /// The database failed otherwise (its own words): the request changed nothing.
    case database(String)
}

/// What a store reports about pushes and account changes committed by other instances
/// (``Store/watchCommits(_:)``).
public enum CommitEvent: Sendable, Equatable {
    /// A push committed operations to `list`, up to this sequence number.
    case committed(ListID, Int64)
    /// The account's tokens or password changed (a token revoked, a new password).
    case accountChanged(Int64)
    /// Reports were lost for a while (the store's connection dropped): any list may have moved.
    case resumed
}

/// Where the server keeps its state: ``SQLiteStore`` (the embedded default) or ``PostgresStore``
/// (several instances on one database). Both pass the same tests (Tests/BasketServerTests/StoreTests).
public protocol Store: Sendable {
    /// Calls `handler` for pushes and token or password changes committed by other server instances
    /// on the same store, so their long-polls wake here too and their revocations reach this one's
    /// session cache. A store that one process owns never calls it.
    func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void)
    /// Stops reporting commits and closes connections (the server is stopping).
    func close()
    /// The backend's own figures for /metrics (connections, whether it listens, …).
    func gauges() -> [StoreGauge]
    /// The schema versions opening the store applied (empty when it was up to date).
    var appliedMigrations: Range<Int> { get }

    func createAccount(name: String, passwordHash: String) throws -> Account
    func account(named name: String) throws -> Account?
    /// Replaces an account's password hash (a stronger hash after sign-in, or a new password).
    func setPasswordHash(_ hash: String, of account: Int64) throws
    /// Creates an account; with `signupInvite` (a signup invite's hash) only while that invite
    /// has uses left before `now`, using one, in the same transaction.
    /// - Throws: ``StoreError/accountExists``, ``StoreError/noSuchInvite``.
    func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws -> Account
    /// A signup invite (for `--signup invite-only`), usable `uses` times until `expiresAt`.
    func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws
    func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws
    /// The account a token belongs to, and the token as its devices list shows it.
    func session(forTokenHash hash: String) throws -> (Account, TokenInfo)?
    /// Records that the token was used at `now`.
    func touchToken(hash: String, at now: Int64) throws
    /// The account's tokens, oldest first.
    func tokens(of account: Int64) throws -> [TokenInfo]
    func revokeToken(hash: String) throws
    /// Revokes the account's token with this public id; false when it has none.
    func revokeToken(id: String, of account: Int64) throws -> Bool
    /// Revokes every token of the account but the one hashed `keeping`; returns how many.
    func revokeTokens(of account: Int64, keeping: String?) throws -> Int

    /// Creates a list owned by `owner` with a new epoch.
    func createList(_ list: ListID, owner: Int64) throws -> Membership
    func memberships(of account: Int64) throws -> [Membership]
    func role(of account: Int64, in list: ListID) throws -> Role?
    func members(of list: ListID) throws -> [Member]
    /// Removes a member, and the invites it made to the list (it may no longer invite); the last
    /// owner cannot leave while others remain.
    func removeMember(_ account: Int64, from list: ListID) throws
    /// Gives a member another role. A member made a viewer loses the invites it made (a viewer
    /// may not invite); the last owner cannot become an editor or a viewer.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember``, ``StoreError/lastOwner``.
    func setRole(_ role: Role, of account: Int64, in list: ListID) throws
    /// Deletes a list: its log, members and invites. Returns false when there was no such list.
    func deleteList(_ list: ListID) throws -> Bool
    /// Stores an invite by its code's hash, usable `uses` times until `expiresAt`.
    func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int) throws
    /// Adds the account to the invite's list with the invite's role (never lowering a role it has)
    /// and uses the invite once (it is gone after its last use).
    /// - Throws: ``StoreError/noSuchInvite``; ``StoreError/tooManyMembers`` when the account is not
    ///   a member yet and the list has `maxMembers`.
    func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> Membership
    /// The list's invites that still work at `now`.
    func invites(of list: ListID, now: Int64) throws -> [InviteInfo]
    /// Withdraws the list's invite with this id; returns it (nil when the list has none).
    func revokeInvite(id: String, of list: ListID) throws -> InviteInfo?

    /// Stores new operations of one list, each with the next sequence number; known ones are skipped.
    /// - Throws: ``StoreError/tooManyItems`` or ``StoreError/listTooLarge`` when the new operations
    ///   would take the list past `limits` (nothing of the push is stored then).
    func append(_ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits) throws
        -> AppendResult
    /// What each list holds: items (every item it has held, removed ones included: the server does
    /// not merge) and stored bytes (``ListLimits/bytes(of:)`` summed over its log).
    func usage(of list: ListID) throws -> (items: Int64, bytes: Int64)
    /// Operations after `cursor`: at most `limit`, and no more once the encoded page holds
    /// `maxBytes` (it always holds at least one operation when one follows the cursor). With
    /// `member`, only for a member of the list (checked in the same read: one round trip).
    /// - Throws: ``StoreError/noSuchList`` when there is no such list, or `member` is not one of it.
    func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, member: Int64?) throws -> Page
    /// The last sequence number and epoch of a list.
    func head(of list: ListID) throws -> (cursor: Int64, epoch: String)
    /// Drops operations superseded in their register and received before `before`.
    func compact(receivedBefore before: Int64) throws -> Int
    func statistics() throws -> StoreStatistics
    /// Gives every list a new epoch, so clients push again what the store forgot (after a restore).
    func renewEpochs() throws -> Int
}

/// How much one list may hold (``Store/append(_:to:receivedAt:limits:)``).
public struct ListLimits: Sendable, Hashable {
    public var maxItems: Int64
    public var maxBytes: Int64

    public init(maxItems: Int64, maxBytes: Int64) {
        self.maxItems = maxItems
        self.maxBytes = maxBytes
    }

    public static let none = ListLimits(maxItems: .max, maxBytes: .max)

    /// What an operation counts against a list's bytes: its text and a fixed 64 for the rest of
    /// its row and its index entry.
    public static func bytes(of value: Value) -> Int64 {
        if case .text(let text) = value { return Int64(text.utf8.count) + 64 }
        return 64
    }
}

extension Store {
    public func append(_ operations: [Op], to list: ListID, receivedAt: Int64) throws -> AppendResult {
        try append(operations, to: list, receivedAt: receivedAt, limits: .none)
    }

    public func createAccount(name: String, passwordHash: String) throws -> Account {
        try createAccount(name: name, passwordHash: passwordHash, signupInvite: nil, now: 0)
    }

    public func account(forTokenHash hash: String) throws -> Account? { try session(forTokenHash: hash)?.0 }

    /// A page cut at ``Page/defaultMaxBytes``.
    public func page(of list: ListID, after cursor: Int64, limit: Int) throws -> Page {
        try page(of: list, after: cursor, limit: limit, maxBytes: Page.defaultMaxBytes, member: nil)
    }

    /// A page for anyone (the caller checked who asks).
    public func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int) throws -> Page {
        try page(of: list, after: cursor, limit: limit, maxBytes: maxBytes, member: nil)
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
