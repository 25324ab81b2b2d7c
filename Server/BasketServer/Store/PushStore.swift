public import BasketCore

/// Web Push's state: the server's VAPID key pair, each device's subscriptions and the lists they
/// hear of, and when each list may have its next push (`BasketService+Push.swift`, `PushNotifier`).
///
/// A subscription belongs to the device token it was made with and ends with it: signing out,
/// revocation and account deletion delete the token, and the store deletes its subscriptions in
/// the same transaction (a trigger, or a foreign key's cascade). Removal from a list ends that
/// list for the removed account's subscriptions the same way. ``pushTargets(of:tokensUsedSince:madeSince:limit:)``
/// reads through the memberships and tokens as well, so nothing reaches a device that no longer
/// belongs, whichever way it left.
public protocol PushStore: Sendable {
    /// The server's key pair; `fresh` is stored and returned when there is none yet (the first
    /// start; of several instances starting at once, the first to store one wins).
    func pushKey(orSave fresh: StoredPushKey) throws -> StoredPushKey
    /// Replaces the key pair and ends every subscription (push services refuse messages signed
    /// with another key than the one a subscription was made for); returns how many ended.
    func rotatePushKey(_ fresh: StoredPushKey) throws -> Int
    /// Stores `subscription` for its token's device, replacing the one with the same endpoint;
    /// its lists are kept to those its account is a member of. An account has at most
    /// `maxPerAccount` subscriptions: the oldest go.
    /// - Returns: the subscription as stored (its lists filtered).
    func savePushSubscription(_ subscription: PushSubscriptionRecord, maxPerAccount: Int) throws
        -> PushSubscriptionRecord
    /// The account's subscriptions, oldest first.
    func pushSubscriptions(of account: Int64) throws -> [PushSubscriptionRecord]
    /// Ends the account's subscription with this id; false when it has none.
    func deletePushSubscription(id: String, account: Int64) throws -> Bool
    /// Ends the subscription with this endpoint (its push service answered 404 or 410).
    func deletePushSubscription(endpoint: String) throws
    /// The subscriptions that hear of `list`: of its members, made with a token used since
    /// `tokensUsedSince` and made since `madeSince` (one that has not expired), at most `limit`.
    func pushTargets(of list: ListID, tokensUsedSince: Int64, madeSince: Int64, limit: Int) throws -> [PushTarget]
    /// Takes the list's next push when its time has come (`now` is at or past it): its next one
    /// may then be `interval` later. Every instance asks the same store, so a list has at most one
    /// push per interval however many instances serve it.
    /// - Returns: nil when taken, else when it may be taken (Unix milliseconds).
    func claimPushSlot(list: ListID, now: Int64, interval: Int64) throws -> Int64?
}

/// The server's VAPID key pair as stored.
public struct StoredPushKey: Sendable, Hashable {
    /// The private scalar, 32 bytes.
    public var privateKey: [UInt8]
    /// The public point, 65 bytes uncompressed.
    public var publicKey: [UInt8]
    /// When it was made, Unix milliseconds.
    public var created: Int64

    /// A key pair as stored.
    public init(privateKey: [UInt8], publicKey: [UInt8], created: Int64) {
        self.privateKey = privateKey
        self.publicKey = publicKey
        self.created = created
    }
}

/// One device's push subscription.
public struct PushSubscriptionRecord: Sendable, Hashable {
    /// Its public id.
    public var id: String
    /// Whose it is.
    public var account: Int64
    /// The hash of the token of the device that made it.
    public var tokenHash: String
    /// The push service's URL for the browser.
    public var endpoint: String
    /// The browser's P-256 public key, base64url.
    public var p256dh: String
    /// The browser's auth secret, base64url.
    public var auth: String
    /// What it hears of (``PushKinds``).
    public var kinds: PushKinds
    /// The lists it hears of.
    public var lists: [ListID]
    /// When it was made, Unix milliseconds.
    public var created: Int64

    /// A subscription as stored.
    public init(
        id: String, account: Int64, tokenHash: String, endpoint: String, p256dh: String, auth: String, kinds: PushKinds,
        lists: [ListID], created: Int64
    ) {
        self.id = id
        self.account = account
        self.tokenHash = tokenHash
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.kinds = kinds
        self.lists = lists
        self.created = created
    }
}

/// Where one message for a list goes.
public struct PushTarget: Sendable, Hashable {
    /// The subscription's id.
    public var id: String
    /// The subscriber (it hears nothing of what it did itself).
    public var account: Int64
    /// The push service's URL for the browser.
    public var endpoint: String
    /// The browser's P-256 public key, base64url.
    public var p256dh: String
    /// The browser's auth secret, base64url.
    public var auth: String
    /// What it hears of.
    public var kinds: PushKinds

    /// A target.
    public init(id: String, account: Int64, endpoint: String, p256dh: String, auth: String, kinds: PushKinds) {
        self.id = id
        self.account = account
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.kinds = kinds
    }
}

/// A set of `Wire.PushKind`s, stored as bits.
public struct PushKinds: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The set holding `kind`.
    public init(_ kind: Wire.PushKind) {
        let bit: Int64 =
            switch kind {
            case .added: 1
            case .shopping: 2
            case .done: 4
            }
        self.init(rawValue: bit)
    }

    /// The set of `kinds`.
    public init(_ kinds: some Sequence<Wire.PushKind>) {
        self = kinds.reduce(into: PushKinds()) { $0.insert(PushKinds($1)) }
    }

    /// Every kind.
    public static let all = PushKinds(Wire.PushKind.allCases)

    /// The kinds, in `Wire.PushKind`'s order.
    public var kinds: [Wire.PushKind] { Wire.PushKind.allCases.filter { contains(PushKinds($0)) } }
}

/// The statements of ``PushStore``, the same for both stores (``SharedSQL``'s `{n}` placeholders).
enum PushSQL {
    static let insertKey = """
        INSERT INTO push_key(slot, private, public, created) VALUES (1, {1}, {2}, {3}) ON CONFLICT (slot) DO NOTHING
        """
    static let key = "SELECT private, public, created FROM push_key WHERE slot = 1"
    static let replaceKey = "UPDATE push_key SET private = {1}, public = {2}, created = {3} WHERE slot = 1"
    static let countSubscriptions = "SELECT count(*) FROM push_subscriptions"
    static let deleteEverySubscription = "DELETE FROM push_subscriptions"
    static let deleteByEndpoint = "DELETE FROM push_subscriptions WHERE endpoint = {1}"
    static let deleteByID = "DELETE FROM push_subscriptions WHERE id = {1} AND account = {2}"
    static let insertSubscription = """
        INSERT INTO push_subscriptions(id, account, token, endpoint, p256dh, auth, kinds, created)
        VALUES ({1}, {2}, {3}, {4}, {5}, {6}, {7}, {8})
        """
    /// Subscription {2} hears of list {1} (its id) when account {3} is a member of it.
    static let insertList = """
        INSERT INTO push_lists(list, subscription) SELECT m.list, {2} FROM members m JOIN lists l ON l.no = m.list
        WHERE l.id = {1} AND m.account = {3} ON CONFLICT DO NOTHING
        """
    /// Keeps account {1}'s newest {2} subscriptions.
    static let trim = """
        DELETE FROM push_subscriptions WHERE account = {1} AND id NOT IN (
            SELECT id FROM push_subscriptions WHERE account = {1} ORDER BY created DESC, id DESC LIMIT {2})
        """
    static let subscriptionsOf = """
        SELECT id, token, endpoint, p256dh, auth, kinds, created FROM push_subscriptions WHERE account = {1}
        ORDER BY created, id
        """
    static let listsOf = """
        SELECT l.id FROM push_lists p JOIN lists l ON l.no = p.list WHERE p.subscription = {1} ORDER BY l.no
        """
    /// Subscriptions hearing of list {1} whose account is a member and whose token works.
    static let targets = """
        SELECT s.id, s.account, s.endpoint, s.p256dh, s.auth, s.kinds FROM lists l
        JOIN push_lists p ON p.list = l.no
        JOIN push_subscriptions s ON s.id = p.subscription
        JOIN members m ON m.list = l.no AND m.account = s.account
        JOIN tokens t ON t.hash = s.token
        WHERE l.id = {1} AND t.last_used >= {2} AND t.created >= {3}
        ORDER BY s.id LIMIT {4}
        """
    /// Takes list {1}'s slot at {2} when it is due, moving it to {2} + {3}.
    static let claimSlot = """
        INSERT INTO push_slots(list, next) SELECT no, CAST({2} AS bigint) + CAST({3} AS bigint) FROM lists WHERE id = {1}
        ON CONFLICT (list) DO UPDATE SET next = excluded.next WHERE push_slots.next <= {2}
        RETURNING next
        """
    static let slot = "SELECT s.next FROM push_slots s JOIN lists l ON l.no = s.list WHERE l.id = {1}"
}

/// Who is shopping for which list ("I'm going shopping"): a row per member and list, which
/// removal from the list deletes.
public protocol ShoppingStore: Sendable {
    /// `account` is going shopping for `list` (at `shop`) from `now` until `until`; one already
    /// shopping keeps its start and gets the new shop and end.
    func startShopping(list: ListID, account: Int64, shop: String?, now: Int64, until: Int64) throws
    /// `account` is done shopping for `list`, having bought `bought` items; false when it was not shopping.
    func stopShopping(list: ListID, account: Int64, now: Int64, bought: Int) throws -> Bool
    /// Who is shopping for `list` at `now`, and who finished since `endedSince`; at most 50, oldest first.
    func shopping(of list: ListID, now: Int64, endedSince: Int64) throws -> [Wire.ShoppingStatus]
}

/// The statements of ``ShoppingStore``, the same for both stores.
enum ShoppingSQL {
    static let start = """
        INSERT INTO shopping(list, account, shop, since, until, ended, bought)
        SELECT no, {2}, {3}, {4}, {5}, NULL, NULL FROM lists WHERE id = {1}
        ON CONFLICT (list, account) DO UPDATE SET shop = excluded.shop,
            since = CASE WHEN shopping.ended IS NULL AND shopping.until > {4} THEN shopping.since ELSE excluded.since END,
            until = excluded.until, ended = NULL, bought = NULL
        """
    static let stop = """
        UPDATE shopping SET ended = {3}, bought = {4}
        WHERE list = (SELECT no FROM lists WHERE id = {1}) AND account = {2} AND ended IS NULL AND until > {3}
        """
    static let statuses = """
        SELECT a.name, s.shop, s.since, s.until, s.ended, s.bought FROM shopping s
        JOIN lists l ON l.no = s.list JOIN accounts a ON a.id = s.account
        WHERE l.id = {1} AND ((s.ended IS NULL AND s.until > {2}) OR s.ended > {3})
        ORDER BY s.since, a.name LIMIT 50
        """
}
