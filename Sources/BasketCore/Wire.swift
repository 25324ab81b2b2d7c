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
        /// The API's error code (``ErrorCode/tooLong``, ``ErrorCode/controlCharacter``).
        public var code: ErrorCode
        /// What is wrong, for a person.
        public var message: String

        /// A refusal with its code and message.
        public init(code: ErrorCode, message: String) {
            self.code = code
            self.message = message
        }

        /// Refuses `value` (when present) over `maxBytes` bytes of UTF-8, or holding control characters.
        static func text(_ value: String?, _ key: some CodingKey, maxBytes: Int) throws(Refusal) {
            guard let value else { return }
            if value.utf8.count > maxBytes {
                throw Refusal(code: .tooLong, message: "'\(key.stringValue)' is longer than \(maxBytes) bytes")
            }
            if value.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || ItemName.isBidiControl($0.value)
            }) {
                throw Refusal(
                    code: .controlCharacter, message: "'\(key.stringValue)' cannot contain control characters")
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

    /// `DELETE /v1/account`: the password, checked as at sign-in, to delete the account.
    public struct AccountDeletion: WireRequest, Hashable {
        /// The account's password.
        public var password: String

        /// A deletion confirmed with `password`.
        public init(password: String) { self.password = password }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case password }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
        }
    }

    /// `POST /v1/account/password`: the current password and the new one.
    public struct PasswordChange: WireRequest, Hashable {
        /// The current password, checked as at sign-in.
        public var password: String
        /// The new password: at least 8 characters.
        public var newPassword: String
        /// For an account with a key pair: its private key wrapped under the new password's
        /// wrapping key (`w1.…`, docs/encryption.md), stored with the new password in one step.
        public var wrappedKey: String?

        /// A password change from `password` to `newPassword`.
        public init(password: String, newPassword: String, wrappedKey: String? = nil) {
            self.password = password
            self.newPassword = newPassword
            self.wrappedKey = wrappedKey
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case password, newPassword, wrappedKey }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
            try Refusal.text(newPassword, CodingKeys.newPassword, maxBytes: 1024)
            try KeyForm.check(wrappedKey, CodingKeys.wrappedKey, KeyForm.isWrapped)
        }
    }

    /// `PUT /v1/account/keys`: the account's X25519 key pair for lists encrypted end to end, made
    /// on a device (docs/encryption.md), confirmed with the password. The private key comes
    /// wrapped twice, under the password's wrapping key and under the recovery code's key: the
    /// server can open neither. Made once: sent again, the public key must be the same, and the
    /// wraps and the recovery secret are replaced.
    public struct KeySetup: WireRequest, Hashable {
        /// The account's password, checked as at sign-in.
        public var password: String
        /// The public key, base64url of 32 bytes.
        public var publicKey: String
        /// The private key wrapped under the password's wrapping key (`w1.…`).
        public var wrappedKey: String
        /// The private key wrapped under the recovery code's key (`w1.…`).
        public var recoveryKey: String
        /// What the recovery code gives to sign in with (base64url of 32 bytes); stored hashed.
        public var recoverySecret: String

        /// A key pair's setup.
        public init(
            password: String, publicKey: String, wrappedKey: String, recoveryKey: String, recoverySecret: String
        ) {
            self.password = password
            self.publicKey = publicKey
            self.wrappedKey = wrappedKey
            self.recoveryKey = recoveryKey
            self.recoverySecret = recoverySecret
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case password, publicKey, wrappedKey, recoveryKey, recoverySecret
        }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(password, CodingKeys.password, maxBytes: 1024)
            try KeyForm.check(publicKey, CodingKeys.publicKey, KeyForm.isKey)
            try KeyForm.check(wrappedKey, CodingKeys.wrappedKey, KeyForm.isWrapped)
            try KeyForm.check(recoveryKey, CodingKeys.recoveryKey, KeyForm.isWrapped)
            try KeyForm.check(recoverySecret, CodingKeys.recoverySecret, KeyForm.isKey)
        }
    }

    /// `POST /v1/account/recovery`: the way back from a forgotten password, with what the
    /// recovery code gives to sign in with. Without `newPassword`, the answer is the account's
    /// public key and its private key wrapped under the recovery code's key (``AccountKeys``);
    /// with `newPassword` and `wrappedKey` (the private key wrapped under the new password's
    /// key), the password is replaced, every device signed out, and this one signed in
    /// (``NewToken``).
    public struct Recovery: WireRequest, Hashable {
        /// The account name.
        public var name: String
        /// What the recovery code gives to sign in with (base64url of 32 bytes).
        public var recoverySecret: String
        /// The new password.
        public var newPassword: String?
        /// The private key wrapped under the new password's wrapping key (`w1.…`).
        public var wrappedKey: String?
        /// How the new sign-in appears in the devices list.
        public var device: String?

        /// A recovery: the keys first (no new password), then the new password with its wrap.
        public init(
            name: String, recoverySecret: String, newPassword: String? = nil, wrappedKey: String? = nil,
            device: String? = nil
        ) {
            self.name = name
            self.recoverySecret = recoverySecret
            self.newPassword = newPassword
            self.wrappedKey = wrappedKey
            self.device = device
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case name, recoverySecret, newPassword, wrappedKey, device
        }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try Refusal.text(name, CodingKeys.name, maxBytes: 64)
            try KeyForm.check(recoverySecret, CodingKeys.recoverySecret, KeyForm.isKey)
            try Refusal.text(newPassword, CodingKeys.newPassword, maxBytes: 1024)
            try KeyForm.check(wrappedKey, CodingKeys.wrappedKey, KeyForm.isWrapped)
            try Refusal.text(device, CodingKeys.device, maxBytes: 64)
            if (newPassword == nil) != (wrappedKey == nil) {
                throw Refusal(code: .missingField, message: "'newPassword' and 'wrappedKey' go together")
            }
        }
    }

    /// `PUT /v1/lists/{id}/snapshot`: an encrypted list's state at `cursor` of its log, sealed on
    /// an owner's device as one text (docs/encryption.md, "Snapshots").
    public struct SnapshotRequest: WireRequest, Hashable {
        /// The position in the list's log the snapshot holds the state at.
        public var cursor: Int64
        /// The sealed text (`n1.EPOCH.…`, at most ``Sealed/maxSnapshotBytes``).
        public var snapshot: String

        /// A snapshot at `cursor`.
        public init(cursor: Int64, snapshot: String) {
            self.cursor = cursor
            self.snapshot = snapshot
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case cursor, snapshot }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            guard cursor >= 0 else { throw Refusal(code: .invalidParameter, message: "'cursor' is 0 or more") }
            guard Sealed.parseSnapshot(snapshot) != nil else {
                throw Refusal(
                    code: .invalidSnapshot,
                    message: "a snapshot is 'n1.', its key epoch, '.' and base64url of at least 32 bytes, at most 3 MiB"
                )
            }
        }
    }

    /// `POST /v1/lists/{id}/encryption`: an owner's device makes a plain list encrypted end to end
    /// (docs/encryption.md, "Converting a plain list"): the keys it made, sealed to every member,
    /// and the list's state at `cursor`, the end of its log, sealed under them as a snapshot.
    public struct Conversion: WireRequest, Hashable {
        /// The end of the list's log the device was even with.
        public var cursor: Int64
        /// The list's state at `cursor`, sealed under key epoch 0 (`n1.0.…`).
        public var snapshot: String
        /// The keys sealed to each member with a key pair (at most ``EnvelopeDelivery/maxCount``).
        public var envelopes: [EnvelopeDelivery.Envelope]

        /// A conversion at `cursor`.
        public init(cursor: Int64, snapshot: String, envelopes: [EnvelopeDelivery.Envelope]) {
            self.cursor = cursor
            self.snapshot = snapshot
            self.envelopes = envelopes
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case cursor, snapshot, envelopes }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            try SnapshotRequest(cursor: cursor, snapshot: snapshot).check()
            try EnvelopeDelivery(envelopes: envelopes).check()
        }

        /// What the server answers: the log's new epoch (a device that converted its copy pulls
        /// from the snapshot under it).
        public struct Answer: Codable, Hashable, Sendable {
            /// The list's log epoch from now on.
            public var epoch: String

            /// An answer naming `epoch`.
            public init(epoch: String) { self.epoch = epoch }
        }
    }

    /// `PUT /v1/lists/{id}/envelopes`: a list's keys sealed to members' public keys (`e1.…`,
    /// docs/encryption.md), one per member, each replacing the member's last.
    public struct EnvelopeDelivery: WireRequest, Hashable {
        /// The envelopes, at most ``maxCount``.
        public var envelopes: [Envelope]
        /// A rotation's new key epoch, newer than the list's: then every member with a key pair gets
        /// an envelope holding it, and the list takes pushes sealed under it only.
        public var epoch: Int64?

        /// One member's envelope.
        public struct Envelope: Codable, Hashable, Sendable {
            /// The member's account name.
            public var account: String
            /// The list's keys sealed to its public key.
            public var envelope: String

            /// `envelope` for `account`.
            public init(account: String, envelope: String) {
                self.account = account
                self.envelope = envelope
            }
        }

        /// The most envelopes one request carries (a list's most members).
        public static let maxCount = 100

        /// These envelopes, handing on key epoch `epoch` when given (a rotation).
        public init(envelopes: [Envelope], epoch: Int64? = nil) {
            self.envelopes = envelopes
            self.epoch = epoch
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case envelopes, epoch }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        public func check() throws(Refusal) {
            guard envelopes.count <= Self.maxCount else {
                throw Refusal(code: .invalidParameter, message: "at most \(Self.maxCount) envelopes at once")
            }
            if let epoch, !(1...Int64(Sealed.maxEpoch)).contains(epoch) {
                throw Refusal(code: .invalidParameter, message: "'epoch' is a key epoch, 1 to \(Sealed.maxEpoch)")
            }
            for envelope in envelopes {
                try Refusal.text(envelope.account, CodingKeys.envelopes, maxBytes: 64)
                guard KeyForm.isEnvelope(envelope.envelope) else {
                    throw Refusal(
                        code: .invalidEnvelope,
                        message: "an envelope is e1. and base64url, at most \(KeyForm.maxEnvelopeBytes) bytes")
                }
            }
        }
    }

    /// The forms of the keys and sealed keys the server keeps for lists encrypted end to end
    /// (docs/encryption.md): checked by form and size only, never opened.
    public enum KeyForm {
        /// The most bytes of one envelope: the identity key and about 330 epochs.
        public static let maxEnvelopeBytes = 16 << 10

        /// A key or secret: base64url of 32 bytes, without padding.
        public static func isKey(_ text: String) -> Bool {
            text.utf8.count == 43 && Base64URL.decode(text)?.count == 32
        }

        /// A wrapped private key: `w1.` and base64url of a nonce, 32 bytes sealed and a tag.
        public static func isWrapped(_ text: String) -> Bool {
            text.utf8.count == 83 && text.hasPrefix("w1.") && Base64URL.decode(text.dropFirst(3))?.count == 60
        }

        /// An envelope: `e1.` and base64url of an ephemeral key, a nonce, at least one epoch's
        /// keys sealed and a tag; at most ``maxEnvelopeBytes``.
        public static func isEnvelope(_ text: String) -> Bool {
            guard text.utf8.count <= maxEnvelopeBytes, text.hasPrefix("e1."),
                let bytes = Base64URL.decode(text.dropFirst(3))
            else { return false }
            return bytes.count >= 32 + 12 + 32 + 36 + 16
        }

        static func check(_ text: String?, _ key: some CodingKey, _ form: (String) -> Bool) throws(Refusal) {
            guard let text else { return }
            guard form(text) else {
                throw Refusal(
                    code: .invalidKeys, message: "'\(key.stringValue)' is not in its form (docs/encryption.md)")
            }
        }
    }

    /// `POST /v1/lists`: registers a list made on a client, by the id the client chose
    /// (32 hex digits; the server checks it).
    public struct NewList: WireRequest, Hashable {
        /// The list's id as 32 hex digits.
        public var id: String
        /// True for a list encrypted end to end: the server then takes sealed values only
        /// (``Sealed``). Absent or false for a plain list, which a server may refuse
        /// (`encryption_required`).
        public var encrypted: Bool?

        /// Registers the list with id `id`, encrypted end to end or not.
        public init(id: ListID, encrypted: Bool = false) {
            self.id = id.description
            self.encrypted = encrypted ? true : nil
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case id, encrypted }
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
        /// (``InvitePreview``); a title's rules (``ItemName``), or for an encrypted list the title
        /// sealed (``Sealed``) as the list's `title` at version zero, which the invite link's key opens.
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
            try Refusal.text(title, CodingKeys.title, maxBytes: Sealed.maxTextBytes(for: .title))
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

    /// The encoding of `operations` (``OperationCodec/encode(_:canonicalOrder:keys:)``).
    public init(_ operations: [Op]) { bytes = OperationCodec.encode(operations) }

    /// The operations (``OperationCodec/decode(_:sealed:)``).
    public func operations(sealed: Bool = false) throws -> [Op] { try OperationCodec.decode(bytes, sealed: sealed) }

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

extension ItemID: Codable {
    /// An item id in JSON: 32 hex digits.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let id = ItemID(hex: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an item id (32 hex digits)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
