public import BasketCore

/// Where the server keeps its state: ``SQLiteStore`` (the embedded default) or ``PostgresStore``
/// (several instances on one database). Both pass the same tests (Tests/BasketServerTests/StoreTests).
///
/// Its requirements come in five concerns, each a protocol of its own in a file of its own, the
/// way ``BasketService`` splits its routes: ``AccountStore`` (accounts, passwords, tokens, signup
/// invites), ``ListStore`` (lists and their members), ``InviteStore`` (invites to a list),
/// ``LogStore`` (each list's operation log) and ``StoreMaintenance`` (watching other instances,
/// compaction, statistics, epochs). Each backend implements them in files named alike
/// (`SQLiteStore+Accounts.swift`, …).
public protocol Store: AccountStore, ListStore, InviteStore, LogStore, PushStore, ShoppingStore, InboxStore, KeyStore,
    SnapshotStore, StoreMaintenance
{}

/// Errors of the store, each with a stable code.
public enum StoreError: Error, Equatable, Sendable {
    /// An account by this name exists.
    case accountExists
    /// A list with this id exists.
    case listExists
    /// No such list (or the account is not one of its members).
    case noSuchList
    /// No such invite, or it has expired or been used up.
    case noSuchInvite
    /// The account is not a member of the list (or may not do this there).
    case noSuchMember
    /// The list's last owner cannot leave or step down while others remain.
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
    /// A push would bind more replica ids to the list than its pusher, or the list, may have.
    case tooManyReplicas
    /// A push would take its pusher past its share of the list's quotas (a member who is not an
    /// owner may add at most half of the list's items and bytes).
    case memberShareFull
    /// A push would take the list past its item or byte quota.
    case tooManyItems
    /// A push would take the list past its byte quota.
    case listTooLarge
    /// The account has another key pair: a key pair is made once (``KeyStore``).
    case keysExist
    /// Keys sealed to members of a list that is not encrypted end to end.
    case notEncrypted
    /// An envelope for a member whose account has no key pair.
    case noPublicKey
    /// An encrypted list awaits a new key (a member left or was removed): it takes no push until
    /// a remaining member's device rotated it (``KeyStore/deliverEnvelopes(_:to:by:rotatingTo:)``).
    case rotationDue
    /// A push sealed under another key epoch than the list takes, or a rotation to an epoch that
    /// is not newer than the list's (`keyEpoch`), or that leaves a member with a key pair out.
    case staleKey(keyEpoch: Int64)
    /// A snapshot names a position its list's log has not reached (the last is `lastSeq`).
    case beyondLog(lastSeq: Int64)
    /// A snapshot larger than its list's log allows (`limit` bytes: the log's and 64 KiB).
    case snapshotTooLarge(limit: Int64)
    /// The list is encrypted end to end: it cannot be converted again, and takes no plain push.
    case listEncrypted
    /// A conversion at a cursor the list's log has moved past (`lastSeq`).
    case logMoved(lastSeq: Int64)
    /// Members with no key pair, whom a conversion's envelopes cannot reach (their names).
    case membersWithoutKeys([String])
    /// The disk (or the store's quota) is full: the write was rolled back, nothing was stored.
    case storageFull
    /// The store was written by a later build (its schema version is newer than this one knows).
    case newerSchema(found: Int, supported: Int)
    /// The database cannot be reached now (it restarts, fails over, or the connection was cut
    /// twice): the request changed nothing, or will be found a duplicate when tried again. The
    /// server answers 503 with `Retry-After`, and clients try again.
    case unavailable
    /// The database failed otherwise (its own words): the request changed nothing.
    case database(String)
}

/// What a store reports about pushes and account changes committed by other instances
/// (``StoreMaintenance/watchCommits(_:)``).
public enum CommitEvent: Sendable, Equatable {
    /// A push committed operations to `list`, up to this sequence number.
    case committed(ListID, Int64)
    /// The account's tokens or password changed (a token revoked, a new password).
    case accountChanged(Int64)
    /// The account's membership of the list changed: removed, or given another role.
    case membershipChanged(ListID, account: Int64)
    /// The list was deleted.
    case listDeleted(ListID)
    /// Who is shopping for the list changed, at this time of the writer's clock.
    case shoppingChanged(ListID, at: Int64)
    /// Text was put in the list's inbox, at this time of the writer's clock.
    case inboxChanged(ListID, at: Int64)
    /// Reports were lost for a while (the store's connection dropped): any list may have moved.
    case resumed
}

/// A gauge a store adds to /metrics.
public struct StoreGauge: Sendable {
    /// The metric's name (`basket_store_connections`).
    public var name: String
    /// Its `# HELP` text.
    public var help: String
    /// Its value now.
    public var value: Double
}

/// What a store holds, for /metrics and `basket-server` messages.
public struct StoreStatistics: Sendable {
    /// Operations in every log.
    public var operations: Int64
    /// Lists.
    public var lists: Int64
    /// Accounts.
    public var accounts: Int64
    /// The size of the database on disk.
    public var databaseBytes: Int64
}
