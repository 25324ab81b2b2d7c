/// The JSON of the sync protocol, one Codable type per request body and answer (docs/api.md,
/// docs/openapi.yaml, whose schemas a test checks against these types). The server encodes
/// answers and decodes requests with them, the client the other way round, so a renamed field
/// is a compile error on both sides instead of a silent zero.
///
/// Field names are the JSON keys. Times are Unix milliseconds; cursors are a list's sequence
/// numbers. The types carry what travels; limits (bytes, ranges) are checked by whoever reads.
public enum Wire {
    // MARK: Requests

    /// Why a request body's field is refused, with the API's error code.
    public struct Refusal: Error, Hashable, Sendable {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }

        /// Refuses `value` (when present) over `maxBytes` bytes of UTF-8, or holding control characters.
        static func text(_ value: String?, _ key: some CodingKey, maxBytes: Int) throws(Refusal) {
            guard let value else { return }
            if value.utf8.count > maxBytes {
                throw Refusal(code: "too_long", message: "'\(key.stringValue)' is longer than \(maxBytes) bytes")
            }
            if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw Refusal(
                    code: "control_character", message: "'\(key.stringValue)' cannot contain control characters")
            }
        }
    }

    /// `POST /v1/accounts`: a new account; `invite` is a signup invite, for a server that takes
    /// new accounts only with one.
    public struct Signup: WireRequest, Hashable {
        public var name: String
        public var password: String
        public var invite: String?

        public init(name: String, password: String, invite: String? = nil) {
            self.name = name
            self.password = password
            self.invite = invite
        }

        public enum CodingKeys: String, CodingKey, CaseIterable { case name, password, invite }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(name, CodingKeys.name, maxBytes: 64)
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
            try Refusal.text(invite, CodingKeys.invite, maxBytes: 64)
        }
    }

    /// `POST /v1/tokens`: sign in; `device` names the new token in the devices list.
    public struct Credentials: WireRequest, Hashable {
        public var name: String
        public var password: String
        public var device: String?

        public init(name: String, password: String, device: String? = nil) {
            self.name = name
            self.password = password
            self.device = device
        }

        public enum CodingKeys: String, CodingKey, CaseIterable { case name, password, device }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(name, CodingKeys.name, maxBytes: 64)
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
            try Refusal.text(device, CodingKeys.device, maxBytes: 64)
        }
    }

    /// `POST /v1/account/password`: the current password and the new one.
    public struct PasswordChange: WireRequest, Hashable {
        public var password: String
        public var newPassword: String

        public init(password: String, newPassword: String) {
            self.password = password
            self.newPassword = newPassword
        }

        public enum CodingKeys: String, CodingKey, CaseIterable { case password, newPassword }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
            try Refusal.text(newPassword, CodingKeys.newPassword, maxBytes: 1024)
        }
    }

    /// `POST /v1/lists`: registers a list made on a client, by the id the client chose
    /// (32 hex digits; the server checks it).
    public struct NewList: WireRequest, Hashable {
        public var id: String

        public init(id: ListID) { self.id = id.description }

        public enum CodingKeys: String, CodingKey, CaseIterable { case id }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(id, CodingKeys.id, maxBytes: 32)
        }
    }

    /// `POST /v1/lists/{id}/invites`: every field optional (editor, one use, the server's default
    /// lifetime). `role` stays text so the server can name a wrong one.
    public struct InviteRequest: WireRequest, Hashable {
        public var role: String?
        public var uses: Int64?
        /// Seconds.
        public var expiresIn: Int64?

        public init(role: Role? = nil, uses: Int? = nil, expiresIn: Int? = nil) {
            self.role = role?.rawValue
            self.uses = uses.map(Int64.init)
            self.expiresIn = expiresIn.map(Int64.init)
        }

        public enum CodingKeys: String, CodingKey, CaseIterable { case role, uses, expiresIn }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(role, CodingKeys.role, maxBytes: 16)
        }
    }

    /// `POST /v1/invites`: joins the list of an invite. The code travels in a body, never a URL.
    public struct InviteCode: WireRequest, Hashable {
        public var code: String

        public init(code: String) { self.code = code }

        public enum CodingKeys: String, CodingKey, CaseIterable { case code }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(code, CodingKeys.code, maxBytes: 64)
        }
    }

    /// `POST /v1/lists/{id}/ops`: operations in the text encoding of docs/encoding.md.
    public struct Push: WireRequest, Hashable {
        public var ops: OperationText

        public init(ops: OperationText) { self.ops = ops }

        public enum CodingKeys: String, CodingKey, CaseIterable { case ops }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            // Operations are checked by their decoder (tabs and newlines are part of the encoding).
        }
    }

    // MARK: Answers

    /// `GET /healthz`.
    public struct Health: Codable, Hashable, Sendable {
        public var status: String

        public init(status: String) { self.status = status }
    }

    /// `GET /v1/time`.
    public struct ServerTime: Codable, Hashable, Sendable {
        public var serverTime: UInt64

        public init(serverTime: UInt64) { self.serverTime = serverTime }
    }

    /// `POST /v1/accounts` (without `serverTime`) and `GET /v1/account` (with it).
    public struct Account: Codable, Hashable, Sendable {
        public var id: Int64
        public var name: String
        public var serverTime: UInt64?

        public init(id: Int64, name: String, serverTime: UInt64? = nil) {
            self.id = id
            self.name = name
            self.serverTime = serverTime
        }
    }

    /// `POST /v1/tokens`: the bearer token (shown once) and its public id.
    public struct NewToken: Codable, Hashable, Sendable {
        public var token: String
        public var account: String
        public var id: String

        public init(token: String, account: String, id: String) {
            self.token = token
            self.account = account
            self.id = id
        }
    }

    /// A signed-in device in `GET /v1/tokens`: never the token itself.
    public struct Token: Codable, Hashable, Sendable {
        public var id: String
        public var device: String
        public var created: Int64
        /// Updated at most once an hour.
        public var lastUsed: Int64
        /// Whether it is the token of the request.
        public var current: Bool

        public init(id: String, device: String, created: Int64, lastUsed: Int64, current: Bool) {
            self.id = id
            self.device = device
            self.created = created
            self.lastUsed = lastUsed
            self.current = current
        }
    }

    /// `GET /v1/tokens`.
    public struct Tokens: Codable, Hashable, Sendable {
        public var tokens: [Token]

        public init(tokens: [Token]) { self.tokens = tokens }
    }

    /// `DELETE /v1/tokens` and `POST /v1/account/password`: how many tokens were revoked.
    public struct Revoked: Codable, Hashable, Sendable {
        public var revoked: Int

        public init(revoked: Int) { self.revoked = revoked }
    }

    /// A list as one member sees it: `POST /v1/lists`, `POST /v1/invites`, in `GET /v1/lists`.
    public struct Membership: Codable, Hashable, Sendable {
        public var id: ListID
        public var role: Role
        /// Changes when the server is restored from a backup.
        public var epoch: String
        /// The list's last sequence number.
        public var cursor: Int64

        public init(id: ListID, role: Role, epoch: String, cursor: Int64) {
            self.id = id
            self.role = role
            self.epoch = epoch
            self.cursor = cursor
        }
    }

    /// `GET /v1/lists`.
    public struct Lists: Codable, Hashable, Sendable {
        public var lists: [Membership]

        public init(lists: [Membership]) { self.lists = lists }
    }

    /// A member in `GET /v1/lists/{id}/members`.
    public struct Member: Codable, Hashable, Sendable {
        public var account: String
        public var role: Role

        public init(account: String, role: Role) {
            self.account = account
            self.role = role
        }
    }

    /// `GET /v1/lists/{id}/members`.
    public struct Members: Codable, Hashable, Sendable {
        public var members: [Member]

        public init(members: [Member]) { self.members = members }
    }

    /// An invite in `GET /v1/lists/{id}/invites`: never its code.
    public struct Invite: Codable, Hashable, Sendable {
        public var id: String
        public var role: Role
        /// The account that made it.
        public var createdBy: String
        public var created: Int64
        public var expiresAt: Int64
        public var usesLeft: Int

        public init(id: String, role: Role, createdBy: String, created: Int64, expiresAt: Int64, usesLeft: Int) {
            self.id = id
            self.role = role
            self.createdBy = createdBy
            self.created = created
            self.expiresAt = expiresAt
            self.usesLeft = usesLeft
        }
    }

    /// `GET /v1/lists/{id}/invites`.
    public struct Invites: Codable, Hashable, Sendable {
        public var invites: [Invite]

        public init(invites: [Invite]) { self.invites = invites }
    }

    /// `POST /v1/lists/{id}/invites`: the code, shown this once.
    public struct NewInvite: Codable, Hashable, Sendable {
        public var code: String
        public var id: String
        public var role: Role
        public var list: ListID
        public var expiresAt: Int64
        public var usesLeft: Int

        public init(code: String, id: String, role: Role, list: ListID, expiresAt: Int64, usesLeft: Int) {
            self.code = code
            self.id = id
            self.role = role
            self.list = list
            self.expiresAt = expiresAt
            self.usesLeft = usesLeft
        }
    }

    /// `POST /v1/lists/{id}/ops`: what became of each pushed operation, and the list's cursor.
    public struct PushResult: Codable, Hashable, Sendable {
        /// Operations stored now, each with a new sequence number.
        public var accepted: Int
        /// Operations the server had already (a push is idempotent).
        public var duplicates: Int
        public var cursor: Int64
        public var epoch: String
        public var serverTime: UInt64

        public init(accepted: Int, duplicates: Int, cursor: Int64, epoch: String, serverTime: UInt64) {
            self.accepted = accepted
            self.duplicates = duplicates
            self.cursor = cursor
            self.epoch = epoch
            self.serverTime = serverTime
        }
    }

    /// `GET /v1/lists/{id}/ops`: a page of the list's log after a cursor. The server writes it
    /// with ``jsonBytes()``, the same JSON as `JSONEncoder` without copying the operations.
    public struct Page: Codable, Hashable, Sendable {
        /// Operations in ``ops``.
        public var count: Int
        /// Ask with `after=cursor` next.
        public var cursor: Int64
        public var epoch: String
        /// False when compaction dropped superseded operations after the cursor asked for.
        public var historyComplete: Bool
        /// Whether more operations follow (ask again at once).
        public var more: Bool
        public var serverTime: UInt64
        public var ops: OperationText

        public init(
            count: Int, cursor: Int64, epoch: String, historyComplete: Bool, more: Bool, serverTime: UInt64,
            ops: OperationText
        ) {
            self.count = count
            self.cursor = cursor
            self.epoch = epoch
            self.historyComplete = historyComplete
            self.more = more
            self.serverTime = serverTime
            self.ops = ops
        }

        /// The page as JSON, written by hand: a page is up to a megabyte of operations, which this
        /// copies once into the answer (escaping as JSON requires) instead of through a `String`.
        public func jsonBytes() -> [UInt8] {
            var body = Array(
                ("{\"count\":\(count),\"cursor\":\(cursor),\"epoch\":").utf8)
            JSONText.appendQuoted(bytes: Array(epoch.utf8), to: &body)
            body.append(
                contentsOf:
                    ",\"historyComplete\":\(historyComplete),\"more\":\(more),\"serverTime\":\(serverTime),\"ops\":"
                    .utf8)
            JSONText.appendQuoted(bytes: ops.bytes, to: &body)
            body.append(UInt8(ascii: "}"))
            return body
        }
    }

    /// Every error answer: a stable `error` code and a message for people. A `clock_skew` refusal
    /// adds the server's time and how far ahead the refused timestamp was.
    public struct ErrorBody: Codable, Hashable, Sendable {
        public var error: String
        public var message: String
        public var serverTime: UInt64?
        public var offsetMilliseconds: UInt64?

        public init(error: String, message: String, serverTime: UInt64? = nil, offsetMilliseconds: UInt64? = nil) {
            self.error = error
            self.message = message
            self.serverTime = serverTime
            self.offsetMilliseconds = offsetMilliseconds
        }
    }
}

/// A request body of the protocol: the JSON keys it may have (a reader refuses any other) and
/// the limits of its text fields, which sender and receiver both check.
public protocol WireRequest: Codable, Sendable {
    /// The body's JSON keys.
    static var fields: [String] { get }
    /// Refuses a text field over its byte limit or with control characters.
    func check() throws(Wire.Refusal)
}

/// Operations in the text encoding of docs/encoding.md, as UTF-8 bytes; in JSON, a string.
public struct OperationText: Codable, Hashable, Sendable {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// The encoding of `operations` (``OperationCodec/encode(_:)``).
    public init(_ operations: [Op]) { bytes = OperationCodec.encode(operations) }

    /// The operations (``OperationCodec/decode(_:)``).
    public func operations() throws -> [Op] { try OperationCodec.decode(bytes) }

    public init(from decoder: any Decoder) throws {
        bytes = Array(try decoder.singleValueContainer().decode(String.self).utf8)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(decoding: bytes, as: UTF8.self))
    }
}

extension ListID: Codable {
    /// A list id in JSON: 32 hex digits.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let id = ListID(hex: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a list id (32 hex digits)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
