import BasketCore
import Foundation
import HTTPServer
import Synchronization

/// The add-only inbox: a named key an owner or editor makes for a speaker, a shortcut or a home
/// automation can only put text into one list's inbox; the next member device that syncs takes
/// each text (once) and files it as items with the shared parser, credited to the key's name.
/// Operations are still made only by clients, so item identity and merging stay where they are.
extension BasketService {
    /// Keys one list may have, texts its inbox may hold, and texts one key may put in a minute.
    static let maxAddKeysPerList = 20
    static let maxInboxEntries = 100
    static let inboxTextsPerKeyPerMinute = 20

    /// The secret of an add-only key: `bk_` and 32 random bytes in hex (never a token's form).
    static func addKeySecret() -> String { "bk_" + Secrets.randomHex(bytes: 32) }

    func makeAddKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        guard role.canPush else { throw HTTPError(.forbidden, "a viewer cannot make a key that adds to the list") }
        let body = try JSONBody.decode(Wire.AddKeyRequest.self, from: request)
        let name: String
        do throws(ItemName.Problem) {
            name = try ItemName.clean(body.name, for: .title)
        } catch {
            throw HTTPError.badRequest("'name' is not a key's name: \(error)", code: .invalidName)
        }
        let secret = Self.addKeySecret()
        let id = Secrets.randomHex(bytes: 8)
        do {
            try store.saveAddKey(
                hash: Passwords.tokenHash(secret), id: id, list: list, name: name, createdBy: account.id,
                now: Int64(configuration.clock()), maxPerList: Self.maxAddKeysPerList)
        } catch StoreError.noSuchMember {
            throw HTTPError(.forbidden, "this account may no longer make keys for the list")
        } catch StoreError.tooManyInvites {
            throw HTTPError(.tooManyInvites, "the list has \(Self.maxAddKeysPerList) add-only keys; revoke one first")
        }
        return answer(Wire.NewAddKey(key: secret, id: id, name: name, list: list), status: 201)
    }

    func addKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, _) = try membership(request)
        return answer(Wire.AddKeys(keys: try store.addKeys(of: list).map(Self.wire)))
    }

    func revokeAddKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        let id = request.pathParameters["key"] ?? ""
        let key = try store.addKeys(of: list).first { $0.id == id }
        guard let key, role == .owner || key.createdByID == account.id, try store.revokeAddKey(id: id, of: list) != nil
        else { throw HTTPError.notFound("this list has no add-only key '\(id.prefix(32))' of yours") }
        return HTTPResponse(status: 204)
    }

    static func wire(_ key: AddKeyRecord) -> Wire.AddKey {
        Wire.AddKey(id: key.id, name: key.name, createdBy: key.createdBy, created: key.created)
    }

    /// `POST /v1/lists/{id}/inbox` with an add-only key: the text waits for a member's device.
    func putInInbox(_ request: HTTPRequest) throws -> HTTPResponse {
        let challenge = [("WWW-Authenticate", "Bearer")]
        guard let secret = request.bearerToken, secret.hasPrefix("bk_"), secret.utf8.count <= 80,
            let key = try store.addKey(hash: Passwords.tokenHash(secret))
        else { throw HTTPError(.unauthorized, "this route takes an add-only key that works", headers: challenge) }
        // A key reaches its own list only; another list does not exist for it.
        guard try listID(request) == key.list else { throw HTTPError.notFound("no such list") }
        let body = try JSONBody.decode(Wire.InboxText.self, from: request)
        let text = body.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw HTTPError.badRequest("'text' is empty", code: .invalidParameter) }
        guard inboxLimiter.take(key.id, now: configuration.monotonicClock()) else {
            throw HTTPError(
                .rateLimited, "this key put \(Self.inboxTextsPerKeyPerMinute) texts in the last minute; try again soon",
                headers: [("Retry-After", "60")])
        }
        let now = Int64(configuration.clock())
        guard
            try store.putInInbox(
                id: Secrets.randomHex(bytes: 8), list: key.list, name: key.name, text: text, now: now,
                maxWaiting: Self.maxInboxEntries)
        else {
            throw HTTPError(
                .rateLimited, "the list's inbox holds \(Self.maxInboxEntries) texts no device has filed yet",
                headers: [("Retry-After", "60")])
        }
        wakeWithInbox(key.list, at: now)
        return answer(["accepted": true], status: 202)
    }

    /// Ends the list's parked long-polls with how many texts wait, so an open device files them.
    func wakeWithInbox(_ list: ListID, at now: Int64) {
        Self.togetherChanged(
            list, at: now, watchers: watchers, store: store, configuration: configuration, times: together)
    }

    func inbox(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, _) = try membership(request)
        return answer(Wire.Inbox(entries: try store.inbox(of: list)))
    }

    /// Takes one text to file it: the first device that asks gets it, any other a 404.
    func takeFromInbox(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, role) = try membership(request)
        guard role.canPush else { throw HTTPError(.forbidden, "a viewer cannot file the list's inbox") }
        let id = request.pathParameters["entry"] ?? ""
        guard id.utf8.count <= 32, let entry = try store.takeFromInbox(id: id, of: list) else {
            throw HTTPError.notFound("the inbox has no text '\(id.prefix(32))' (another device may have filed it)")
        }
        return answer(entry)
    }
}

/// How many texts each add-only key put in the last minute: a window per key, bounded (the
/// oldest keys are forgotten past ``capacity``).
final class InboxLimiter: Sendable {
    private let windows = Mutex<[String: [UInt64]]>([:])
    let perMinute: Int
    static let capacity = 10_000

    init(perMinute: Int) { self.perMinute = perMinute }

    /// Counts one text for `key` at `now` (monotonic ms); false when it had `perMinute` already.
    func take(_ key: String, now: UInt64) -> Bool {
        windows.withLock { windows in
            var times = (windows[key] ?? []).filter { now < $0 + 60_000 }
            guard times.count < perMinute else {
                windows[key] = times
                return false
            }
            times.append(now)
            if windows[key] == nil, windows.count >= Self.capacity {
                windows = windows.filter { $0.value.contains { now < $0 + 60_000 } }
            }
            windows[key] = times
            return true
        }
    }
}
