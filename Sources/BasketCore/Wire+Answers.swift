// The answers of the sync protocol: what the server sends back (the requests are in Wire.swift).

extension Wire {
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

    /// `DELETE /v1/account`: what became of the account's lists.
    public struct AccountDeleted: Codable, Hashable, Sendable {
        /// Lists it was the only member of: deleted with their logs.
        public var deleted: Int
        /// Shared lists it was the last owner of: another member (an editor first, the
        /// longest-standing) is their owner now.
        public var handedOver: Int
        /// Shared lists it left (another owner remained, or it was not an owner).
        public var left: Int

        /// What became of the lists.
        public init(deleted: Int, handedOver: Int, left: Int) {
            self.deleted = deleted
            self.handedOver = handedOver
            self.left = left
        }
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
        /// True when the list is encrypted end to end (its registers hold sealed values only);
        /// absent for a plain list.
        public var encrypted: Bool?

        /// A list as one member sees it.
        public init(id: ListID, role: Role, epoch: String, cursor: Int64, encrypted: Bool = false) {
            self.id = id
            self.role = role
            self.epoch = epoch
            self.cursor = cursor
            self.encrypted = encrypted ? true : nil
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
                body.append(contentsOf: #"{"cursor":\#(list.cursor),"#.utf8)
                if list.encrypted == true { body.append(contentsOf: #""encrypted":true,"#.utf8) }
                body.append(contentsOf: #""epoch":"#.utf8)
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
        /// The member's public key (base64url), when its account has a key pair: what a list's
        /// keys are sealed to for it (``Wire/EnvelopeDelivery``). In `GET /v1/lists/{id}/members` only.
        public var publicKey: String?

        /// A member and its role.
        public init(account: String, role: Role, replicas: [String]? = nil, publicKey: String? = nil) {
            self.account = account
            self.role = role
            self.replicas = replicas
            self.publicKey = publicKey
        }
    }

    /// `GET /v1/account/keys`, and a recovery's first answer: the account's key pair as the
    /// server keeps it, the private key wrapped (under the password's key, or the recovery code's).
    public struct AccountKeys: Codable, Hashable, Sendable {
        /// The public key, base64url of 32 bytes.
        public var publicKey: String
        /// The private key wrapped under the password's wrapping key (`GET /v1/account/keys`).
        public var wrappedKey: String?
        /// The private key wrapped under the recovery code's key (a recovery's answer).
        public var recoveryKey: String?

        /// An account's keys as one answer carries them.
        public init(publicKey: String, wrappedKey: String? = nil, recoveryKey: String? = nil) {
            self.publicKey = publicKey
            self.wrappedKey = wrappedKey
            self.recoveryKey = recoveryKey
        }
    }

    /// `GET /v1/lists/{id}/envelope`: the list's keys sealed to the asking account's public key,
    /// when a member's device left them there.
    public struct ListEnvelope: Codable, Hashable, Sendable {
        /// The envelope (`e1.…`); absent when there is none.
        public var envelope: String?
        /// The list's newest key epoch: a device holding an older one takes the newer from the envelope.
        public var keyEpoch: Int64?
        /// Whether the list awaits a rotation (a member left or was removed): an owner's or editor's
        /// device makes the next epoch.
        public var rotationDue: Bool?

        /// An answer with `envelope`, or none, and the list's key epochs.
        public init(envelope: String?, keyEpoch: Int64? = nil, rotationDue: Bool? = nil) {
            self.envelope = envelope
            self.keyEpoch = keyEpoch
            self.rotationDue = rotationDue
        }
    }

    /// `GET /v1/lists/{id}/snapshot`: an encrypted list's state at `cursor` of the server's log,
    /// sealed on an owner's device as one text (docs/encryption.md, "Snapshots").
    public struct ListSnapshot: Codable, Hashable, Sendable {
        /// The position in the list's log the snapshot holds the state at: a device pulls after it.
        public var cursor: Int64
        /// The sealed text (`n1.EPOCH.…`, ``Sealed/parseSnapshot(_:)``).
        public var snapshot: String
        /// The server's epoch of the list's log: a page of another means the server was restored
        /// since.
        public var epoch: String
        /// When the server took it, Unix ms.
        public var made: Int64

        /// A snapshot at `cursor` of the log of `epoch`, taken at `made`.
        public init(cursor: Int64, snapshot: String, epoch: String, made: Int64) {
            self.cursor = cursor
            self.snapshot = snapshot
            self.epoch = epoch
            self.made = made
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
        /// True when the list is encrypted end to end: `title` is sealed, and joining is of use
        /// only with the keys the invite link or code carries. Absent for a plain list.
        public var encrypted: Bool?

        /// What an invite is for.
        public init(
            list: ListID, title: String?, role: Role, createdBy: String, expiresAt: Int64, member: Bool,
            encrypted: Bool = false
        ) {
            self.list = list
            self.title = title
            self.role = role
            self.createdBy = createdBy
            self.expiresAt = expiresAt
            self.member = member
            self.encrypted = encrypted ? true : nil
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
        /// The caller's role, when it changed while its long-poll waited (an owner made it a
        /// viewer, say): the wait ends at once with it, so an open screen stops taking edits the
        /// server would refuse. Absent otherwise.
        public var role: Role?
        /// Who is shopping for the list (and who finished lately), when a long-poll's wait ended
        /// because that changed: the only pages that carry it. Absent otherwise.
        public var shopping: [ShoppingStatus]?
        /// How many texts wait in the list's inbox, when a long-poll's wait ended because one came
        /// (a member's device takes and files them: `GET /v1/lists/{id}/inbox`). Absent otherwise.
        public var inbox: Int?
        /// When who is shopping or the inbox last changed (the server's clock): a long-poll that
        /// sends it back (`together=`) is answered at once when they changed since, so a change
        /// made while no request was parked is not missed. With `shopping` and `inbox` only.
        public var together: Int64?

        /// A page of a list's log.
        public init(
            count: Int, cursor: Int64, epoch: String, historyComplete: Bool, more: Bool, serverTime: UInt64,
            ops: OperationText, role: Role? = nil, shopping: [ShoppingStatus]? = nil, inbox: Int? = nil,
            together: Int64? = nil
        ) {
            self.count = count
            self.cursor = cursor
            self.epoch = epoch
            self.historyComplete = historyComplete
            self.more = more
            self.serverTime = serverTime
            self.ops = ops
            self.role = role
            self.shopping = shopping
            self.inbox = inbox
            self.together = together
        }

        /// The page as JSON, written by hand: a page is up to a megabyte of operations, which this
        /// copies once into the answer (escaping as JSON requires) instead of through a `String`.
        public func jsonBytes() -> [UInt8] {
            var body = Array(
                ("{\"count\":\(count),\"cursor\":\(cursor),\"epoch\":").utf8)
            JSONText.appendQuoted(bytes: Array(epoch.utf8), to: &body)
            body.append(
                contentsOf: (",\"historyComplete\":\(historyComplete),\"more\":\(more)"
                    + (role.map { ",\"role\":\"\($0.rawValue)\"" } ?? "") + ",\"serverTime\":\(serverTime)"
                    + (inbox.map { ",\"inbox\":\($0)" } ?? "") + (together.map { ",\"together\":\($0)" } ?? "")).utf8)
            if let shopping {
                body.append(contentsOf: #","shopping":["#.utf8)
                for (index, status) in shopping.enumerated() {
                    if index > 0 { body.append(UInt8(ascii: ",")) }
                    status.appendJSON(to: &body)
                }
                body.append(UInt8(ascii: "]"))
            }
            body.append(contentsOf: #","ops":"#.utf8)
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
