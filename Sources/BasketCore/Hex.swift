/// Lowercase hexadecimal, the one encoding of ids, digests and secrets on the wire and on disk.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// 16 lowercase hex digits of `value`, leading zeros kept.
    public static func encode(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for i in 0..<16 {
                buffer[i] = digits[Int((value >> (60 - 4 * UInt64(i))) & 0xF)]
            }
            return 16
        }
    }

    /// Two lowercase hex digits per byte (the common case, without generic dispatch per byte:
    /// token hashes are written on every authenticated request).
    public static func encode(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (i, byte) in bytes.enumerated() {
                buffer[2 * i] = digits[Int(byte >> 4)]
                buffer[2 * i + 1] = digits[Int(byte & 0xF)]
            }
            return bytes.count * 2
        }
    }

    /// Two lowercase hex digits per byte.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of each byte as a hex digit (either case), or 0xFF.
    private static let nibbles: [UInt8] = (0...255).map { nibble(UInt8($0)) ?? 0xFF }

    /// The value of 1 to 16 hex digits (either case); nil when they are not. (The decoder reads
    /// four of these per operation: a table, not a switch per digit.)
    public static func decode(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        bytes.withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// The value of 1 to 16 hex digits (either case) in `digits`; nil when they are not.
    static func decode(buffer digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard digits.count <= 16, !digits.isEmpty else { return nil }
        return nibbles.withUnsafeBufferPointer { table in
            var value: UInt64 = 0
            var invalid: UInt8 = 0
            for byte in digits {
                let nibble = table[Int(byte)]
                invalid |= nibble & 0xF0
                value = value << 4 | UInt64(nibble & 0x0F)
            }
            return invalid == 0 ? value : nil
        }
    }

    /// The value of 1 to 16 hex digits (either case); nil when they are not.
    public static func decode(_ bytes: some Collection<UInt8>) -> UInt64? {
        guard bytes.count <= 16, !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard let nibble = nibble(byte) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }

    /// The bytes that an even number of hex digits (either case) spell; nil when `text` is not that.
    public static func bytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
