import BasketCore
import Foundation
import HTTPServer
import PlatformCrypto

/// Web Push (RFC 8030, 8291, 8292): the server's public key, each device's subscriptions, and
/// the events pushes tell of (``PushNotifier``).
extension BasketService {
    /// Settings of Web Push.
    public struct PushConfiguration: Sendable {
        /// Whether subscriptions are taken and messages sent.
        public var enabled = true
        /// Endpoints beginning with one of these may be `http` and private (`--push-allow-endpoint`).
        public var allowedEndpointPrefixes: [String] = []
        /// The VAPID subject: how a push service's operator reaches the server's (`--push-contact`).
        public var subject = "mailto:postmaster@localhost"
        /// The shortest time between two messages about one list.
        public var intervalSeconds = 60.0
        /// Subscriptions one account may have (a browser each); more replace its oldest.
        public var maxSubscriptionsPerAccount = 20

        /// The defaults.
        public init() {}
    }

    /// Replaces the store's VAPID key pair (`basket-server rotate-push-key`); returns how many
    /// subscriptions ended with the old one.
    public static func rotatePushKey(in store: any Store, now: Int64) throws -> Int {
        try PushKeys.rotate(in: store, now: now)
    }

    /// Makes the VAPID key pair when the store has none yet (`basket-server` at start), so that it
    /// exists before any browser asks for it; false when the store cannot say now (it is then
    /// made at the first request that needs it).
    @discardableResult
    public func preparePush() -> Bool {
        guard configuration.push.enabled else { return false }
        return (try? pushKeys.current()) != nil
    }

    func pushDisabled() -> HTTPError { HTTPError.notFound("this server sends no push notifications") }

    func pushKey(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try authenticate(request)
        guard configuration.push.enabled else { throw pushDisabled() }
        return answer(Wire.PushKey(publicKey: Base64URL.encode(try pushKeys.current().publicKeyBytes)))
    }

    func subscribePush(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try session(request)
        guard configuration.push.enabled else { throw pushDisabled() }
        let body = try JSONBody.decode(Wire.PushSubscribe.self, from: request)
        let endpoints = PushEndpoints(allowedPrefixes: configuration.push.allowedEndpointPrefixes)
        do throws(PushEndpoints.Refusal) {
            _ = try endpoints.check(body.endpoint)
        } catch {
            throw HTTPError.badRequest("'endpoint' \(error)", code: .invalidEndpoint)
        }
        guard (try? WebPushMessage.Receiver(p256dh: body.keys.p256dh, auth: body.keys.auth)) != nil else {
            throw HTTPError.badRequest(
                "'keys' must hold a P-256 public key ('p256dh') and a 16-byte secret ('auth'), in base64url",
                code: .invalidKeys)
        }
        var lists: [ListID] = []
        for raw in body.lists ?? [] {
            guard let list = ListID(hex: raw.lowercased()) else {
                throw HTTPError.badRequest("'lists' holds '\(raw.prefix(32))', not a list id", code: .invalidID)
            }
            if !lists.contains(list) { lists.append(list) }
        }
        var kinds: [Wire.PushKind] = []
        for raw in body.kinds ?? [] {
            guard let kind = Wire.PushKind(rawValue: raw) else {
                throw HTTPError.badRequest(
                    "'kinds' holds '\(raw.prefix(16))'; the kinds are added, shopping and done", code: .invalidParameter
                )
            }
            kinds.append(kind)
        }
        let record = PushSubscriptionRecord(
            id: Secrets.randomHex(bytes: 8), account: session.account.id, tokenHash: session.tokenHash,
            endpoint: body.endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth,
            kinds: kinds.isEmpty ? .all : PushKinds(kinds), lists: lists, created: Int64(configuration.clock()))
        let stored = try store.savePushSubscription(
            record, maxPerAccount: configuration.push.maxSubscriptionsPerAccount)
        return answer(Self.wire(stored, asking: session.tokenHash), status: 201)
    }

    func pushSubscriptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try session(request)
        let records = try store.pushSubscriptions(of: session.account.id)
        return answer(Wire.PushSubscriptions(subscriptions: records.map { Self.wire($0, asking: session.tokenHash) }))
    }

    func unsubscribePush(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let id = request.pathParameters["id"] ?? ""
        guard id.utf8.count <= 32, try store.deletePushSubscription(id: id, account: account.id) else {
            throw HTTPError.notFound("this account has no push subscription '\(id.prefix(32))'")
        }
        return HTTPResponse(status: 204)
    }

    static func wire(_ record: PushSubscriptionRecord, asking tokenHash: String) -> Wire.PushSubscription {
        Wire.PushSubscription(
            id: record.id, lists: record.lists, kinds: record.kinds.kinds, thisDevice: record.tokenHash == tokenHash,
            created: record.created)
    }

    /// Tells the push notifier what an accepted push did that people may hear of: the items it
    /// added (or brought back), by whom.
    func notePushed(_ operations: [Op], to list: ListID, by account: AccountRecord, encrypted: Bool = false) {
        guard let notifier = pushNotifier else { return }
        var added: [ItemID] = []
        var seen = Set<ItemID>()
        var sealedNames: [Op] = []
        if encrypted {
            // The server cannot read an encrypted list's values: an item whose name and `deleted`
            // register are written in one push is an add (a device writes both when it adds; a
            // removal writes `deleted` alone, a rename the name alone). Its sealed name goes with
            // the event, for the service worker to open.
            let deletes = Set(operations.lazy.filter { $0.field == .deleted && $0.item != .list }.map(\.item))
            for op in operations where op.field == .name && deletes.contains(op.item) {
                guard seen.insert(op.item).inserted else { continue }
                added.append(op.item)
                if sealedNames.count < PushNotifier.maxSealedNames { sealedNames.append(op) }
            }
        } else {
            for op in operations where op.field == .deleted && op.value == .bool(false) {
                if seen.insert(op.item).inserted { added.append(op.item) }
            }
        }
        guard !added.isEmpty else { return }
        notifier.record(
            PushNotifier.Event(
                list: list, kind: .added, account: account.id, name: account.name, count: added.count, items: added,
                sealedNames: sealedNames))
    }
}
