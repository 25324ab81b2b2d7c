import BasketCore
import PlatformCrypto

/// An account's secrets, derived on the device from the password (docs/encryption.md):
/// PBKDF2-HMAC-SHA-256 of the password, salted with the account's name, then HKDF splits it in
/// two. The **login secret** is what the device sends in place of the password, so the server
/// never sees the password; the **wrapping key** never leaves the device and opens the account's
/// private key. A recovery code opens that private key too.
public enum AccountKeys {
    /// PBKDF2's rounds: OWASP's figure for PBKDF2-HMAC-SHA-256 (600,000, as of 2023).
    public static let iterations = 600_000

    /// What a password gives: the login secret and the wrapping key, 32 bytes each.
    public struct Stretched: Sendable, Equatable {
        /// Sent to the server in place of the password (base64url), which hashes it again.
        public let login: [UInt8]
        /// Wraps the account's private key; never sent.
        public let wrap: [UInt8]

        /// The login secret as the server gets it in place of the password: base64url.
        public var loginText: String { Base64URL.encode(login) }
    }

    /// The login secret and the wrapping key of `password` for the account `account`.
    public static func stretch(password: String, account: String, iterations: Int = iterations) -> Stretched {
        var salt = Array("basket-account-v1".utf8)
        salt.append(0)
        salt += Array(account.utf8)
        let master = PBKDF2.sha256(password: Array(password.utf8), salt: salt, iterations: iterations)
        return Stretched(login: derive(master, "basket-login-v1"), wrap: derive(master, "basket-wrap-v1"))
    }

    static func derive(_ key: [UInt8], _ info: String, salt: [UInt8] = []) -> [UInt8] {
        // swift-format-ignore: NeverUseForceTry
        try! HKDF.sha256(key: key, salt: salt, info: Array(info.utf8), length: 32)
    }

    /// `secret` sealed under `key` (32 bytes) for `purpose` ("private-key" …): the text
    /// `w1.` base64url(nonce ‖ ciphertext ‖ tag). A random nonce unless a vector gives one.
    public static func wrap(_ secret: [UInt8], key: [UInt8], purpose: String, nonce: [UInt8]? = nil) -> String {
        let nonce = nonce ?? SecureRandom.bytes(12)
        // swift-format-ignore: NeverUseForceTry
        let sealed = try! AESGCM.seal(secret, key: key, nonce: nonce, associatedData: wrapData(purpose))
        return "w1." + Base64URL.encode(nonce + sealed)
    }

    /// The secret ``wrap(_:key:purpose:nonce:)`` sealed.
    /// - Throws: ``SealError/badKey`` when the text is not a wrapped secret, ``SealError/forged``
    ///   when `key` or `purpose` is not the one it was wrapped with.
    public static func unwrap(_ text: String, key: [UInt8], purpose: String) throws(SealError) -> [UInt8] {
        guard text.utf8.count <= 4_096, text.hasPrefix("w1."), let bytes = Base64URL.decode(text.dropFirst(3)),
            bytes.count >= 12 + 16
        else { throw .badKey }
        guard
            let secret = try? AESGCM.open(
                Array(bytes.dropFirst(12)), key: key, nonce: Array(bytes.prefix(12)), associatedData: wrapData(purpose))
        else { throw .forged }
        return secret
    }

    private static func wrapData(_ purpose: String) -> [UInt8] {
        Array("basket-wrap-v1".utf8) + [0] + Array(purpose.utf8)
    }

    /// Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or typed is not misread.
    static let base32 = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new recovery code: 128 random bits in 26 characters of base32, in groups of four or
    /// five ("7k2m-…"), shown once.
    public static func newRecoveryCode() -> String { recoveryCode(SecureRandom.bytes(16)) }

    /// The recovery code of `bytes` (16): for vectors.
    public static func recoveryCode(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16)
        var characters: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                characters.append(base32[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        characters.append(base32[Int(buffer << UInt32(5 - bits) & 31)])
        var text = ""
        for (index, character) in characters.enumerated() {
            if index > 0 && index % 4 == 0 && index < 24 { text += "-" }
            text.unicodeScalars.append(Unicode.Scalar(character))
        }
        return text
    }

    /// The 16 bytes of a recovery code as a person types it back: either case, with or without
    /// dashes and spaces, I and L read as 1, O as 0.
    /// - Throws: ``SealError/badKey`` when it is not 26 such characters.
    public static func recoveryBytes(_ code: String) throws(SealError) -> [UInt8] {
        var values: [UInt32] = []
        for character in code.lowercased().utf8 where character != 0x2d && character != 0x20 {
            let mapped: UInt8 =
                switch character {
                case 0x69, 0x6c: 0x31
                case 0x6f: 0x30
                default: character
                }
            guard let value = base32.firstIndex(of: mapped), values.count < 26 else { throw .badKey }
            values.append(UInt32(value))
        }
        guard values.count == 26, values[25] & 3 == 0 else { throw .badKey }
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(buffer >> UInt32(bits) & 0xff))
            }
        }
        return Array(bytes.prefix(16))
    }

    /// The key a recovery code wraps the private key with.
    public static func recoveryKey(_ code: String) throws(SealError) -> [UInt8] {
        derive(try recoveryBytes(code), "basket-recovery-v1")
    }

    /// What a recovery code signs in with when the password is forgotten (base64url of 32
    /// bytes): the server keeps its SHA-256. Another derivation of the code than its wrapping
    /// key, so the server that saw this learns nothing of that.
    public static func recoverySecret(_ code: String) throws(SealError) -> String {
        Base64URL.encode(derive(try recoveryBytes(code), "basket-recovery-login-v1"))
    }

    /// What wraps the private key: its purpose in the wrap's associated data, under the
    /// password's key and under the recovery code's alike.
    public static let privateKeyPurpose = "private-key"
}
