// The one seam through which Basket uses cryptography: the platform's libraries, never a
// primitive of its own. On Linux OpenSSL's libcrypto (OpenSSL.swift), on Apple platforms
// CryptoKit and CommonCrypto (CryptoKit.swift); both give these same functions the same bytes,
// which Tests/PlatformCryptoTests checks against the RFCs' and NIST's vectors.

/// Why a cryptographic step failed: a key or message that is not what it claims to be, or the
/// library refusing (its own words).
public enum CryptoError: Error, Equatable, Sendable {
    /// The bytes are not a key of the kind asked for (not a point on the curve, or the wrong length).
    case badKey
    /// An encrypted message that is malformed, or whose tag does not verify.
    case badMessage(String)
    /// The library failed at `step`.
    case library(String)
}

/// Bytes from the platform's cryptographically secure generator.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] { Platform.randomBytes(count) }
}

/// SHA-256, the platform's (with the CPU's SHA instructions where it has them).
public enum SHA256Digest {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { Platform.sha256(bytes) }
}

/// HMAC (RFC 2104) with SHA-256.
public enum HMACSHA256 {
    /// The 32-byte code of `message` under `key`.
    public static func code(_ message: [UInt8], key: [UInt8]) -> [UInt8] { Platform.hmacSHA256(message, key: key) }
}

/// HKDF (RFC 5869) with SHA-256.
public enum HKDF {
    /// Extract from `key` with `salt`, then expand with `info` to `length` bytes (at most 8,160).
    public static func sha256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
        guard length > 0, length <= 255 * 32 else { throw CryptoError.library("HKDF length \(length)") }
        return try Platform.hkdfSHA256(key: key, salt: salt, info: info, length: length)
    }
}

/// PBKDF2 (RFC 8018) with HMAC-SHA-256.
public enum PBKDF2 {
    /// `length` bytes derived from `password` and `salt` in `iterations` rounds.
    public static func sha256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 32) -> [UInt8] {
        precondition(iterations > 0 && iterations <= 100_000_000 && length > 0 && length <= 1024)
        return Platform.pbkdf2SHA256(password: password, salt: salt, iterations: iterations, length: length)
    }
}

/// AES-GCM (NIST SP 800-38D) with a 12-byte nonce and a 16-byte tag: AES-128 or AES-256 by the
/// key's length.
public enum AESGCM {
    /// `plaintext` sealed under `key` (16 or 32 bytes) and `nonce` (12), with `associatedData`
    /// authenticated but not encrypted: the ciphertext, then the tag.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        precondition(
            (key.count == 16 || key.count == 32) && nonce.count == 12, "AES-GCM: a 16- or 32-byte key, a 12-byte nonce")
        return try Platform.aesGCMSeal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// The plaintext of `sealed` (ciphertext, then a 16-byte tag) under `key`, `nonce` and
    /// `associatedData`.
    /// - Throws: ``CryptoError/badMessage(_:)`` when the tag does not verify.
    public static func open(
        _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        precondition(
            (key.count == 16 || key.count == 32) && nonce.count == 12, "AES-GCM: a 16- or 32-byte key, a 12-byte nonce")
        guard sealed.count >= 16 else { throw CryptoError.badMessage("shorter than its tag") }
        return try Platform.aesGCMOpen(sealed, key: key, nonce: nonce, associatedData: associatedData)
    }
}

/// AES-128-GCM without associated data: RFC 8291's content encryption (Web Push).
public enum AES128GCM {
    /// `plaintext` sealed under `key` (16 bytes) and `nonce` (12): the ciphertext, then the tag.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        precondition(key.count == 16, "AES-128-GCM takes a 16-byte key")
        return try AESGCM.seal(plaintext, key: key, nonce: nonce)
    }

    /// The plaintext of `sealed` (ciphertext, then a 16-byte tag) under `key` and `nonce`.
    /// - Throws: ``CryptoError/badMessage(_:)`` when the tag does not verify.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        precondition(key.count == 16, "AES-128-GCM takes a 16-byte key")
        return try AESGCM.open(sealed, key: key, nonce: nonce)
    }
}

/// An X25519 (RFC 7748) key pair: 32 bytes of private key, 32 of public.
public struct X25519KeyPair: Sendable {
    /// The private key as RFC 7748 writes it (the platform clamps it).
    public let privateKey: [UInt8]
    /// The public key, the u-coordinate of the private key's multiple of the base point.
    public let publicKey: [UInt8]

    /// The pair of `privateKey`, a stored key or a test vector's.
    /// - Throws: ``CryptoError/badKey`` when it is not 32 bytes.
    public init(privateKey: [UInt8]) throws {
        guard privateKey.count == 32 else { throw CryptoError.badKey }
        self.privateKey = privateKey
        publicKey = try Platform.x25519PublicKey(privateKey)
    }

    /// A fresh key pair.
    public static func generate() -> X25519KeyPair {
        // Any 32 bytes are a private key (RFC 7748 §5: clamped when used).
        // swift-format-ignore: NeverUseForceTry
        try! X25519KeyPair(privateKey: SecureRandom.bytes(32))
    }

    /// The 32-byte shared secret of this key and a peer's public key.
    /// - Throws: ``CryptoError/badKey`` when the peer's key is not 32 bytes or is a low-order
    ///   point (the secret would be all zeros: RFC 7748 §6.1's check).
    public func sharedSecret(with peerPublicKey: [UInt8]) throws -> [UInt8] {
        guard peerPublicKey.count == 32 else { throw CryptoError.badKey }
        let secret = try Platform.x25519SharedSecret(privateKey, peerPublicKey)
        guard secret.contains(where: { $0 != 0 }) else { throw CryptoError.badKey }
        return secret
    }
}

/// An AES-GCM key for many messages: on Linux its cipher contexts are made once (the key
/// schedule computed once) and each message sets only its nonce, which makes a short message
/// several times cheaper than ``AESGCM``'s one-shot calls. Safe to use from several threads
/// (one message at a time). The same bytes as ``AESGCM``.
public final class AESGCMKey: Sendable {
    private let key: [UInt8]
    private let contexts: Platform.GCMContexts?

    /// A key of 16 or 32 bytes.
    public init(_ key: [UInt8]) {
        precondition(key.count == 16 || key.count == 32, "AES-GCM: a 16- or 32-byte key")
        self.key = key
        contexts = Platform.GCMContexts(key: key)
    }

    /// ``AESGCM/seal(_:key:nonce:associatedData:)`` under this key.
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        precondition(nonce.count == 12, "AES-GCM: a 12-byte nonce")
        if let contexts { return try contexts.seal(plaintext, nonce: nonce, associatedData: associatedData) }
        return try AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// ``AESGCM/open(_:key:nonce:associatedData:)`` under this key.
    /// - Throws: ``CryptoError/badMessage(_:)`` when the tag does not verify.
    public func open(_ sealed: ArraySlice<UInt8>, nonce: ArraySlice<UInt8>, associatedData: [UInt8] = []) throws
        -> [UInt8]
    {
        precondition(nonce.count == 12, "AES-GCM: a 12-byte nonce")
        guard sealed.count >= 16 else { throw CryptoError.badMessage("shorter than its tag") }
        if let contexts { return try contexts.open(sealed, nonce: nonce, associatedData: associatedData) }
        return try AESGCM.open(Array(sealed), key: key, nonce: Array(nonce), associatedData: associatedData)
    }
}
