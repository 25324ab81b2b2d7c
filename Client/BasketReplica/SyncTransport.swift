public import BasketCore

/// A list as the server knows it, for the signed-in account: its id, the account's role, the
/// epoch and the last sequence number.
public typealias RemoteList = Wire.Membership

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

/// The server's answer to a push: operations accepted and already known, the list's cursor
/// and epoch, the server's clock.
public typealias PushOutcome = Wire.PushResult

/// A page of a list's log.
public struct PulledPage: Sendable {
    /// The page's operations, in log order.
    public var operations: [Op]
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

/// Why a sync call failed.
public enum SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No server could be reached (no network, server down): the outbox is kept.
    case unreachable(String)
    /// The server refused a timestamp too far ahead of its clock.
    case clockSkew(serverTime: UInt64, offsetMilliseconds: UInt64)
    /// The server answered with an error.
    case server(status: Int, code: String, message: String)
    /// The answer could not be read, or broke the protocol (a hostile or broken server).
    case badResponse(String)
    /// The server answered with a redirect, which is not followed: the token would go along.
    case redirected(status: Int, location: String)

    public var description: String {
        switch self {
        case .unreachable(let why): return "cannot reach the server: \(why)"
        case .clockSkew(_, let offset): return "this device's clock is \(offset / 1000) s ahead of the server's"
        case .server(let status, let code, let message): return "the server refused (\(status) \(code)): \(message)"
        case .badResponse(let why): return "the server's answer could not be read: \(why)"
        case .redirected(let status, let location):
            return
                "the server answered \(status), a redirect to '\(location)', which Basket does not follow (the token "
                + "would go along); if that is the server's new address, run: basket remote set \(location)"
        }
    }

    /// The server's error code, when it answered with one.
    public var code: String? {
        if case .server(_, let code, _) = self { return code }
        if case .clockSkew = self { return ClockSkewError.code }
        return nil
    }

    /// An answer refused past `limit` bytes, counted after gzip was undone.
    public static func answerTooLarge(limit: Int) -> SyncError {
        .badResponse("an answer of more than \(limit) bytes (at most \(limit))")
    }

    /// A request stopped at its deadline of `seconds`: hung if the server had not `began` to
    /// answer, too slow if it had.
    public static func noWholeAnswer(within seconds: Double, began: Bool) -> SyncError {
        .unreachable(
            began
                ? "the server sent no whole answer within \(Int(seconds)) s"
                : "the server did not answer within \(Int(seconds)) s")
    }
}

/// What the sync engine needs of a server. ``HTTPSyncTransport`` speaks the HTTP API; tests may
/// put their own behind it.
public protocol SyncTransport: Sendable {
    /// Lists the account is a member of.
    func lists() async throws -> [RemoteList]
    /// Registers a list made on this device (idempotent for a member).
    func createList(_ id: ListID) async throws -> RemoteList
    /// Sends operations of one list; throws ``SyncError/clockSkew(serverTime:offsetMilliseconds:)`` when refused for time.
    func push(_ operations: [Op], to list: ListID) async throws -> PushOutcome
    /// Operations after `cursor`; with `wait` > 0 the server holds the request until something arrives.
    func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int) async throws -> PulledPage
}
