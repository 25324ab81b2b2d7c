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
        /// The API's error code (`too_long`, `control_character`).
        public var code: String
        /// What is wrong, for a person.
        public var message: String

        /// A refusal with its code and message.
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
            if value.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || ItemName.isBidiControl($0.value)
            }) {
                throw Refusal(
                    code: "control_character", message: "'\(key.stringValue)' cannot contain control characters")
            }
        }
    }

    /// `POST /v1/accounts`: a new account; `invite` is a signup invite, for a server that takes
    /// new accounts only with one.
    public struct Signup: WireRequest, Hashable {
        /// The account name: 3 to 64 letters, digits, `.`, `_` or `-` (stored lower-cased).
        public var name: String
        /// At least 8 characters, at most 1,024 bytes.
        public var password: String
        /// A signup invite (`basket-server signup-invite`), for a server run with `--signup invite-only`.
        public var invite: String?

        /// A signup; `invite` only where the server asks for one.
        public init(name: String, password: String, invite: String? = nil) {
            self.name = name
            self.password = password
            self.invite = invite
        }

        /// The JSON keys of the body.
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
        /// The account name.
        public var name: String
        /// The account's password.
        public var password: String
        /// How this sign-in appears in the devices list (at most 64 bytes).
        public var device: String?

        /// A sign-in, optionally naming the device.
        public init(name: String, password: String, device: String? = nil) {
            self.name = name
            self.password = password
            self.device = device
        }

        /// The JSON keys of the body.
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
        /// The current password, checked as at sign-in.
        public var password: String
        /// The new password: at least 8 characters.
        public var newPassword: String

        /// A password change from `password` to `newPassword`.
        public init(password: String, newPassword: String) {
            self.password = password
            self.newPassword = newPassword
        }

        /// The JSON keys of the body.
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
        /// The list's id as 32 hex digits.
        public var id: String

        /// Registers the list with id `id`.
        public init(id: ListID) { self.id = id.description }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case id }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(id, CodingKeys.id, maxBytes: 32)
        }
    }

    /// `POST /v1/lists/{id}/invites`: every field optional (editor, one use, the server's default
    /// lifetime). `role` stays text so the server can name a wrong one.
    public struct InviteRequest: WireRequest, Hashable {
        /// `owner`, `editor` or `viewer`; nil for editor. Never above the inviter's own role.
        public var role: String?
        /// How many people may join with the code (1 to the server's maximum, 100 by default); nil for 1.
        public var uses: Int64?
        /// Seconds.
        public var expiresIn: Int64?
        /// The list's title as the inviter's device has it, shown to whoever previews the code
        /// (``InvitePreview``); a title's rules (``ItemName``).
        public var title: String?

        /// An invite request; nil fields take the server's defaults.
        public init(role: Role? = nil, uses: Int? = nil, expiresIn: Int? = nil, title: String? = nil) {
            self.role = role?.rawValue
            self.uses = uses.map(Int64.init)
            self.expiresIn = expiresIn.map(Int64.init)
            self.title = title
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case role, uses, expiresIn, title }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(role, CodingKeys.role, maxBytes: 16)
            try Refusal.text(title, CodingKeys.title, maxBytes: Field.title.maxBytes)
        }
    }

    /// `PUT /v1/lists/{id}/members/{account}`: gives a member another role (an owner's call).
    public struct RoleChange: WireRequest, Hashable {
        /// `owner`, `editor` or `viewer`.
        public var role: String

        /// A change to `role`.
        public init(role: Role) { self.role = role.rawValue }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case role }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(role, CodingKeys.role, maxBytes: 16)
        }
    }

    /// `POST /v1/invites`: joins the list of an invite. The code travels in a body, never a URL.
    public struct InviteCode: WireRequest, Hashable {
        /// The code as its maker passed it on (case, dashes and spaces do not matter).
        public var code: String

        /// Joins with `code`.
        public init(code: String) { self.code = code }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case code }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(code, CodingKeys.code, maxBytes: 64)
        }
    }

    /// `POST /v1/lists/{id}/ops`: operations in the text encoding of docs/encoding.md.
    public struct Push: WireRequest, Hashable {
        /// Every operation of the list pushed to, in the text encoding.
        public var ops: OperationText

        /// A push of `ops`.
        public init(ops: OperationText) { self.ops = ops }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case ops }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            // Operations are checked by their decoder (tabs and newlines are part of the encoding).
        }
    }

    // MARK: Answers

    /// `GET /healthz`.
    public struct Health: Codable, Hashable, Sendable {
        /// `ok` while the server answers.
        public var status: String

        /// A health answer.
        public init(status: String) { self.status = status }
    }

    /// `GET /v1/time`.
    public struct ServerTime: Codable, Hashable, Sendable {
        /// The server's clock, Unix milliseconds.
        public var serverTime: UInt64

        /// The server's clock.
        public init(serverTime: UInt64) { self.serverTime = serverTime }
    }

    /// `POST /v1/accounts` (without `serverTime`) and `GET /v1/account` (with it).
    public struct Account: Codable, Hashable, Sendable {
        /// The account's number on the server.
        public var id: Int64
        /// The account's name.
        public var name: String
        /// The server's clock (Unix milliseconds), in `GET /v1/account` only.
        public var serverTime: UInt64?

        /// An account; `serverTime` for `GET /v1/account`.
        public init(id: Int64, name: String, serverTime: UInt64? = nil) {
            self.id = id
            self.name = name
            self.serverTime = serverTime
        }
    }

    /// `POST /v1/tokens`: the bearer token (shown once) and its public id.
    public struct NewToken: Codable, Hashable, Sendable {
        /// The bearer token: shown this once, stored by the server only as a hash.
        public var token: String
        /// The account signed in to.
        public var account: String
        /// The token's public id, as the devices list shows it (for revoking it).
        public var id: String

        /// A new token and its public id.
        public init(token: String, account: String, id: String) {
            self.token = token
            self.account = account
            self.id = id
        }
    }

    /// A signed-in device in `GET /v1/tokens`: never the token itself.
    public struct Token: Codable, Hashable, Sendable {
        /// The token's public id (16 hex digits).
        public var id: String
        /// The device name given at sign-in.
        public var device: String
        /// When it was made, Unix milliseconds.
        public var created: Int64
        /// Updated at most once an hour.
        public var lastUsed: Int64
        /// Whether it is the token of the request.
        public var current: Bool

        /// A device in the devices list.
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
        /// The account's tokens, oldest first.
        public var tokens: [Token]

        /// The devices list.
        public init(tokens: [Token]) { self.tokens = tokens }
    }

    /// `DELETE /v1/tokens` and `POST /v1/account/password`: how many tokens were revoked.
    public struct Revoked: Codable, Hashable, Sendable {
        /// How many tokens were revoked.
        public var revoked: Int

        /// How many tokens were revoked.
        public init(revoked: Int) { self.revoked = revoked }
    }

    /// A list as one member sees it: `POST /v1/lists`, `POST /v1/invites`, in `GET /v1/lists`.
    public struct Membership: Codable, Hashable, Sendable {
        /// The list.
        public var id: ListID
        /// The account's role on it.
        public var role: Role
        /// Changes when the server is restored from a backup.
        public var epoch: String
        /// The list's last sequence number.
        public var cursor: Int64

        /// A list as one member sees it.
        public init(id: ListID, role: Role, epoch: String, cursor: Int64) {
            self.id = id
            self.role = role
            self.epoch = epoch
            self.cursor = cursor
        }
    }

    /// `GET /v1/lists`.
    public struct Lists: Codable, Hashable, Sendable {
        /// Every list the account is a member of.
        public var lists: [Membership]

        /// The account's lists.
        public init(lists: [Membership]) { self.lists = lists }

        /// The answer as `JSONEncoder` writes it (keys sorted), written by hand: every device
        /// asks for it at each sync, and the generic encoder cost more than the request's lookup.
        public func jsonBytes() -> [UInt8] {
            var body = Array(#"{"lists":["#.utf8)
            body.reserveCapacity(12 + lists.count * 110)
            for (index, list) in lists.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body.append(contentsOf: #"{"cursor":\#(list.cursor),"epoch":"#.utf8)
                JSONText.appendQuoted(list.epoch, to: &body)
                body.append(contentsOf: #","id":"#.utf8)
                JSONText.appendQuoted(list.id.description, to: &body)
                body.append(contentsOf: #","role":"#.utf8)
                JSONText.appendQuoted(list.role.rawValue, to: &body)
                body.append(UInt8(ascii: "}"))
            }
            body.append(contentsOf: "]}".utf8)
            return body
        }
    }

    /// A member in `GET /v1/lists/{id}/members`.
    public struct Member: Codable, Hashable, Sendable {
        /// The member's account name.
        public var account: String
        /// The member's role.
        public var role: Role
        /// The replica ids (16 hex digits) the member's devices wrote to the list with, at most
        /// 100: who made each write of an item's history. In `GET /v1/lists/{id}/members` only.
        public var replicas: [String]?

        /// A member and its role.
        public init(account: String, role: Role, replicas: [String]? = nil) {
            self.account = account
            self.role = role
            self.replicas = replicas
        }
    }

    /// `GET /v1/lists/{id}/members`.
    public struct Members: Codable, Hashable, Sendable {
        /// The list's members.
        public var members: [Member]

        /// The list's members.
        public init(members: [Member]) { self.members = members }
    }

    /// An invite in `GET /v1/lists/{id}/invites`: never its code.
    public struct Invite: Codable, Hashable, Sendable {
        /// The invite's public id (for withdrawing it); never its code.
        public var id: String
        /// The role it gives.
        public var role: Role
        /// The account that made it.
        public var createdBy: String
        /// When it was made, Unix milliseconds.
        public var created: Int64
        /// When it stops working, Unix milliseconds.
        public var expiresAt: Int64
        /// How many more people may join with it.
        public var usesLeft: Int

        /// An invite as the list's members see it.
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
        /// The invites that still work (an owner sees all, an editor its own).
        public var invites: [Invite]

        /// The list's invites.
        public init(invites: [Invite]) { self.invites = invites }
    }

    /// `POST /v1/invites/preview`: what an invite code is for, before joining with it.
    public struct InvitePreview: Codable, Hashable, Sendable {
        /// The list it is for.
        public var list: ListID
        /// The list's title as the inviter's device had it, if it said.
        public var title: String?
        /// The role it gives.
        public var role: Role
        /// The account that made it.
        public var createdBy: String
        /// When it stops working, Unix milliseconds.
        public var expiresAt: Int64
        /// Whether the caller is a member of the list already (joining changes nothing then).
        public var member: Bool

        /// What an invite is for.
        public init(list: ListID, title: String?, role: Role, createdBy: String, expiresAt: Int64, member: Bool) {
            self.list = list
            self.title = title
            self.role = role
            self.createdBy = createdBy
            self.expiresAt = expiresAt
            self.member = member
        }
    }

    /// `POST /v1/lists/{id}/invites`: the code, shown this once.
    public struct NewInvite: Codable, Hashable, Sendable {
        /// The code to pass on (`XXXX-XXXX-XXXX-XXXX`): shown this once, the server keeps its hash.
        public var code: String
        /// The invite's public id (for withdrawing it).
        public var id: String
        /// The role it gives.
        public var role: Role
        /// The list it is for.
        public var list: ListID
        /// When it stops working, Unix milliseconds.
        public var expiresAt: Int64
        /// How many people may join with it.
        public var usesLeft: Int

        /// A new invite with its code.
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
        /// The list's last sequence number after the push.
        public var cursor: Int64
        /// The list's epoch (a changed one means the server was restored: push everything again).
        public var epoch: String
        /// The server's clock, Unix milliseconds.
        public var serverTime: UInt64

        /// The answer to a push.
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
        /// The list's epoch; another than the cursor's means the server was restored.
        public var epoch: String
        /// False when compaction dropped superseded operations after the cursor asked for.
        public var historyComplete: Bool
        /// Whether more operations follow (ask again at once).
        public var more: Bool
        /// The server's clock when it answered, Unix milliseconds.
        public var serverTime: UInt64
        /// The operations, in the text encoding of docs/encoding.md.
        public var ops: OperationText

        /// A page of a list's log.
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
        /// A stable code (`invalid_json`, `unauthorized`, `not_found`, `clock_skew`, …; docs/api.md).
        public var error: String
        /// What went wrong, for a person.
        public var message: String
        /// For `clock_skew`: the server's clock, Unix milliseconds.
        public var serverTime: UInt64?
        /// For `clock_skew`: how far ahead of it the refused timestamp was.
        public var offsetMilliseconds: UInt64?

        /// An error answer.
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
    /// The encoded operations, UTF-8.
    public var bytes: [UInt8]

    /// Operations already encoded.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// The encoding of `operations` (``OperationCodec/encode(_:canonicalOrder:)``).
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
