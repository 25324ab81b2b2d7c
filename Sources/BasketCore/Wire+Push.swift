extension Wire {
    /// What a person may choose to be told about a list by a push notification.
    public enum PushKind: String, Codable, CaseIterable, Sendable {
        /// Someone else added items.
        case added
        /// Someone else said they are going shopping.
        case shopping
        /// Someone else finished shopping (with what they bought).
        case done
    }

    /// `GET /v1/push/key`: the server's VAPID public key (RFC 8292), base64url of the 65-byte
    /// uncompressed point: a browser's `applicationServerKey`.
    public struct PushKey: Codable, Hashable, Sendable {
        /// The key, base64url.
        public var publicKey: String

        /// The key as it travels.
        public init(publicKey: String) { self.publicKey = publicKey }
    }

    /// `POST /v1/push/subscriptions`: a browser's `PushSubscription.toJSON()` and what to hear of
    /// which lists. Subscribing an endpoint again replaces its lists and kinds.
    public struct PushSubscribe: WireRequest, Hashable {
        /// The push service's URL for this browser (https, public: see docs/security.md).
        public var endpoint: String
        /// What browsers send beside the endpoint (ignored).
        public var expirationTime: Int64?
        /// The browser's keys, base64url.
        public var keys: Keys
        /// The lists to hear of, by id (lists the account is not a member of are left out).
        public var lists: [String]?
        /// What to hear of them (``PushKind``); nil or empty: every kind.
        public var kinds: [String]?

        /// The browser's `p256dh` (its P-256 public key) and `auth` (its 16-byte secret).
        public struct Keys: Codable, Hashable, Sendable {
            /// The browser's P-256 public key, base64url.
            public var p256dh: String
            /// The browser's 16-byte auth secret, base64url.
            public var auth: String

            /// Keys as a browser gives them.
            public init(p256dh: String, auth: String) {
                self.p256dh = p256dh
                self.auth = auth
            }
        }

        /// A subscription request.
        public init(endpoint: String, keys: Keys, lists: [ListID], kinds: [PushKind]) {
            self.endpoint = endpoint
            self.keys = keys
            self.lists = lists.map(\.description)
            self.kinds = kinds.map(\.rawValue)
        }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case endpoint, expirationTime, keys, lists, kinds }
        public static let fields = CodingKeys.allCases.map(\.rawValue)

        /// The most lists one subscription may name.
        public static let maxLists = 200

        public func check() throws(Refusal) {
            try Refusal.text(keys.p256dh, CodingKeys.keys, maxBytes: 100)
            try Refusal.text(keys.auth, CodingKeys.keys, maxBytes: 40)
            if (lists?.count ?? 0) > Self.maxLists {
                throw Refusal(code: .invalidParameter, message: "'lists' names at most \(Self.maxLists) lists")
            }
            for list in lists ?? [] { try Refusal.text(list, CodingKeys.lists, maxBytes: 32) }
            if (kinds?.count ?? 0) > PushKind.allCases.count * 2 {
                throw Refusal(code: .invalidParameter, message: "'kinds' names each kind at most once")
            }
        }
    }

    /// One subscription as its account sees it (never its keys).
    public struct PushSubscription: Codable, Hashable, Sendable {
        /// Its id, for `DELETE /v1/push/subscriptions/{id}`.
        public var id: String
        /// The lists it hears of.
        public var lists: [ListID]
        /// What it hears of them.
        public var kinds: [PushKind]
        /// Whether it belongs to the device asking.
        public var thisDevice: Bool
        /// When it was made, Unix milliseconds.
        public var created: Int64

        /// A subscription as it travels.
        public init(id: String, lists: [ListID], kinds: [PushKind], thisDevice: Bool, created: Int64) {
            self.id = id
            self.lists = lists
            self.kinds = kinds
            self.thisDevice = thisDevice
            self.created = created
        }
    }

    /// `GET /v1/push/subscriptions`: the account's subscriptions.
    public struct PushSubscriptions: Codable, Hashable, Sendable {
        /// The subscriptions, oldest first.
        public var subscriptions: [PushSubscription]

        /// The account's subscriptions.
        public init(subscriptions: [PushSubscription]) { self.subscriptions = subscriptions }
    }

    /// What one push message carries, encrypted for the subscription (RFC 8291): what happened on
    /// which list and who did it, so that the service worker writes the text itself, in the
    /// person's language, naming the items from its own copy of the list. Names of items are
    /// never in it, only their ids.
    public struct PushMessage: Codable, Hashable, Sendable {
        /// The format's version.
        public var v: Int
        /// The list.
        public var list: ListID
        /// When the first of its events happened, Unix milliseconds.
        public var at: Int64
        /// What happened since the last message for the list, at most one event per kind and person.
        public var events: [Event]

        /// One kind of thing one person did.
        public struct Event: Codable, Hashable, Sendable {
            /// What happened.
            public var kind: PushKind
            /// Who (their account name).
            public var who: String
            /// How many items (added; bought, for `done`).
            public var count: Int
            /// The first items' ids (added), for the service worker to name from its replica.
            public var items: [ItemID]
            /// The shop (`shopping`), if one was named (an encrypted list's sealed).
            public var shop: String?
            /// An encrypted list's first added items' `name` operations, sealed as pushed, in the
            /// operations' text encoding: the service worker opens them to name what its copy lacks.
            public var ops: String?

            /// An event.
            public init(
                kind: PushKind, who: String, count: Int, items: [ItemID] = [], shop: String? = nil, ops: String? = nil
            ) {
                self.kind = kind
                self.who = who
                self.count = count
                self.items = items
                self.shop = shop
                self.ops = ops
            }
        }

        /// A message.
        public init(list: ListID, at: Int64, events: [Event]) {
            self.v = 1
            self.list = list
            self.at = at
            self.events = events
        }
    }
}
