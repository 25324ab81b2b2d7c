import BasketCore
import Foundation
import PlatformCrypto
import Testing

@testable import BasketServer

/// Web Push's cryptography held to the standards' own example: RFC 8291 Appendix A gives the
/// keys, salt and secret of one message and the exact body the sender writes. (The values are
/// the RFC's, copied from its text: IETF, RFC 8291, "Message Encryption for Web Push".)
struct WebPushCryptoTests {
    enum RFC8291 {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let senderPublic =
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let receiverPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let receiverPublic =
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    static func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text)! }

    @Test func encryptingTheRFCsExampleGivesItsBodyByteForByte() throws {
        let sender = try P256Key(
            privateKey: Self.bytes(RFC8291.senderPrivate), publicKey: Self.bytes(RFC8291.senderPublic))
        let receiver = try WebPushMessage.Receiver(p256dh: RFC8291.receiverPublic, auth: RFC8291.auth)
        let body = try WebPushMessage.encrypt(
            Array(RFC8291.plaintext.utf8), for: receiver, senderKey: sender, salt: Self.bytes(RFC8291.salt))
        #expect(Base64URL.encode(body) == RFC8291.body)
    }

    @Test func decryptingTheRFCsBodyGivesItsPlaintext() throws {
        let receiver = try P256Key(
            privateKey: Self.bytes(RFC8291.receiverPrivate), publicKey: Self.bytes(RFC8291.receiverPublic))
        let plaintext = try WebPushMessage.decrypt(
            Self.bytes(RFC8291.body), receiverKey: receiver, authSecret: Self.bytes(RFC8291.auth))
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)
    }

    @Test func aFreshMessageReadsBackAndATamperedOneDoesNot() throws {
        let browser = try P256Key.generate()
        let auth = Secrets.randomBytes(16)
        let receiver = WebPushMessage.Receiver(publicKey: browser.publicKeyBytes, authSecret: auth)
        let payload = Array(#"{"kind":"added","n":5}"#.utf8)
        var body = try WebPushMessage.encrypt(payload, for: receiver)
        #expect(try WebPushMessage.decrypt(body, receiverKey: browser, authSecret: auth) == payload)
        // Two messages never share a salt or an ephemeral key.
        #expect(try WebPushMessage.encrypt(payload, for: receiver).prefix(86) != body.prefix(86))
        body[body.count - 20] ^= 1
        #expect(throws: CryptoError.self) { try WebPushMessage.decrypt(body, receiverKey: browser, authSecret: auth) }
        #expect(throws: CryptoError.self) {
            try WebPushMessage.decrypt(
                try WebPushMessage.encrypt(payload, for: receiver), receiverKey: browser,
                authSecret: Secrets.randomBytes(16))
        }
    }

    @Test func aKeyThatIsNotAPointOnTheCurveIsRefused() throws {
        var point = Self.bytes(RFC8291.receiverPublic)
        point[40] ^= 1
        #expect(throws: CryptoError.badKey) { try P256Key(publicKey: point) }
        #expect(throws: CryptoError.badKey) { try WebPushMessage.Receiver(p256dh: "not base64!", auth: RFC8291.auth) }
        #expect(throws: CryptoError.badKey) {
            try P256Key(privateKey: Self.bytes(RFC8291.senderPrivate), publicKey: Self.bytes(RFC8291.receiverPublic))
        }
    }

    @Test func aStoredKeyPairComesBackTheSame() throws {
        let key = try P256Key.generate()
        let again = try P256Key(privateKey: try #require(key.privateKeyBytes), publicKey: key.publicKeyBytes)
        #expect(again.publicKeyBytes == key.publicKeyBytes)
        #expect(try P256Key(publicKey: key.publicKeyBytes).privateKeyBytes == nil)
    }

    @Test func aVAPIDTokenVerifiesForItsAudienceOnlyAndUntilItExpires() throws {
        let key = try P256Key.generate()
        let header = try VAPID.authorization(
            audience: "https://push.example.net", subject: "mailto:ops@example.org", key: key, now: 1_000)
        #expect(header.hasPrefix("vapid t="))
        let publicKey = key.publicKeyBytes
        #expect(
            VAPID.verify(header, publicKey: publicKey, audience: "https://push.example.net", now: 1_000)
                == "mailto:ops@example.org")
        #expect(VAPID.verify(header, publicKey: publicKey, audience: "https://other.example", now: 1_000) == nil)
        #expect(
            VAPID.verify(header, publicKey: publicKey, audience: "https://push.example.net", now: 1_000 + 13 * 3600)
                == nil)
        #expect(
            VAPID.verify(
                header, publicKey: try P256Key.generate().publicKeyBytes, audience: "https://push.example.net",
                now: 1_000)
                == nil)
        #expect(
            VAPID.audience(of: URL(string: "https://Push.Example.net:8443/wpush/v2/abc")!)
                == "https://push.example.net:8443")
    }
}
