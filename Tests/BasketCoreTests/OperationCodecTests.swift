import BasketCore
import Foundation
import TestSupport
import Testing

struct OperationCodecTests {
    let list = ListID(raw: ID128(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210))

    func sample() -> [Op] {
        let milk = ItemID(list: list, key: "milk")
        func v(_ ms: UInt64, _ r: UInt64) -> Version {
            Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: UInt16(ms % 3)), replica: ReplicaID(rawValue: r))
        }
        return [
            Op(list: list, item: .list, field: .title, value: .text("Groceries"), version: v(1, 1)),
            Op(list: list, item: milk, field: .name, value: .text("Milk"), version: v(2, 1)),
            Op(list: list, item: milk, field: .checked, value: .bool(true), version: v(3, 2)),
            Op(list: list, item: milk, field: .deleted, value: .bool(false), version: v(4, 2)),
            Op(
                list: list, item: milk, field: .note,
                value: .text("quote \" back \\ slash é ✓ (no tab, newline or CR: control characters are refused)"),
                version: v(5, 3)),
            Op(list: list, item: milk, field: .quantity, value: .null, version: v(6, 3)),
        ]
    }

    @Test func roundTripsEveryKindOfValue() throws {
        let ops = sample()
        #expect(try OperationCodec.decode(OperationCodec.encode(ops)) == ops)
    }

    @Test func oneLineDecodesAloneAndIsValidatedAsInAFile() throws {
        for op in sample() {
            var line: [UInt8] = []
            OperationCodec.appendLine(op, to: &line)
            #expect(try OperationCodec.decodeLine(line, list: list) == op)
            #expect(try OperationCodec.decodeLine(Array(line.dropLast()), list: list) == op)
        }
        // A line that would not be taken from a file is not taken alone.
        var bad: [UInt8] = []
        OperationCodec.appendLine(
            Op(
                list: list, item: .list, field: .title, value: .text("x"),
                version: Version(timestamp: .zero, replica: ReplicaID(rawValue: 0))),
            to: &bad)
        #expect(throws: OperationCodec.DecodeError.self) { try OperationCodec.decodeLine(bad, list: list) }
        #expect(throws: OperationCodec.DecodeError.self) { try OperationCodec.decodeLine([], list: list) }
        #expect(throws: OperationCodec.DecodeError.self) {
            try OperationCodec.decodeLine(Array("-\ttitle\tzz\t01\t=x\n".utf8), list: list)
        }
    }

    @Test func encodingIsDeterministicInCanonicalOrder() {
        var rng = SeededGenerator(seed: 1)
        let ops = sample()
        let reference = OperationCodec.encode(ops, canonicalOrder: true)
        for _ in 0..<20 {
            #expect(OperationCodec.encode(ops.shuffled(using: &rng), canonicalOrder: true) == reference)
        }
        let text = String(decoding: reference, as: UTF8.self)
        #expect(text.hasPrefix("basket-ops 1\nL 0123456789abcdeffedcba9876543210\n-\ttitle\t"))
        #expect(text.contains("back \\\\ slash"))  // a backslash is escaped
    }

    /// The bytes of the encoding are pinned: operations built here encode to the literal text of
    /// Tests/Vectors/core-v1.json and decode from it; every vector there and the example in
    /// docs/encoding.md encode again to the same bytes, with the item ids the rule gives.
    @Test func theEncodingIsPinnedToLiteralBytes() throws {
        let list = try #require(ListID(hex: "0123456789abcdef0123456789abcdef"))
        let milk = ItemID(list: list, key: "milk")
        let version = { (ms: UInt64, counter: UInt16) in
            Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: counter),
                replica: ReplicaID(rawValue: 0x68b3_eb9b_131c_cfd4))
        }
        let ops = [
            Op(list: list, item: .list, field: .title, value: .text("Family"), version: version(1_764_425_961_065, 0)),
            Op(list: list, item: milk, field: .name, value: .text("Milk"), version: version(1_764_425_961_067, 0)),
            Op(list: list, item: milk, field: .checked, value: .bool(false), version: version(1_764_425_961_067, 1)),
            Op(
                list: list, item: milk, field: .note, value: .text("back \\ slash"),
                version: version(1_764_425_961_068, 0)),
            Op(list: list, item: milk, field: .quantity, value: .null, version: version(1_764_425_961_068, 1)),
        ]
        // The same operations as the conformance vectors' first encoding, byte for byte.
        let expected = try #require(try ConformanceVectors.load().encodings.first?.text)
        #expect(
            String(decoding: OperationCodec.encode(ops.reversed(), canonicalOrder: true), as: UTF8.self) == expected)
        #expect(try OperationCodec.decode(Array(expected.utf8)) == ops)

        for vector in try ConformanceVectors.load().encodings {
            let decoded = try OperationCodec.decode(Array(vector.text.utf8))
            #expect(
                String(decoding: OperationCodec.encode(decoded, canonicalOrder: true), as: UTF8.self) == vector.text)
        }

        // The documentation's example.
        let doc = try String(
            contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../docs/encoding.md").standardized.path, encoding: .utf8)
        let example = try #require(doc.components(separatedBy: "```\n").dropFirst().first)
        let decoded = try OperationCodec.decode(Array(example.utf8))
        #expect(String(decoding: OperationCodec.encode(decoded, canonicalOrder: true), as: UTF8.self) == example)
        let name = try #require(decoded.first { $0.field == .name })
        #expect(name.item == ItemID(list: name.list, key: ItemKey.normalize(name.value.textValue ?? "")))
    }

    @Test func badInputNamesTheLine() throws {
        func decode(_ text: String) -> OperationCodec.DecodeError? {
            do {
                _ = try OperationCodec.decode(Array(text.utf8))
                return nil
            } catch {
                return error
            }
        }
        #expect(decode("hello\n")?.line == 1)
        #expect(decode("basket-ops 2\n")?.line == 1)
        let good = String(decoding: OperationCodec.encode(sample()), as: UTF8.self)
        var lines = good.split(separator: "\n").map(String.init)
        lines[4] = lines[4].replacingOccurrences(of: "\tchecked\t", with: "\tbogus\t")
        #expect(decode(lines.joined(separator: "\n"))?.line == 5)
        #expect(decode("basket-ops 1\n0123\tname\t0\t0\t=x\n")?.message.contains("list") == true)
        #expect(
            decode(good.replacingOccurrences(of: "\tt\n", with: "\t=yes\n"))?.message.contains("cannot hold") == true)
        #expect(decode(good.replacingOccurrences(of: "=Milk", with: "=Mi\\q"))?.message.contains("escape") == true)
        #expect(try OperationCodec.decode(Array((good + "\n\n").utf8)).count == 6)
    }

    @Test func anExportFileCarriesKeysTheNetworksEncodingRefuses() throws {
        let other = ListID(raw: ID128(high: 1, low: 2))
        let keys = [list: "K1.abc_-", other: "K1.xyz"]
        let bytes = OperationCodec.encode(sample(), canonicalOrder: true, keys: keys)
        let text = String(decoding: bytes, as: UTF8.self)
        // After the header, in list order, whatever order the dictionary keeps.
        #expect(text.hasPrefix("basket-ops 1\nK \(other) K1.xyz\nK \(list) K1.abc_-\nL \(list)\n"))
        let file = try OperationCodec.decodeFile(bytes)
        #expect(file.keys == keys)
        #expect(file.operations == sample().sorted(by: OperationCodec.canonicalLess))
        // The network's decoding (pages, pushes) never takes keys.
        #expect {
            try OperationCodec.decode(bytes)
        } throws: { error in
            (error as? OperationCodec.DecodeError).map { $0.line == 2 && $0.message.contains("export file only") }
                == true
        }
        func fileError(_ line: String) -> String? {
            do {
                _ = try OperationCodec.decodeFile(Array("basket-ops 1\n\(line)\n".utf8))
                return nil
            } catch {
                return error.message
            }
        }
        #expect(fileError("K \(list) K1.ok") == nil)
        #expect(fileError("K \(list)") != nil)
        #expect(fileError("K \(list) has space") != nil)
        #expect(fileError("K \(list) caf\u{E9}") != nil)
        #expect(fileError("K 0123 K1.short-id") != nil)
        #expect(fileError("K \(list) " + String(repeating: "a", count: OperationCodec.maxKeysBytes + 1)) != nil)
        #expect(fileError("K \(list) K1.a\nK \(list) K1.b")?.contains("second keys line") == true)
    }

    @Test func invalidUTF8InATextValueIsRefused() {
        var bytes = OperationCodec.encode(sample())
        let index = bytes.firstIndex(of: UInt8(ascii: "G"))!  // "Groceries"
        bytes[index] = 0xFF
        #expect(throws: OperationCodec.DecodeError.self) { try OperationCodec.decode(bytes) }
    }
}
