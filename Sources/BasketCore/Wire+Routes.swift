extension Wire {
    /// One route of the API: its method and path pattern, a `{name}` standing for one path
    /// segment the caller fills. The one table of routes: the server registers these, the Swift
    /// client requests them, the web client's `ROUTES` (api.js) is held to them by the
    /// conformance vectors, and docs/api.md and docs/openapi.yaml describe them.
    public struct Route: Hashable, Sendable, CustomStringConvertible {
        /// What the clients call it (the client method's name where there is one).
        public let name: String
        /// `GET`, `POST`, `PUT` or `DELETE`.
        public let method: String
        /// The path, `{…}` for a segment: `/v1/lists/{id}/members/{account}`.
        public let pattern: String

        init(_ name: String, _ method: String, _ pattern: String) {
            self.name = name
            self.method = method
            self.pattern = pattern
        }

        public var description: String { "\(method) \(pattern)" }

        /// The path with each `{…}` filled, in order, by `segments`, each percent-escaped as one
        /// segment (every byte but ASCII letters and digits), so a name cannot reach another path.
        public func path(_ segments: String...) -> String { path(filling: segments) }

        /// ``path(_:)`` with the segments in an array.
        public func path(filling segments: [String]) -> String {
            var remaining = segments[...]
            let parts = pattern.split(separator: "/", omittingEmptySubsequences: false).map { part -> String in
                guard part.hasPrefix("{"), part.hasSuffix("}") else { return String(part) }
                precondition(!remaining.isEmpty, "\(self) needs a value for \(part)")
                return Self.escaped(remaining.removeFirst())
            }
            precondition(remaining.isEmpty, "\(self) takes \(segments.count - remaining.count) values")
            return parts.joined(separator: "/")
        }

        /// `text` as one path segment: ASCII letters and digits as they are, every other byte as %XX.
        static func escaped(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    out += "%" + Hex.encode([byte]).uppercased()
                }
            }
            return out
        }

        /// The server is up (no token).
        public static let health = Route("health", "GET", "/healthz")
        /// The server's counters, for Prometheus (no token; a private address in production).
        public static let metrics = Route("metrics", "GET", "/metrics")
        /// The server's clock.
        public static let time = Route("time", "GET", "/v1/time")
        /// Creates an account.
        public static let signUp = Route("signUp", "POST", "/v1/accounts")
        /// Signs in: a new token.
        public static let login = Route("login", "POST", "/v1/tokens")
        /// The account's devices (its tokens).
        public static let devices = Route("devices", "GET", "/v1/tokens")
        /// Signs out every device.
        public static let logoutEverywhere = Route("logoutEverywhere", "DELETE", "/v1/tokens")
        /// Signs out this device.
        public static let logout = Route("logout", "DELETE", "/v1/tokens/current")
        /// Signs out one device.
        public static let revokeDevice = Route("revokeDevice", "DELETE", "/v1/tokens/{id}")
        /// Who the token is.
        public static let account = Route("account", "GET", "/v1/account")
        /// Deletes the account.
        public static let deleteAccount = Route("deleteAccount", "DELETE", "/v1/account")
        /// Changes the password (every other device signed out).
        public static let changePassword = Route("changePassword", "POST", "/v1/account/password")
        /// The account's key pair, its private key wrapped (for a new device).
        public static let accountKeys = Route("accountKeys", "GET", "/v1/account/keys")
        /// Keeps the account's key pair, made on a device (confirmed with the password).
        public static let setAccountKeys = Route("setAccountKeys", "PUT", "/v1/account/keys")
        /// A forgotten password's way back, with the recovery code (no token).
        public static let recover = Route("recover", "POST", "/v1/account/recovery")
        /// Registers a list made on a device.
        public static let createList = Route("createList", "POST", "/v1/lists")
        /// The account's lists, with roles.
        public static let lists = Route("lists", "GET", "/v1/lists")
        /// Deletes a list (owners).
        public static let deleteList = Route("deleteList", "DELETE", "/v1/lists/{id}")
        /// A list's members.
        public static let members = Route("members", "GET", "/v1/lists/{id}/members")
        /// Gives a member another role (owners).
        public static let setRole = Route("setRole", "PUT", "/v1/lists/{id}/members/{account}")
        /// Removes a member (owners), or leaves (oneself).
        public static let removeMember = Route("removeMember", "DELETE", "/v1/lists/{id}/members/{account}")
        /// The list's keys sealed to the asking member.
        public static let envelope = Route("envelope", "GET", "/v1/lists/{id}/envelope")
        /// Leaves the list's keys sealed to members.
        public static let deliverEnvelopes = Route("deliverEnvelopes", "PUT", "/v1/lists/{id}/envelopes")
        /// The newest snapshot of an encrypted list (members): a joining device's start.
        public static let snapshot = Route("snapshot", "GET", "/v1/lists/{id}/snapshot")
        /// Keeps a snapshot of an encrypted list, sealed on an owner's device.
        public static let putSnapshot = Route("putSnapshot", "PUT", "/v1/lists/{id}/snapshot")
        /// Makes a plain list encrypted end to end (an owner): its keys to every member, its
        /// state as a snapshot, its plain log dropped.
        public static let encrypt = Route("encrypt", "POST", "/v1/lists/{id}/encryption")
        /// Makes an invite code.
        public static let invite = Route("invite", "POST", "/v1/lists/{id}/invites")
        /// A list's invites that still work.
        public static let invites = Route("invites", "GET", "/v1/lists/{id}/invites")
        /// Withdraws an invite.
        public static let revokeInvite = Route("revokeInvite", "DELETE", "/v1/lists/{id}/invites/{invite}")
        /// Joins a list with a code (in the body, never the URL).
        public static let join = Route("join", "POST", "/v1/invites")
        /// What a code would join, without joining.
        public static let previewInvite = Route("previewInvite", "POST", "/v1/invites/preview")
        /// Pushes operations.
        public static let push = Route("push", "POST", "/v1/lists/{id}/ops")
        /// Pulls operations after a cursor (a long-poll with `wait`).
        public static let pull = Route("pull", "GET", "/v1/lists/{id}/ops")
        /// Who is shopping for the list.
        public static let shopping = Route("shopping", "GET", "/v1/lists/{id}/shopping")
        /// "I'm going shopping" (members who may change the list).
        public static let startShopping = Route("startShopping", "PUT", "/v1/lists/{id}/shopping")
        /// "Done shopping", with how many items were bought (`?bought=N`).
        public static let stopShopping = Route("stopShopping", "DELETE", "/v1/lists/{id}/shopping")
        /// Makes an add-only key for the list (owners and editors).
        public static let makeAddKey = Route("makeAddKey", "POST", "/v1/lists/{id}/keys")
        /// The list's add-only keys.
        public static let addKeys = Route("addKeys", "GET", "/v1/lists/{id}/keys")
        /// Revokes an add-only key (owners, or its maker).
        public static let revokeAddKey = Route("revokeAddKey", "DELETE", "/v1/lists/{id}/keys/{key}")
        /// Puts text in the list's inbox (with an add-only key, not a token).
        public static let putInInbox = Route("putInInbox", "POST", "/v1/lists/{id}/inbox")
        /// The texts waiting in the list's inbox.
        public static let inbox = Route("inbox", "GET", "/v1/lists/{id}/inbox")
        /// Takes one text of the inbox to file it (one device does, whoever asks first).
        public static let takeFromInbox = Route("takeFromInbox", "DELETE", "/v1/lists/{id}/inbox/{entry}")
        /// The server's VAPID public key, for a browser's push subscription.
        public static let pushKey = Route("pushKey", "GET", "/v1/push/key")
        /// Subscribes this device's browser to push notifications of some lists.
        public static let subscribePush = Route("subscribePush", "POST", "/v1/push/subscriptions")
        /// The account's push subscriptions.
        public static let pushSubscriptions = Route("pushSubscriptions", "GET", "/v1/push/subscriptions")
        /// Ends a push subscription.
        public static let unsubscribePush = Route("unsubscribePush", "DELETE", "/v1/push/subscriptions/{id}")

        /// Every route, in the order docs/api.md lists them.
        public static let all: [Route] = [
            health, metrics, time, signUp, login, devices, logoutEverywhere, logout, revokeDevice, account,
            deleteAccount, changePassword, accountKeys, setAccountKeys, recover, createList, lists, deleteList, members,
            setRole, removeMember, envelope, deliverEnvelopes, snapshot, putSnapshot, encrypt, invite,
            invites, revokeInvite, join, previewInvite, push, pull, shopping, startShopping, stopShopping, makeAddKey,
            addKeys, revokeAddKey, putInInbox, inbox, takeFromInbox, pushKey,
            subscribePush, pushSubscriptions,
            unsubscribePush,
        ]
    }
}
