#if !canImport(CCrypto) && canImport(CryptoKit)
    import CommonCrypto
    import CryptoKit
    import Foundation

    /// The seam's functions on CryptoKit (and CommonCrypto for PBKDF2, which CryptoKit lacks): Apple
    /// platforms. The same bytes as OpenSSL.swift; Tests/PlatformCryptoTests pins both to the RFCs'
    /// vectors. (The server's P-256 for Web Push is OpenSSL's: the server runs on Linux.)
    enum Platform {
        static func randomBytes(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            guard count > 0 else { return bytes }
            let status = SecRandomCopyBytes(kSecRandomDefault, count, &bytes)
            precondition(status == errSecSuccess, "SecRandomCopyBytes failed")
            return bytes
        }

        static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

        static func hmacSHA256(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        }

        static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
            let derived = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: info, outputByteCount: length)
            return derived.withUnsafeBytes { Array($0) }
        }

        static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: length)
            let status = password.withUnsafeBufferPointer { pw in
                pw.withMemoryRebound(to: CChar.self) { chars in
                    CCKeyDerivationPBKDF(
                        CCPBKDFAlgorithm(kCCPBKDF2), chars.baseAddress, pw.count, salt, salt.count,
                        CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), UInt32(iterations), &output, length)
                }
            }
            precondition(status == kCCSuccess, "CCKeyDerivationPBKDF failed")
            return output
        }

        static func aesGCMSeal(
            _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
        ) throws -> [UInt8] {
            let box = try AES.GCM.seal(
                plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce),
                authenticating: associatedData)
            return Array(box.ciphertext) + Array(box.tag)
        }

        static func aesGCMOpen(
            _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
        ) throws -> [UInt8] {
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
                return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
            } catch {
                throw CryptoError.badMessage("its tag does not verify")
            }
        }

        /// CryptoKit keeps no context to reuse: `AESGCMKey` calls the one-shot functions.
        final class GCMContexts: Sendable {
            init?(key: [UInt8]) { return nil }
            func seal(_ plaintext: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] { [] }
            func open(_ sealed: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, associatedData: [UInt8]) throws -> [UInt8]
            {
                []
            }
        }

        static func x25519PublicKey(_ privateKey: [UInt8]) throws -> [UInt8] {
            guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey) else {
                throw CryptoError.badKey
            }
            return Array(key.publicKey.rawRepresentation)
        }

        static func x25519SharedSecret(_ privateKey: [UInt8], _ peerPublicKey: [UInt8]) throws -> [UInt8] {
            guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey),
                let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: peerPublicKey),
                let secret = try? key.sharedSecretFromKeyAgreement(with: peer)
            else { throw CryptoError.badKey }
            return secret.withUnsafeBytes { Array($0) }
        }
    }
#endif
