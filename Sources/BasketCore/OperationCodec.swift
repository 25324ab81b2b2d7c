/// The deterministic, versioned text encoding of operations, used by export files and the sync
/// protocol. UTF-8, one operation per line, grouped under the list they belong to:
///
/// ```
/// basket-ops 1
/// L 0f1e…(32 hex digits: the list id)
/// 9a8b…(32 hex: item id, or - for the list)<TAB>field<TAB>timestamp (16 hex)<TAB>replica (16 hex)<TAB>value
/// ```
///
/// A value is `-` (null), `t` / `f` (booleans) or `=` followed by the text with `\\`, `\t`, `\n`
/// and `\r` escaped. The same operations in the same order always encode to the same bytes;
/// ``encode(_:canonicalOrder:)`` with `canonicalOrder` sorts them first, so a set of operations
/// has exactly one encoding.
public enum OperationCodec {
    /// The format version, written in the header line.
    public static let version = 1
    static let header = Array("basket-ops \(version)\n".utf8)

    /// Why an encoding cannot be decoded, and on which line.
    public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        /// 1-based line number of the problem.
        public let line: Int
        /// What is wrong with the line.
        public let message: String

        public var description: String { "line \(line): \(message)" }
    }

    /// Encodes operations; with `canonicalOrder` they are sorted by list, version, item and field.
    public static func encode(_ operations: [Op], canonicalOrder: Bool = false) -> [UInt8] {
        let ops = canonicalOrder ? operations.sorted(by: canonicalLess) : operations
        var out = header
        out.reserveCapacity(header.count + ops.count * 90)
        var currentList: ListID?
        for op in ops {
            if op.list != currentList {
                out.append(UInt8(ascii: "L"))
                out.append(UInt8(ascii: " "))
                appendHex(op.list.raw.high, to: &out)
                appendHex(op.list.raw.low, to: &out)
                out.append(UInt8(ascii: "\n"))
                currentList = op.list
            }
            appendLine(op, to: &out)
        }
        return out
    }

    /// Appends one operation's line (without its list, with the newline) to `out`.
    public static func appendLine(_ op: Op, to out: inout [UInt8]) {
        if op.item == .list {
            out.append(UInt8(ascii: "-"))
        } else {
            appendHex(op.item.raw.high, to: &out)
            appendHex(op.item.raw.low, to: &out)
        }
        out.append(tab)
        out.append(contentsOf: op.field.rawValue.utf8)
        out.append(tab)
        appendHex(op.version.timestamp.rawValue, to: &out)
        out.append(tab)
        appendHex(op.version.replica.rawValue, to: &out)
        out.append(tab)
        switch op.value {
        case .null: out.append(UInt8(ascii: "-"))
        case .bool(let b): out.append(b ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case .text(let text):
            out.append(UInt8(ascii: "="))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): out.append(contentsOf: [backslash, backslash])
                case UInt8(ascii: "\t"): out.append(contentsOf: [backslash, UInt8(ascii: "t")])
                case UInt8(ascii: "\n"): out.append(contentsOf: [backslash, UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): out.append(contentsOf: [backslash, UInt8(ascii: "r")])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// The header and list line that start an encoding of operations of `list`; append lines
    /// from ``appendLine(_:to:)`` after it.
    public static func header(for list: ListID) -> [UInt8] {
        var out = header
        out.append(UInt8(ascii: "L"))
        out.append(UInt8(ascii: " "))
        appendHex(list.raw.high, to: &out)
        appendHex(list.raw.low, to: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// The canonical order: list, version, item, field.
    public static func canonicalLess(_ a: Op, _ b: Op) -> Bool {
        if a.list != b.list { return a.list < b.list }
        if a.version != b.version { return a.version < b.version }
        if a.item != b.item { return a.item < b.item }
        return a.field < b.field
    }

    /// Decodes operations and validates each one (``Op/validate()``).
    /// - Throws: ``DecodeError`` naming the first bad line; nothing is returned then.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> [Op] {
        guard bytes.starts(with: header.dropLast()) else {
            throw DecodeError(line: 1, message: "not a Basket operations file (expected the header 'basket-ops 1')")
        }
        var operations: [Op] = []
        operations.reserveCapacity(bytes.count / 80)
        var list: ListID?
        var lineNumber = 0
        var start = 0
        let end = bytes.count
        while start < end {
            var stop = start
            while stop < end && bytes[stop] != UInt8(ascii: "\n") { stop += 1 }
            lineNumber += 1
            defer { start = stop + 1 }
            if lineNumber == 1 {
                if stop - start != header.count - 1 {
                    throw DecodeError(
                        line: 1, message: "unsupported format version (this reader knows version \(version))")
                }
                continue
            }
            if stop == start { continue }
            let line = bytes[start..<stop]
            if line.first == UInt8(ascii: "L") {
                guard line.count == 34, line[start + 1] == UInt8(ascii: " "),
                    let id = ID128(hex: String(decoding: line.dropFirst(2), as: UTF8.self))
                else { throw DecodeError(line: lineNumber, message: "a list line is 'L' and 32 hex digits") }
                list = ListID(raw: id)
                continue
            }
            guard let list else {
                throw DecodeError(line: lineNumber, message: "an operation before any list line")
            }
            operations.append(try decodeOperation(line, list: list, lineNumber: lineNumber))
        }
        return operations
    }

    private static func decodeOperation(_ line: ArraySlice<UInt8>, list: ListID, lineNumber: Int) throws(DecodeError)
        -> Op
    {
        func fail(_ message: String) -> DecodeError { DecodeError(line: lineNumber, message: message) }
        var fields: [ArraySlice<UInt8>] = []
        fields.reserveCapacity(5)
        var fieldStart = line.startIndex
        for i in line.indices where line[i] == tab && fields.count < 4 {
            fields.append(line[fieldStart..<i])
            fieldStart = i + 1
        }
        fields.append(line[fieldStart..<line.endIndex])
        guard fields.count == 5 else { throw fail("an operation has 5 tab-separated fields") }

        let item: ItemID
        if fields[0].count == 1 && fields[0].first == UInt8(ascii: "-") {
            item = .list
        } else if fields[0].count == 32, let high = Hex.decode(fields[0].prefix(16)),
            let low = Hex.decode(fields[0].suffix(16))
        {
            item = ItemID(raw: ID128(high: high, low: low))
        } else {
            throw fail("bad item id")
        }
        guard let field = Field(rawValue: String(decoding: fields[1], as: UTF8.self)) else {
            throw fail("unknown field '\(String(decoding: fields[1], as: UTF8.self))'")
        }
        guard fields[2].count == 16, let timestamp = Hex.decode(fields[2]) else { throw fail("bad timestamp") }
        guard fields[3].count == 16, let replica = Hex.decode(fields[3]) else { throw fail("bad replica id") }
        let value: Value
        let raw = fields[4]
        switch raw.first {
        case UInt8(ascii: "-") where raw.count == 1: value = .null
        case UInt8(ascii: "t") where raw.count == 1: value = .bool(true)
        case UInt8(ascii: "f") where raw.count == 1: value = .bool(false)
        case UInt8(ascii: "="):
            guard let text = unescape(raw.dropFirst()) else { throw fail("bad text value (invalid UTF-8 or escape)") }
            value = .text(text)
        default: throw fail("bad value")
        }
        let op = Op(
            list: list, item: item, field: field, value: value,
            version: Version(timestamp: HybridTimestamp(rawValue: timestamp), replica: ReplicaID(rawValue: replica)))
        do throws(Op.Problem) {
            try op.validate()
        } catch {
            throw fail(error.description)
        }
        return op
    }

    private static func unescape(_ raw: ArraySlice<UInt8>) -> String? {
        guard raw.contains(backslash) else { return String(validating: raw, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var escaping = false
        for byte in raw {
            if escaping {
                switch byte {
                case backslash: out.append(backslash)
                case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
                default: return nil
                }
                escaping = false
            } else if byte == backslash {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        if escaping { return nil }
        return String(validating: out, as: UTF8.self)
    }

    private static let tab = UInt8(ascii: "\t")
    private static let backslash = UInt8(ascii: "\\")
    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func appendHex(_ value: UInt64, to out: inout [UInt8]) {
        var shift: UInt64 = 60
        for _ in 0..<16 {
            out.append(hexDigits[Int((value >> shift) & 0xF)])
            shift &-= 4
        }
    }
}
