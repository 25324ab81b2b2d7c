import BasketCore
import BasketServer
import Foundation
import HTTPServer
import PlatformCrypto
import Synchronization
import Testing

/// A push service of the tests' own on 127.0.0.1: it takes every POST to `/push/{name}` as a
/// push service takes a message (201), or answers `410 Gone` for names in ``gone``, and keeps
/// what came for the test to read: the headers and the encrypted body. Each browser the test
/// plays has a fresh P-256 key pair and auth secret (``Browser``), as a real one makes at
/// `pushManager.subscribe`, and reads its messages as a browser does (RFC 8291), after checking
/// their VAPID token as a push service does (RFC 8292).
final class PushReceiver: Sendable {
    struct Received: Sendable {
        var name: String
        var headers: [String: String]
        var body: [UInt8]
    }

    /// A browser's side of a subscription.
    struct Browser: Sendable {
        let name: String
        let key: P256Key
        let auth: [UInt8]

        init(_ name: String) throws {
            self.name = name
            key = try P256Key.generate()
            auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        }

        /// What `PushSubscription.toJSON()` gives, for `POST /v1/push/subscriptions`.
        func subscription(at receiver: PushReceiver, lists: [String], kinds: [String]) -> [String: Any] {
            [
                "endpoint": receiver.endpoint(name), "expirationTime": NSNull(),
                "keys": ["p256dh": Base64URL.encode(key.publicKeyBytes), "auth": Base64URL.encode(auth)],
                "lists": lists, "kinds": kinds,
            ]
        }
    }

    /// What came, and the names answered 410.
    private final class Inbox: Sendable {
        let received = Mutex<[Received]>([])
        let goneNames = Mutex<Set<String>>([])
    }
    private let inbox = Inbox()
    private let listener: HTTPListener

    init() throws {
        let inbox = self.inbox
        let router = Router { r in
            r.on("POST", "/push/{name}") { request in
                let name = request.pathParameters["name"] ?? ""
                inbox.received.withLock {
                    $0.append(Received(name: name, headers: request.headers, body: request.body))
                }
                return HTTPResponse(status: inbox.goneNames.withLock { $0.contains(name) } ? 410 : 201)
            }
        }
        listener = HTTPListener(configuration: .init(host: "127.0.0.1", port: 0), handler: router.handle)
        try listener.start()
    }

    deinit { listener.stop() }

    /// The origin messages are posted to (a VAPID token's audience).
    var origin: String { "http://127.0.0.1:\(listener.port)" }
    /// The prefix a test server is allowed to post to (`--push-allow-endpoint`).
    var allowedPrefix: String { origin + "/push/" }
    func endpoint(_ name: String) -> String { allowedPrefix + name }

    /// Answer 410 to the browser named `name` from now on.
    func gone(_ name: String) { inbox.goneNames.withLock { _ = $0.insert(name) } }

    /// What came for `name` so far.
    func messages(for name: String) -> [Received] { inbox.received.withLock { $0.filter { $0.name == name } } }

    /// Waits until `count` messages came for `name` (at most `seconds`), and returns them all.
    func waitFor(_ count: Int, for name: String, seconds: Double = 60) throws -> [Received] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let got = messages(for: name)
            if got.count >= count { return got }
            usleep(20_000)
        }
        throw Failure(description: "\(messages(for: name).count) of \(count) push messages came for \(name)")
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The message as `browser` reads it, after the checks a push service makes: a VAPID token for
    /// this origin signed by `serverKey`, the `aes128gcm` coding, a TTL.
    func read(_ message: Received, as browser: Browser, serverKey: [UInt8]) throws -> Wire.PushMessage {
        let subject = VAPID.verify(
            message.headers["authorization"] ?? "", publicKey: serverKey, audience: origin,
            now: Int64(Date().timeIntervalSince1970))
        #expect(subject != nil, "the VAPID token does not verify: \(message.headers["authorization"] ?? "none")")
        #expect(message.headers["content-encoding"] == "aes128gcm")
        #expect(Int(message.headers["ttl"] ?? "") ?? 0 > 0)
        #expect(["normal", "high"].contains(message.headers["urgency"]))
        let plaintext = try WebPushMessage.decrypt(message.body, receiverKey: browser.key, authSecret: browser.auth)
        return try JSONDecoder().decode(Wire.PushMessage.self, from: Data(plaintext))
    }
}
