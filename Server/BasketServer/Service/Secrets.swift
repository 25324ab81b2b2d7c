import BasketCore
import PlatformCrypto

/// Secrets for accounts, tokens and invites, through the platform's cryptography (PlatformCrypto).
enum Secrets {
    /// `count` cryptographically random bytes.
    static func randomBytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }

    /// `count` random bytes as hex: ids of tokens, invites and epochs.
    static func randomHex(bytes count: Int) -> String { Hex.encode(randomBytes(count)) }

    /// SHA-256 of the UTF-8 of `text` (the platform's, with the CPU's SHA instructions where it has them).
    static func sha256(_ text: String) -> [UInt8] { SHA256Digest.hash(Array(text.utf8)) }

    /// PBKDF2-HMAC-SHA256 of `password` with `salt`.
    static func pbkdf2SHA256(password: String, salt: [UInt8], iterations: Int, length: Int = 32) -> [UInt8] {
        PBKDF2.sha256(password: Array(password.utf8), salt: salt, iterations: iterations, length: length)
    }

    /// Compares two byte strings in time that does not depend on where they differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
