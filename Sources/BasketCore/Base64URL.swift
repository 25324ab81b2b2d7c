/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), as Web Push, JWTs and sealed
/// values write bytes in text. Pure Swift, so both sides and every platform read it alike.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0...count { out.append(alphabet[Int(group >> (18 - 6 * UInt32(position)) & 63)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one base64url character; nil for any other byte.
    static func sextet(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x41...0x5a: UInt32(byte - 0x41)
        case 0x61...0x7a: UInt32(byte - 0x61 + 26)
        case 0x30...0x39: UInt32(byte - 0x30 + 52)
        case 0x2d: 62
        case 0x5f: 63
        default: nil
        }
    }

    /// Each byte's value in the alphabet; 255 for a byte that is not in it.
    private static let values: [UInt8] = (0...255).map { UInt8(sextet(UInt8($0)) ?? 255) }

    /// The bytes of `text` (padded with `=` or not); nil when it is not base64url, or has bits
    /// left over that a canonical encoder would not write.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(buffer: $0) }
    }

    /// How many bytes `buffer` decodes to, without decoding it; nil when ``decode(buffer:)``
    /// would refuse it.
    public static func decodedCount(buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        var count = buffer.count
        for _ in 0..<2 where count > 0 && buffer[count - 1] == 0x3d { count -= 1 }
        guard count % 4 != 1 else { return nil }
        return values.withUnsafeBufferPointer { table -> Int? in
            var last: UInt8 = 0
            for index in 0..<count {
                last = table[Int(buffer[index])]
                if last == 255 { return nil }
            }
            // The bits the last character carries past the final byte must be zero.
            let spare: UInt8 = count % 4 == 2 ? 0x0f : count % 4 == 3 ? 0x03 : 0
            guard last & spare == 0 else { return nil }
            return count * 3 / 4
        }
    }

    /// ``decode(_:)`` of UTF-8 bytes, read in place.
    public static func decode(buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = buffer.count
        for _ in 0..<2 where count > 0 && buffer[count - 1] == 0x3d { count -= 1 }
        guard count % 4 != 1 else { return nil }
        return values.withUnsafeBufferPointer { table -> [UInt8]? in
            var failed = false
            var group: UInt32 = 0
            var bits = 0
            let out = [UInt8](unsafeUninitializedCapacity: count * 3 / 4) { output, written in
                written = 0
                for index in 0..<count {
                    let value = table[Int(buffer[index])]
                    if value == 255 {
                        failed = true
                        return
                    }
                    group = group << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[written] = UInt8(truncatingIfNeeded: group >> UInt32(bits))
                        written += 1
                    }
                }
            }
            guard !failed, group & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
            return out
        }
    }
}
