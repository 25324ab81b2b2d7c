import Dispatch
import PlatformCrypto
import Synchronization
import Testing

/// The seam gives the bytes the standards fix: known-answer vectors from the RFCs and from the
/// GCM specification, the same on every platform's implementation.
struct PlatformCryptoTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
    }

    @Test func hmacMatchesRFC4231() {
        // Test cases 1 and 2.
        #expect(
            Self.hex(HMACSHA256.code(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            Self.hex(HMACSHA256.code(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hkdfMatchesRFC5869() throws {
        // Test case 1.
        let okm = try HKDF.sha256(
            key: [UInt8](repeating: 0x0b, count: 22), salt: Self.bytes("000102030405060708090a0b0c"),
            info: Self.bytes("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        #expect(
            Self.hex(okm)
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        #expect(throws: CryptoError.self) { try HKDF.sha256(key: [1], salt: [], info: [], length: 255 * 32 + 1) }
    }

    @Test func pbkdf2MatchesTheKnownVectors() {
        let password = Array("password".utf8)
        let salt = Array("salt".utf8)
        #expect(
            Self.hex(PBKDF2.sha256(password: password, salt: salt, iterations: 1))
                == "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
        #expect(
            Self.hex(PBKDF2.sha256(password: password, salt: salt, iterations: 4096))
                == "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a")
    }

    @Test func aesGCMMatchesTheGCMSpecification() throws {
        // Test case 14 (AES-256, zero key, one zero block) and 16 (with associated data).
        #expect(
            Self.hex(
                try AESGCM.seal(
                    [UInt8](repeating: 0, count: 16), key: [UInt8](repeating: 0, count: 32),
                    nonce: [UInt8](repeating: 0, count: 12)))
                == "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919")
        let key = Self.bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = Self.bytes("cafebabefacedbaddecaf888")
        let plaintext = Self.bytes(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
        )
        let associated = Self.bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: associated)
        #expect(
            Self.hex(sealed)
                == "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                + "76fc6ece0f4e1768cddf8853bb2d551b")
        #expect(try AESGCM.open(sealed, key: key, nonce: nonce, associatedData: associated) == plaintext)
        // Other associated data, a flipped bit, a short message: refused.
        #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: key, nonce: nonce, associatedData: [1]) }
        var flipped = sealed
        flipped[3] ^= 1
        #expect(throws: CryptoError.self) {
            try AESGCM.open(flipped, key: key, nonce: nonce, associatedData: associated)
        }
        #expect(throws: CryptoError.self) { try AESGCM.open([1, 2, 3], key: key, nonce: nonce) }
        // The empty plaintext seals to its tag alone and opens.
        let empty = try AESGCM.seal([], key: key, nonce: nonce)
        #expect(empty.count == 16)
        #expect(try AESGCM.open(empty, key: key, nonce: nonce) == [])
    }

    @Test func aKeyForManyMessagesGivesTheOneShotsBytesFromManyThreads() throws {
        let key = Self.bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let reused = AESGCMKey(key)
        let messages = (0..<200).map { n in (0..<(n % 70)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n) } }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: messages.count) { n in
            let nonce = (0..<12).map { UInt8(truncatingIfNeeded: $0 &+ n) }
            let data = [UInt8(n % 5)]
            guard let sealed = try? reused.seal(messages[n], nonce: nonce, associatedData: data),
                sealed == (try? AESGCM.seal(messages[n], key: key, nonce: nonce, associatedData: data)),
                (try? reused.open(sealed[...], nonce: nonce[...], associatedData: data)) == messages[n],
                (try? reused.open(sealed[...], nonce: nonce[...], associatedData: [9])) == nil
            else {
                failures.withLock { $0 += 1 }
                return
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(throws: CryptoError.self) { try reused.open([1, 2], nonce: [UInt8](repeating: 0, count: 12)[...]) }
    }

    @Test func x25519MatchesRFC7748() throws {
        // §6.1: Alice's and Bob's pairs and their shared secret.
        let alice = try X25519KeyPair(
            privateKey: Self.bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try X25519KeyPair(
            privateKey: Self.bytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(Self.hex(alice.publicKey) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(Self.hex(bob.publicKey) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
        #expect(Self.hex(try alice.sharedSecret(with: bob.publicKey)) == shared)
        #expect(Self.hex(try bob.sharedSecret(with: alice.publicKey)) == shared)
        // A low-order point (zero) and a key of the wrong length are refused.
        #expect(throws: CryptoError.badKey) { try alice.sharedSecret(with: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.badKey) { try alice.sharedSecret(with: [1, 2, 3]) }
        #expect(throws: CryptoError.badKey) { try X25519KeyPair(privateKey: [1]) }
        // Fresh pairs differ and agree.
        let one = X25519KeyPair.generate()
        let two = X25519KeyPair.generate()
        #expect(one.privateKey != two.privateKey)
        #expect(try one.sharedSecret(with: two.publicKey) == (try two.sharedSecret(with: one.publicKey)))
    }

    @Test func randomBytesAreFreshAndSHA256IsTheStandardOne() {
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(
            Self.hex(SHA256Digest.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
