import BasketCore
import Testing

/// Hex digits both ways: the array and slice fast paths agree with the general ones.
struct HexTests {
    @Test func slicesDecodeAsAnyCollectionDoes() {
        let cases = [
            "0", "f", "F", "09afAF", "ffffffffffffffff", "0123456789abcdef", "FEDCBA9876543210", "g", "0x1", "12 4",
            "", "00000000000000000", "-1", "ａ",
        ]
        for text in cases {
            let bytes = Array(text.utf8)
            let general = Hex.decode(bytes.lazy.map { $0 })
            #expect(Hex.decode(bytes[...]) == general, "\(text)")
        }
        #expect(Hex.decode(Array("ffffffffffffffff".utf8)[...]) == UInt64.max)
        #expect(Hex.decode(Array("1A".utf8)[...]) == 26)
        #expect(Hex.decode(Array("1g".utf8)[...]) == nil)
        // Every byte value alone: a digit or nil, never a wrong value.
        for byte in UInt8.min...UInt8.max {
            let expected: UInt64? =
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(byte - UInt8(ascii: "A") + 10)
                default: nil
                }
            #expect(Hex.decode([byte][...]) == expected, "byte \(byte)")
        }
    }

    @Test func byteArraysEncodeAsAnyCollectionDoes() {
        let bytes: [UInt8] = [0, 1, 0x0f, 0x10, 0x7f, 0x80, 0xfe, 0xff]
        #expect(Hex.encode(bytes) == "00010f107f80feff")
        #expect(Hex.encode(bytes) == Hex.encode(bytes.lazy.map { $0 }))
        #expect(Hex.encode([UInt8]()) == "")
    }
}
