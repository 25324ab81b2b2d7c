/// SHA-256 (FIPS 180-4) in plain Swift, so the client modules build on every Swift platform
/// without OpenSSL. It hashes item ids (``ItemID/init(list:key:)``), a few dozen bytes each, and
/// the server's token lookups, one per authenticated request; tests check it byte for byte
/// against libcrypto on a random corpus.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    @inlinable
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(buffer: UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash(buffer: $0) }
    }

    /// The digest of contiguous bytes: whole blocks straight from the buffer, the tail padded in
    /// a block on the stack.
    @usableFromInline
    static func hash(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var state = State()
        let whole = buffer.count / 64 * 64
        var offset = 0
        while offset < whole {
            state.compress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]))
            offset += 64
        }
        // Padding: 0x80, zeros, then the message length in bits as a big-endian UInt64.
        let rest = buffer.count - whole
        let bitLength = UInt64(buffer.count) &* 8
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if rest > 0 {
                tail.baseAddress!.copyMemory(from: buffer.baseAddress! + whole, byteCount: rest)
            }
            tail[rest] = 0x80
            let blocks = rest < 56 ? 1 : 2
            for index in 0..<8 {
                tail[blocks * 64 - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))
            }
            for block in 0..<blocks {
                state.compress(UnsafeRawBufferPointer(rebasing: tail[(block * 64)..<(block * 64 + 64)]))
            }
        }
        return state.digest
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// The eight working words.
    @usableFromInline
    struct State {
        var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19

        @usableFromInline init() {}

        var digest: [UInt8] {
            [UInt8](unsafeUninitializedCapacity: 32) { out, count in
                for (index, word) in [h0, h1, h2, h3, h4, h5, h6, h7].enumerated() {
                    out[4 * index] = UInt8(truncatingIfNeeded: word >> 24)
                    out[4 * index + 1] = UInt8(truncatingIfNeeded: word >> 16)
                    out[4 * index + 2] = UInt8(truncatingIfNeeded: word >> 8)
                    out[4 * index + 3] = UInt8(truncatingIfNeeded: word)
                }
                count = 32
            }
        }

        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

        /// One 64-byte block into the state.
        mutating func compress(_ block: UnsafeRawBufferPointer) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for t in 0..<16 {
                    w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self))
                }
                for t in 16..<64 {
                    let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                    let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                    w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                SHA256.k.withUnsafeBufferPointer { k in
                    for t in 0..<64 {
                        let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                        let choose = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ choose &+ k[t] &+ w[t]
                        let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        (h, g, f, e) = (g, f, e, d &+ t1)
                        (d, c, b, a) = (c, b, a, t1 &+ s0 &+ majority)
                    }
                }
                h0 &+= a
                h1 &+= b
                h2 &+= c
                h3 &+= d
                h4 &+= e
                h5 &+= f
                h6 &+= g
                h7 &+= h
            }
        }
    }
}
