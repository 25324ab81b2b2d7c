import BasketCore
import Foundation
public import PlatformCrypto

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188):
/// what the server sends a subscription, and what a browser does to read it (the tests' push
/// receiver reads with it; both directions are held to RFC 8291's Appendix A).
///
/// One record: `salt (16) || record size (4) || key id length (1) || the server's ephemeral
/// public key (65) || AES-128-GCM(plaintext || 0x02 || padding)`.
public enum WebPushMessage {
    /// What a subscription gives (a browser's `PushSubscription.toJSON().keys`): its public key
    /// (`p256dh`, 65 bytes uncompressed) and its authentication secret (`auth`, 16 bytes).
    public struct Receiver: Sendable {
        /// The browser's P-256 public key, 65 bytes uncompressed.
        public var publicKey: [UInt8]
        /// The browser's authentication secret, 16 bytes.
        public var authSecret: [UInt8]

        /// A receiver from its raw keys.
        public init(publicKey: [UInt8], authSecret: [UInt8]) {
            self.publicKey = publicKey
            self.authSecret = authSecret
        }

        /// A receiver from the base64url strings a browser hands out.
        /// - Throws: `CryptoError/badKey` when either is not base64url of the right length.
        public init(p256dh: String, auth: String) throws {
            guard let key = Base64URL.decode(p256dh), key.count == 65, let secret = Base64URL.decode(auth),
                secret.count == 16
            else { throw CryptoError.badKey }
            self.init(publicKey: key, authSecret: secret)
        }
    }

    /// The record size written in the header (RFC 8291 §4 expects 4096 at most in one record).
    static let recordSize = 4096
    /// Bytes the header and the tag add to a plaintext (16 + 4 + 1 + 65, 16), and the delimiter.
    public static let overhead = 86 + 16 + 1
    /// The most plaintext one message may carry: push services need take no more than 4,096
    /// bytes of body (RFC 8030 §7.2).
    public static let maxPlaintext = 4096 - overhead

    /// `plaintext` encrypted for `receiver`, with a fresh ephemeral key pair and salt unless the
    /// caller gives them (the test vectors do).
    public static func encrypt(
        _ plaintext: [UInt8], for receiver: Receiver, senderKey: P256Key? = nil, salt: [UInt8]? = nil
    ) throws -> [UInt8] {
        guard plaintext.count <= maxPlaintext else { throw CryptoError.badMessage("longer than one push can carry") }
        let sender = try senderKey ?? P256Key.generate()
        let salt = salt ?? Secrets.randomBytes(16)
        let peer = try P256Key(publicKey: receiver.publicKey)
        let senderPublic = sender.publicKeyBytes
        let (key, nonce) = try contentKeys(
            secret: sender.sharedSecret(with: peer), authSecret: receiver.authSecret,
            receiverPublic: receiver.publicKey,
            senderPublic: senderPublic, salt: salt)
        let sealed = try AES128GCM.seal(plaintext + [2], key: key, nonce: nonce)
        return salt + bigEndian(UInt32(recordSize)) + [UInt8(senderPublic.count)] + senderPublic + sealed
    }

    /// The plaintext of `body`, read with the receiver's key pair and authentication secret.
    /// - Throws: `CryptoError/badMessage(_:)` when the body is not one `aes128gcm` record for
    ///   this receiver.
    public static func decrypt(_ body: [UInt8], receiverKey: P256Key, authSecret: [UInt8]) throws -> [UInt8] {
        guard body.count > 21 else { throw CryptoError.badMessage("shorter than its header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idLength = Int(body[20])
        guard idLength == 65, body.count >= 21 + idLength + 17 else { throw CryptoError.badMessage("a bad header") }
        guard body.count - 21 - idLength <= recordSize else { throw CryptoError.badMessage("more than one record") }
        let senderPublic = Array(body[21..<(21 + idLength)])
        let sender = try P256Key(publicKey: senderPublic)
        let (key, nonce) = try contentKeys(
            secret: receiverKey.sharedSecret(with: sender), authSecret: authSecret,
            receiverPublic: receiverKey.publicKeyBytes, senderPublic: senderPublic, salt: salt)
        let padded = try AES128GCM.open(Array(body[(21 + idLength)...]), key: key, nonce: nonce)
        // The last record ends with 0x02, then zeros of padding.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else {
            throw CryptoError.badMessage("no last-record delimiter")
        }
        return Array(padded[..<delimiter])
    }

    /// The content-encryption key and nonce of RFC 8291 §3.4 and RFC 8188 §2.2–2.3.
    static func contentKeys(
        secret: [UInt8], authSecret: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]
    ) throws -> (key: [UInt8], nonce: [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let inputKey = try HKDF.sha256(key: secret, salt: authSecret, info: keyInfo, length: 32)
        let key = try HKDF.sha256(
            key: inputKey, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0], length: 16)
        let nonce = try HKDF.sha256(
            key: inputKey, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0], length: 12)
        return (key, nonce)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}
