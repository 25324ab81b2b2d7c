public import BasketCore

/// A list as the server knows it, for the signed-in account: its id, the account's role, the
/// epoch and the last sequence number.
public typealias RemoteList = Wire.Membership

/// A page of a list's log.
public struct PulledPage: Sendable {
    /// The page's operations, in log order.
    public var operations: [Op] { didSet { isValidated = false } }
    /// Whether every operation was validated as the page was read (``HTTPSyncTransport``'s
    /// decoding does it): the replica then does not validate them a second time. A page made
    /// any other way, or whose operations were changed after, is validated when merged.
    var isValidated = false
    /// The cursor to ask after next.
    public var cursor: Int64
    /// The list's epoch on the server.
    public var epoch: String
    /// Whether more operations follow at once.
    public var more: Bool
    /// False when compaction dropped superseded operations after the cursor asked for.
    public var historyComplete: Bool
    /// The server's clock when it answered (Unix milliseconds).
    public var serverTime: UInt64
    /// This account's role, when it changed while the long-poll waited (`Wire.Page.role`).
    public var role: Role?
    /// Who is shopping for the list, when the long-poll ended because that changed (`Wire.Page.shopping`).
    public var shopping: [Wire.ShoppingStatus]?
    /// When who is shopping, or the list's inbox, last changed (`Wire.Page.together`).
    public var together: Int64?
    /// Texts waiting in the list's inbox, when the server said so (`Wire.Page.inbox`).
    public var inbox: Int?
    /// Operations of an encrypted list that were left out because they did not open with this
    /// device's keys, or opened to what breaks the rules (docs/encryption.md).
    public var unopened = 0
    /// Whether the page holds values sealed under a newer key epoch than this device holds
    /// (another member rotated the list's key): it is not merged and the cursor stays, until the
    /// device has the key (``ListKeyRenewal``).
    public var keysBehind = false

    /// A page as pulled.
    public init(
        operations: [Op], cursor: Int64, epoch: String, more: Bool, historyComplete: Bool, serverTime: UInt64,
        role: Role? = nil
    ) {
        self.serverTime = serverTime
        self.role = role
        self.operations = operations
        self.cursor = cursor
        self.epoch = epoch
        self.more = more
        self.historyComplete = historyComplete
    }
}

/// What the sync engine needs of a server. ``HTTPSyncTransport`` speaks the HTTP API; tests may
/// put their own behind it.
public protocol SyncTransport: Sendable {
    /// Lists the account is a member of.
    func lists() async throws -> [RemoteList]
    /// Registers a list made on this device (idempotent for a member).
    func createList(_ id: ListID) async throws -> RemoteList
    /// Sends `count` operations of one list, already in the text encoding (as the outbox keeps
    /// them); throws ``SyncError/clockSkew(serverTime:offsetMilliseconds:)`` when refused for time.
    func push(_ operations: OperationText, count: Int, to list: ListID) async throws -> PushOutcome
    /// Operations after `cursor`; with `wait` > 0 the server holds the request until something arrives.
    func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int) async throws -> PulledPage
    /// The same, saying when the caller last heard who is shopping or of the inbox (`together`):
    /// the server answers at once when either changed since.
    func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int, together: Int64) async throws -> PulledPage
    /// The newest snapshot of an encrypted list, opened (docs/encryption.md, "Snapshots"); nil
    /// when the server has none, the list is plain here, or it does not open with this device's keys.
    func snapshot(of list: ListID) async throws -> OpenedSnapshot?
    /// Seals the list's state (`operations`) at `cursor` of the server's log on this device and
    /// leaves it on the server (an owner's device of an encrypted list).
    func putSnapshot(_ operations: [Op], at cursor: Int64, of list: ListID) async throws
}

/// An encrypted list's snapshot, opened: its state at a position of the server's log.
public struct OpenedSnapshot: Sendable {
    /// The list's operations at `cursor` (a register's newest write each), validated.
    public var operations: [Op]
    /// The position in the server's log the state is at: the device pulls after it.
    public var cursor: Int64
    /// The server's epoch of the list's log.
    public var epoch: String

    /// A snapshot opened.
    public init(operations: [Op], cursor: Int64, epoch: String) {
        self.operations = operations
        self.cursor = cursor
        self.epoch = epoch
    }
}

extension SyncTransport {
    /// A transport without snapshots has none.
    public func snapshot(of list: ListID) async throws -> OpenedSnapshot? { nil }

    /// A transport without snapshots keeps none.
    public func putSnapshot(_ operations: [Op], at cursor: Int64, of list: ListID) async throws {}

    /// A transport without shopping or an inbox pulls as it always does.
    public func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int, together: Int64) async throws
        -> PulledPage
    {
        try await pull(list, after: cursor, limit: limit, wait: wait)
    }

    /// Sends operations of one list, encoding them first.
    public func push(_ operations: [Op], to list: ListID) async throws -> PushOutcome {
        try await push(OperationText(operations), count: operations.count, to: list)
    }
}
