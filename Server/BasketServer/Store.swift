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
    /// The list, or the member making an invite, has as many working invites as the server allows.
    case tooManyInvites
    /// This many operations of a push have the identity (item, field, timestamp, replica) of
    /// stored ones with other values: nothing of the push was stored.
    case identityConflict(Int)
    /// A new operation of a push has a replica id another account pushed to the list first.
    case replicaTaken
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
    /// Whether the signup invite hashed `hash` has a use left at `now` (looked up before a
    /// signup's password is hashed; ``createAccount(name:passwordHash:signupInvite:now:)`` uses it).
    func signupInviteWorks(hash: String, now: Int64) throws -> Bool
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
    /// Stores an invite by its code's hash, usable `uses` times until `expiresAt`, in one
    /// statement that checks its maker is still a member allowed to make it (an owner; an editor
    /// for an editor's or a viewer's invite) and that the list and the maker have fewer working
    /// invites than `limits` allow: an invite made while its maker is removed or demoted is
    /// either refused or withdrawn with the maker's others.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember`` (the maker may not make
    ///   it), ``StoreError/tooManyInvites``.
    func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?) throws
    /// What the working invite hashed `hash` is for, as `account` may see it before joining
    /// (nil when there is no such invite at `now`).
    func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview?
    /// Adds the account to the invite's list with the invite's role and uses the invite once (it
    /// is gone after its last use). An account that is a member already keeps its role and the
    /// invite is not used: roles change only through ``setRole(_:of:in:)``.
    /// - Throws: ``StoreError/noSuchInvite``; ``StoreError/tooManyMembers`` when the account is not
    ///   a member yet and the list has `maxMembers`.
    func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> Membership
    /// The list's invites that still work at `now`.
    func invites(of list: ListID, now: Int64) throws -> [InviteInfo]
    /// Withdraws the list's invite with this id; returns it (nil when the list has none).
    func revokeInvite(id: String, of list: ListID) throws -> InviteInfo?

    /// Stores new operations of one list, each with the next sequence number; known ones are skipped.
    /// With a `pusher`, each replica id of the new operations is bound to the first account that
    /// pushes it to the list, and the push is refused when one is bound to another account, except
    /// for operations stamped before the list's epoch began (a member relaying what a restored
    /// server lost; those neither bind nor are checked).
    /// - Throws: ``StoreError/tooManyItems`` or ``StoreError/listTooLarge`` when the new operations
    ///   would take the list past `limits`, ``StoreError/identityConflict(_:)``,
    ///   ``StoreError/replicaTaken`` (nothing of the push is stored then).
    func append(_ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits, pusher: Int64?) throws
        -> AppendResult
    /// How many lists count against the account's quota: those it is a member of, and those it
    /// made that still exist.
    func listCount(of account: Int64) throws -> Int
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

/// How many working invites may be out at once (``Store/saveInvite(hash:id:list:role:createdBy:createdAt:expiresAt:uses:limits:)``).
public struct InviteLimits: Sendable, Hashable {
    /// On one list, whoever made them.
    public var perList: Int
    /// Made by one member on one list.
    public var perMember: Int

    public init(perList: Int, perMember: Int) {
        self.perList = perList
        self.perMember = perMember
    }
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
        try append(operations, to: list, receivedAt: receivedAt, limits: .none, pusher: nil)
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

/// SQL both stores run the same way, written once with `{n}` for the n-th parameter
/// (``sql(_:placeholder:)`` makes SQLite's `?n` or PostgreSQL's `$n` of it).
enum SharedSQL {
    /// Replaces each `{n}` of `template` with `placeholder(n)`.
    static func sql(_ template: String, placeholder: (Int) -> String) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}"),
            let number = Int(rest[rest.index(after: open)..<close])
        {
            out += rest[..<open]
            out += placeholder(number)
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// Inserts an invite only while its maker ({5}) is a member of the list ({3}, its id) allowed
    /// to make it, and while the list and the maker have fewer working invites at {6} (now) than
    /// {9} and {10}; returns the invite's id when it was stored. Parameters: hash, id, list id,
    /// role, maker, created, expires, uses, most per list, most per member, title. PostgreSQL appends a
    /// lock of the list's and the member's rows (``PostgresStore``), so a removal or a change of
    /// role waits for it or it sees them.
    static let insertInvite = """
        INSERT INTO invites(hash, id, list, role, created_by, created, expires, uses_left, title)
        SELECT {1}, {2}, l.no, {4}, m.account, CAST({6} AS BIGINT), CAST({7} AS BIGINT), CAST({8} AS BIGINT),
            CAST({11} AS TEXT)
        FROM lists l JOIN members m ON m.list = l.no AND m.account = CAST({5} AS BIGINT)
        WHERE l.id = {3} AND (m.role = 'owner' OR (m.role = 'editor' AND {4} <> 'owner'))
            AND (SELECT count(*) FROM invites i
                WHERE i.list = l.no AND i.expires > CAST({6} AS BIGINT) AND i.uses_left > 0) < CAST({9} AS BIGINT)
            AND (SELECT count(*) FROM invites i
                WHERE i.list = l.no AND i.created_by = m.account AND i.expires > CAST({6} AS BIGINT)
                AND i.uses_left > 0) < CAST({10} AS BIGINT)
        """

    /// Withdraws the invites member {2} made to list {1} (its row number) for a role above {3}, the
    /// role it has now: all of a viewer's, an editor's owner invites.
    static let dropInvitesAboveRole = """
        DELETE FROM invites WHERE list = {1} AND created_by = {2}
            AND (CASE role WHEN 'owner' THEN 2 WHEN 'editor' THEN 1 ELSE 0 END)
                > (CASE {3} WHEN 'owner' THEN 2 WHEN 'editor' THEN 1 ELSE -1 END)
        """
}
