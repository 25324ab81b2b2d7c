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

    /// The bytes of `text` (padded with `=` or not); nil when it is not base64url, or has bits
    /// left over that a canonical encoder would not write.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var characters = Array(text.utf8)
        for _ in 0..<2 where characters.last == 0x3d { characters.removeLast() }
        guard characters.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = sextet(character) else { return nil }
            group = group << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(group >> UInt32(bits) & 0xff))
            }
        }
        guard group & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
