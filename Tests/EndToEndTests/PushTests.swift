import BasketCore
import BasketReplica
import BasketSeal
import BasketServer
import Foundation
import PlatformCrypto
import TestServers
import TestSupport
import Testing

/// Web Push end to end: real `basket` processes change a shared list on a real server, which
/// signs (VAPID), encrypts (RFC 8291) and posts messages to a push service of the test's own on
/// 127.0.0.1 (``PushReceiver``), where each message is checked and read as a browser would. On
/// SQLite, and on two instances over PostgreSQL in the PostgreSQL pass.
@Suite(.serialized)
struct PushTests {
    let root = TemporaryDirectory("push")

    func json(_ answer: RawHTTP.Answer) -> [String: Any] { answer.json }

    func subscribe(
        _ device: Device, _ browser: PushReceiver.Browser, on server: ServerProcess, receiver: PushReceiver,
        lists: [String], kinds: [String] = ["added"]
    ) throws -> RawHTTP.Answer {
        try RawHTTP.request(
            port: server.port, "POST", "/v1/push/subscriptions",
            headers: ["Authorization": "Bearer \(try device.token())"],
            json: browser.subscription(at: receiver, lists: lists, kinds: kinds))
    }

    /// Bob adds milk: Anna's two browsers and Carol's each get one message, signed and encrypted
    /// for them, that says who added what (by id). Then Anna's second device signs out and Carol
    /// is removed from the list; Bob's five quick adds come to Anna's browser told together, and
    /// nothing more reaches the signed-out device or the removed member.
    @Test func bobsAddIsPushedToEachSubscribedBrowserAndQuickAddsAreToldTogether() throws {
        let receiver = try PushReceiver()
        let server = try ServerProcess(
            dataDirectory: root.file("server"),
            arguments: ["--push-allow-endpoint", receiver.allowedPrefix, "--push-interval", "8"])
        let anna = try Device.signedUp("anna", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        let carol = try Device.signedUp("carol", on: server, in: root)
        let annasTablet = Device(root, "anna-tablet")
        try annasTablet.ok("remote", "set", server.url)
        try annasTablet.ok("login", "anna", "--password-stdin", stdin: "anna-password\n")
        // Plain: the message's items are read here (an encrypted list's: below).
        try anna.ok("list", "new", "Family", "--unencrypted")
        try anna.share(with: bob)
        try anna.share(with: carol)
        try annasTablet.ok("sync")
        let list = try #require(try anna.listing().list?.id)

        let key = try RawHTTP.request(
            port: server.port, "GET", "/v1/push/key", headers: ["Authorization": "Bearer \(try anna.token())"])
        #expect(key.status == 200)
        let serverKey = try #require(Base64URL.decode(key.json["publicKey"] as? String ?? ""))
        #expect(serverKey.count == 65 && serverKey[0] == 4)
        // A stranger learns nothing: the key is for signed-in devices.
        #expect(try RawHTTP.request(port: server.port, "GET", "/v1/push/key").status == 401)

        let phone = try PushReceiver.Browser("anna-phone")
        let tablet = try PushReceiver.Browser("anna-tablet")
        let carols = try PushReceiver.Browser("carol")
        let bobs = try PushReceiver.Browser("bob")
        for (device, browser) in [(anna, phone), (annasTablet, tablet), (carol, carols), (bob, bobs)] {
            let made = try subscribe(device, browser, on: server, receiver: receiver, lists: [list])
            #expect(made.status == 201, "\(made.json)")
            #expect(made.json["lists"] as? [String] == [list])
        }

        try bob.ok("add", "milk")
        let milkID = try #require(try bob.listing().items.first { $0.name == "milk" }?.id)
        for browser in [phone, tablet, carols] {
            let first = try receiver.waitFor(1, for: browser.name)
            let message = try receiver.read(first[0], as: browser, serverKey: serverKey)
            #expect(message.list.description == list)
            #expect(
                message.events == [
                    Wire.PushMessage.Event(kind: .added, who: "bob", count: 1, items: [ItemID(hex: milkID)!])
                ]
            )
        }

        // The tablet signs out; Carol is removed. Bob adds five things quickly.
        try annasTablet.ok("logout")
        try anna.ok("members", "rm", "carol", "--yes")
        for name in ["bread", "eggs", "butter", "jam", "tea"] { try bob.ok("add", name) }
        // Told together: at most two messages (on two instances, each tells what it took in),
        // whose counts add up to five.
        var told = 0
        var messages = 1
        while told < 5 {
            messages += 1
            let got = try receiver.waitFor(messages, for: phone.name)
            let message = try receiver.read(got[messages - 1], as: phone, serverKey: serverKey)
            #expect(message.events.map(\.kind) == [.added] && message.events[0].who == "bob")
            told += message.events.reduce(0) { $0 + $1.count }
        }
        #expect(told == 5)
        #expect(messages - 1 <= (server.instances > 1 ? 2 : 1), "five quick adds came in \(messages - 1) messages")
        // Bob heard nothing of his own adds; the signed-out tablet and the removed member heard
        // nothing after the first. (Their messages of a round go out with Anna's phone's.)
        #expect(receiver.messages(for: bobs.name).isEmpty)
        #expect(receiver.messages(for: tablet.name).count == 1)
        #expect(receiver.messages(for: carols.name).count == 1)
        let listed = try RawHTTP.request(
            port: server.port, "GET", "/v1/push/subscriptions",
            headers: ["Authorization": "Bearer \(try carol.token())"])
        #expect((listed.json["subscriptions"] as? [[String: Any]])?.first?["lists"] as? [String] == [])
    }

    /// An encrypted list: the server cannot read an add, yet tells of it (an item whose name and
    /// `deleted` came in one push), and the message carries the name sealed as pushed, which the
    /// list's keys open on the phone and nothing else does.
    @Test func anEncryptedListsAddIsPushedWithItsNameSealed() throws {
        let receiver = try PushReceiver()
        let server = try ServerProcess(
            dataDirectory: root.file("server"), arguments: ["--push-allow-endpoint", receiver.allowedPrefix])
        let anna = try Device.signedUp("anna", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try anna.ok("list", "new", "Family", "--encrypted")
        try anna.share(with: bob)
        let list = try #require(try anna.listing().list?.id)
        let key = try RawHTTP.request(
            port: server.port, "GET", "/v1/push/key", headers: ["Authorization": "Bearer \(try anna.token())"])
        let serverKey = try #require(Base64URL.decode(key.json["publicKey"] as? String ?? ""))
        let phone = try PushReceiver.Browser("anna-phone")
        #expect(try subscribe(anna, phone, on: server, receiver: receiver, lists: [list]).status == 201)

        try bob.ok("add", "Secret cake")
        let cake = try #require(try bob.listing().items.first { $0.name == "Secret cake" }?.id)
        let got = try receiver.waitFor(1, for: phone.name)
        let message = try receiver.read(got[0], as: phone, serverKey: serverKey)
        let event = try #require(message.events.first)
        #expect(event.kind == .added && event.who == "bob" && event.count == 1 && event.items == [ItemID(hex: cake)!])
        let text = try #require(event.ops)
        #expect(!text.contains("Secret cake"))
        let sealed = try OperationCodec.decode(Array(text.utf8), sealed: true)
        #expect(sealed.count == 1 && sealed[0].field == .name && sealed[0].item == ItemID(hex: cake)!)
        let keyring = SealKeyring()
        var configuration = Replica.Configuration()
        configuration.keyring = keyring
        let replica = try Replica(path: anna.directory + "/basket.sqlite", configuration: configuration)
        let listID = try #require(ListID(hex: list))
        let keys = try #require(keyring.keys(of: listID))
        #expect(try keys.open(sealed: sealed[0]).value == .text("Secret cake"))
        _ = replica
    }

    /// Endpoints the server will not post to are refused when subscribing, and nothing is sent
    /// (tests send nothing beyond 127.0.0.0/8: these are loopback addresses outside the allowed
    /// prefix). A push service's 410 ends the subscription; a subscription can be ended by its
    /// account and nobody else's.
    @Test func privateEndpointsAreRefusedAndGoneOrDeletedSubscriptionsEnd() throws {
        let receiver = try PushReceiver()
        let server = try ServerProcess(
            dataDirectory: root.file("refusals"), arguments: ["--push-allow-endpoint", receiver.allowedPrefix])
        let dana = try Device.signedUp("dana", on: server, in: root)
        let eve = try Device.signedUp("eve", on: server, in: root)
        try dana.ok("list", "new", "Home")
        try dana.share(with: eve)
        let list = try #require(try dana.listing().list?.id)
        let browser = try PushReceiver.Browser("dana")
        let auth = ["Authorization": "Bearer \(try dana.token())"]
        var body = browser.subscription(at: receiver, lists: [list], kinds: ["added"])
        for endpoint in [
            "http://127.0.0.2:\(receiver.origin.split(separator: ":").last!)/push/dana",  // http, outside the prefix
            "https://127.0.0.1:9/push/dana",  // https, but a loopback address
            "https://10.1.2.3/push", "https://[::1]/push", "https://localhost/push", "https://169.254.169.254/latest",
            "ftp://push.example.net/x", "https://user:pw@push.example.net/x", "not a url",
        ] {
            body["endpoint"] = endpoint
            let refused = try RawHTTP.request(
                port: server.port, "POST", "/v1/push/subscriptions", headers: auth, json: body)
            #expect(refused.status == 400 && refused.error == "invalid_endpoint", "\(endpoint): \(refused.json)")
        }
        body["endpoint"] = receiver.endpoint("dana")
        body["keys"] = ["p256dh": "AAAA", "auth": Base64URL.encode(browser.auth)]
        let badKey = try RawHTTP.request(port: server.port, "POST", "/v1/push/subscriptions", headers: auth, json: body)
        #expect(badKey.status == 400 && badKey.error == "invalid_keys")
        body["keys"] = ["p256dh": Base64URL.encode(browser.key.publicKeyBytes), "auth": Base64URL.encode(browser.auth)]
        body["kinds"] = ["added", "gossip"]
        #expect(
            try RawHTTP.request(port: server.port, "POST", "/v1/push/subscriptions", headers: auth, json: body).status
                == 400)
        body["kinds"] = ["added"]
        let made = try RawHTTP.request(port: server.port, "POST", "/v1/push/subscriptions", headers: auth, json: body)
        #expect(made.status == 201)
        let id = try #require(made.json["id"] as? String)

        // Eve cannot end Dana's subscription; the push service's 410 does.
        let eves = try RawHTTP.request(
            port: server.port, "DELETE", "/v1/push/subscriptions/\(id)",
            headers: ["Authorization": "Bearer \(try eve.token())"])
        #expect(eves.status == 404)
        receiver.gone("dana")
        try eve.ok("add", "milk")
        _ = try receiver.waitFor(1, for: "dana")
        var left = -1
        for _ in 0..<500 {
            let listed = try RawHTTP.request(port: server.port, "GET", "/v1/push/subscriptions", headers: auth)
            left = (listed.json["subscriptions"] as? [Any])?.count ?? -1
            if left == 0 { break }
            usleep(20_000)
        }
        #expect(left == 0, "a subscription its push service said is gone is still there")
        // Made again, and ended by its account.
        let again = try RawHTTP.request(port: server.port, "POST", "/v1/push/subscriptions", headers: auth, json: body)
        let againID = try #require(again.json["id"] as? String)
        #expect(
            try RawHTTP.request(port: server.port, "DELETE", "/v1/push/subscriptions/\(againID)", headers: auth).status
                == 204)
        #expect(
            try RawHTTP.request(port: server.port, "DELETE", "/v1/push/subscriptions/\(againID)", headers: auth).status
                == 404)
        #expect(receiver.messages(for: "dana").count == 1)
    }

    /// The VAPID key pair is made when the server starts and kept in the store: the same after a
    /// restart; `rotate-push-key` replaces it and ends every subscription (made for the old one).
    @Test func theKeyOutlivesARestartAndARotationEndsEverySubscription() throws {
        let receiver = try PushReceiver()
        let server = try ServerProcess(
            dataDirectory: root.file("rotation"), arguments: ["--push-allow-endpoint", receiver.allowedPrefix])
        let gina = try Device.signedUp("gina", on: server, in: root)
        try gina.ok("list", "new", "Home")
        let list = try #require(try gina.listing().list?.id)
        func key() throws -> String {
            try #require(
                try RawHTTP.request(
                    port: server.port, "GET", "/v1/push/key", headers: ["Authorization": "Bearer \(try gina.token())"]
                ).json["publicKey"] as? String)
        }
        let first = try key()
        let browser = try PushReceiver.Browser("gina")
        #expect(try subscribe(gina, browser, on: server, receiver: receiver, lists: [list]).status == 201)
        server.stop()
        try server.start()
        #expect(try key() == first)
        server.stop()
        let rotated = try server.command("rotate-push-key")
        #expect(rotated.status == 0 && rotated.stdout.contains("1 push subscriptions ended"), "\(rotated.stdout)")
        try server.start()
        #expect(try key() != first)
        let listed = try RawHTTP.request(
            port: server.port, "GET", "/v1/push/subscriptions", headers: ["Authorization": "Bearer \(try gina.token())"]
        )
        #expect((listed.json["subscriptions"] as? [Any])?.isEmpty == true)
    }
}
