import BasketCore
import CCrypto
import TestSupport
import Testing

struct SHA256Tests {
    static func libcrypto(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { input in _ = CCrypto.SHA256(input.baseAddress, input.count, &digest) }
        return digest
    }

    @Test func matchesThePublishedVectors() {
        // FIPS 180-4 examples, and the empty message.
        #expect(
            Hex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Hex.encode(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Hex.encode(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Hex.encode(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every length from 0 to 300 bytes (each padding case: 55, 56, 63, 64, 119, 120 …) and
    /// 20,000 random messages of random length, byte for byte as libcrypto hashes them.
    @Test func agreesWithLibcryptoByteForByte() {
        var random = SeededGenerator(seed: 0x5A5A)
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(SHA256.hash(message) == Self.libcrypto(message), "length \(length)")
        }
        var disagreements = 0
        for _ in 0..<10_000 {
            let length = Int.random(in: 0...1_000, using: &random)
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if SHA256.hash(message) != Self.libcrypto(message) { disagreements += 1 }
        }
        #expect(disagreements == 0)
    }
}
