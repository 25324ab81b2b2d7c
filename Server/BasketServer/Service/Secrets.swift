import BasketCore
internal import CCrypto

/// Secrets for accounts, tokens and invites, through libcrypto: server-only, so the client
/// modules need no OpenSSL.
enum Secrets {
    /// `count` cryptographically random bytes.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "RAND_bytes failed")
        return bytes
    }

    /// `count` random bytes as hex: ids of tokens, invites and epochs.
    static func randomHex(bytes count: Int) -> String { Hex.encode(randomBytes(count)) }

    /// SHA-256 of the UTF-8 of `text` (libcrypto's, with the CPU's SHA instructions where it has them).
    static func sha256(_ text: String) -> [UInt8] {
        var text = text
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = text.withUTF8 { bytes in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, nil, EVP_sha256(), nil)
            }
        }
        precondition(ok == 1, "EVP_Digest failed")
        return digest
    }

    /// PBKDF2-HMAC-SHA256 of `password` with `salt`.
    static func pbkdf2SHA256(password: String, salt: [UInt8], iterations: Int, length: Int = 32) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let passwordBytes = Array(password.utf8)
        let ok = passwordBytes.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                output.withUnsafeMutableBufferPointer { out in
                    pw.withMemoryRebound(to: CChar.self) { pwChars in
                        PKCS5_PBKDF2_HMAC(
                            pwChars.baseAddress, Int32(pw.count), s.baseAddress, Int32(s.count), Int32(iterations),
                            EVP_sha256(), Int32(length), out.baseAddress)
                    }
                }
            }
        }
        precondition(ok == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }

    /// Compares two byte strings in time that does not depend on where they differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
