extension Wire {
    /// `POST /v1/lists/{id}/keys`: a named key that can only add to the list (a kitchen speaker,
    /// a phone's shortcut, a home automation).
    public struct AddKeyRequest: WireRequest, Hashable {
        /// What the key is for ("Kitchen speaker").
        public var name: String

        /// A key named `name`.
        public init(name: String) { self.name = name }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case name }
        public static let fields = CodingKeys.allCases.map(\.rawValue)
        /// The longest name, in bytes.
        public static let maxNameBytes = 64

        public func check() throws(Refusal) { try Refusal.text(name, CodingKeys.name, maxBytes: Self.maxNameBytes) }
    }

    /// An add-only key as the list's members see it: never its secret.
    public struct AddKey: Codable, Hashable, Sendable {
        /// Its id, for revoking it.
        public var id: String
        /// What it is for.
        public var name: String
        /// The member who made it (it stops working when they leave the list).
        public var createdBy: String
        /// When it was made, Unix milliseconds.
        public var created: Int64

        /// A key as it travels.
        public init(id: String, name: String, createdBy: String, created: Int64) {
            self.id = id
            self.name = name
            self.createdBy = createdBy
            self.created = created
        }
    }

    /// The answer to making a key: the secret, shown once.
    public struct NewAddKey: Codable, Hashable, Sendable {
        /// The secret (`bk_` and 64 hex digits), shown this once.
        public var key: String
        /// Its id.
        public var id: String
        /// What it is for.
        public var name: String
        /// The one list it adds to.
        public var list: ListID

        /// A new key.
        public init(key: String, id: String, name: String, list: ListID) {
            self.key = key
            self.id = id
            self.name = name
            self.list = list
        }
    }

    /// `GET /v1/lists/{id}/keys`.
    public struct AddKeys: Codable, Hashable, Sendable {
        /// The list's keys, oldest first.
        public var keys: [AddKey]

        /// The list's keys.
        public init(keys: [AddKey]) { self.keys = keys }
    }

    /// `POST /v1/lists/{id}/inbox` with an add-only key: text for a member's device to file as
    /// items ("2 milk, bread").
    public struct InboxText: WireRequest, Hashable {
        /// What to add, as a person writes it.
        public var text: String

        /// Text to file.
        public init(text: String) { self.text = text }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case text }
        public static let fields = CodingKeys.allCases.map(\.rawValue)
        /// The longest text, in bytes.
        public static let maxBytes = 1_024

        public func check() throws(Refusal) {
            // Line breaks are what a shortcut sends for several items: allowed, other controls not.
            let lines = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" ? " " : $0 }))
            try Refusal.text(lines, CodingKeys.text, maxBytes: Self.maxBytes)
        }
    }

    /// One text waiting in a list's inbox.
    public struct InboxEntry: Codable, Hashable, Sendable {
        /// Its id, for taking it.
        public var id: String
        /// What the key sent.
        public var text: String
        /// The key's name ("Kitchen speaker").
        public var from: String
        /// When it came, Unix milliseconds.
        public var at: Int64

        /// An entry as it travels.
        public init(id: String, text: String, from: String, at: Int64) {
            self.id = id
            self.text = text
            self.from = from
            self.at = at
        }
    }

    /// `GET /v1/lists/{id}/inbox`.
    public struct Inbox: Codable, Hashable, Sendable {
        /// The texts, oldest first.
        public var entries: [InboxEntry]

        /// The entries waiting.
        public init(entries: [InboxEntry]) { self.entries = entries }
    }
}
