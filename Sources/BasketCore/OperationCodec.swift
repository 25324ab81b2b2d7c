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
/// ``encode(_:canonicalOrder:keys:)`` with `canonicalOrder` sorts them first, so a set of operations
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
    /// `keys` (an export file's only, never the network's) are the keys of encrypted lists, as
    /// the device keeps them: a `K` line each, after the header, in list order.
    public static func encode(_ operations: [Op], canonicalOrder: Bool = false, keys: [ListID: String] = [:])
        -> [UInt8]
    {
        let ops = canonicalOrder ? operations.sorted(by: canonicalLess) : operations
        var out = header
        out.reserveCapacity(header.count + ops.count * 90)
        for (list, text) in keys.sorted(by: { $0.key < $1.key }) {
            precondition(isKeysText(text.utf8), "keys text must be printable ASCII without spaces")
            out.append(contentsOf: Array("K ".utf8))
            appendHex(list.raw.high, to: &out)
            appendHex(list.raw.low, to: &out)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\n"))
        }
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
        appendLine(item: op.item, field: op.field, version: op.version, value: op.value, to: &out)
    }

    /// Appends the line of the operation writing `value` to `field` of `item` at `version`
    /// (without its list, with the newline): for a stored row that is not an ``Op``.
    public static func appendLine(item: ItemID, field: Field, version: Version, value: Value, to out: inout [UInt8]) {
        if item == .list {
            out.append(UInt8(ascii: "-"))
        } else {
            appendHex(item.raw.high, to: &out)
            appendHex(item.raw.low, to: &out)
        }
        out.append(tab)
        out.append(contentsOf: field.rawValue.utf8)
        out.append(tab)
        appendHex(version.timestamp.rawValue, to: &out)
        out.append(tab)
        appendHex(version.replica.rawValue, to: &out)
        out.append(tab)
        switch value {
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

    /// The longest keys text a `K` line may hold, in bytes.
    public static let maxKeysBytes = 64 * 1_024

    /// Whether `text` may stand in a `K` line: 1 to ``maxKeysBytes`` bytes of printable ASCII
    /// without spaces.
    static func isKeysText(_ text: some Collection<UInt8>) -> Bool {
        !text.isEmpty && text.count <= maxKeysBytes && text.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Decodes operations and validates each one (``Op/validate()``, or ``Op/validateSealed()``
    /// for an encrypted list's). A `K` line is refused: keys travel in export files only.
    /// - Throws: ``DecodeError`` naming the first bad line; nothing is returned then.
    public static func decode(_ bytes: [UInt8], sealed: Bool = false) throws(DecodeError) -> [Op] {
        try decodeAll(bytes, sealed: sealed, keys: false).operations
    }

    /// Decodes an export file: its operations, validated as ``decode(_:sealed:)`` does, and the
    /// keys of its encrypted lists (the `K` lines' texts, by list; one per list at most).
    /// - Throws: ``DecodeError`` naming the first bad line; nothing is returned then.
    public static func decodeFile(_ bytes: [UInt8]) throws(DecodeError) -> (
        operations: [Op], keys: [ListID: String]
    ) {
        try decodeAll(bytes, sealed: false, keys: true)
    }

    private static func decodeAll(_ bytes: [UInt8], sealed: Bool, keys: Bool) throws(DecodeError) -> (
        operations: [Op], keys: [ListID: String]
    ) {
        guard bytes.starts(with: header.dropLast()) else {
            throw DecodeError(line: 1, message: "not a Basket operations file (expected the header 'basket-ops 1')")
        }
        // Read in place: slices of the array would retain and release its buffer at every field.
        let decoded: Result<([Op], [ListID: String]), DecodeError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(DecodeError) {
                return .success(try decode(buffer: buffer, sealed: sealed, keys: keys))
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }

    private static func decode(buffer bytes: UnsafeBufferPointer<UInt8>, sealed: Bool, keys readKeys: Bool)
        throws(DecodeError) -> ([Op], [ListID: String])
    {
        var keys: [ListID: String] = [:]
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
            let line = UnsafeBufferPointer(rebasing: bytes[start..<stop])
            if line[0] == UInt8(ascii: "L") {
                guard line.count == 34, line[1] == UInt8(ascii: " "),
                    let high = Hex.decode(buffer: UnsafeBufferPointer(rebasing: line[2..<18])),
                    let low = Hex.decode(buffer: UnsafeBufferPointer(rebasing: line[18..<34]))
                else { throw DecodeError(line: lineNumber, message: "a list line is 'L' and 32 hex digits") }
                list = ListID(raw: ID128(high: high, low: low))
                continue
            }
            if line[0] == UInt8(ascii: "K") {
                guard readKeys else {
                    throw DecodeError(line: lineNumber, message: "a keys line belongs in an export file only")
                }
                guard line.count > 35, line[1] == UInt8(ascii: " "), line[34] == UInt8(ascii: " "),
                    let high = Hex.decode(buffer: UnsafeBufferPointer(rebasing: line[2..<18])),
                    let low = Hex.decode(buffer: UnsafeBufferPointer(rebasing: line[18..<34])),
                    isKeysText(UnsafeBufferPointer(rebasing: line[35...]))
                else {
                    throw DecodeError(
                        line: lineNumber,
                        message: "a keys line is 'K', 32 hex digits, a space and the keys (printable, at most 64 KiB)")
                }
                let owner = ListID(raw: ID128(high: high, low: low))
                guard keys[owner] == nil else {
                    throw DecodeError(line: lineNumber, message: "a second keys line for list \(owner)")
                }
                keys[owner] = String(decoding: UnsafeBufferPointer(rebasing: line[35...]), as: UTF8.self)
                continue
            }
            guard let list else {
                throw DecodeError(line: lineNumber, message: "an operation before any list line")
            }
            operations.append(try decodeOperation(line, list: list, lineNumber: lineNumber, sealed: sealed))
        }
        return (operations, keys)
    }

    /// Decodes and validates one operation's line of `list` (as ``appendLine(_:to:)`` wrote it;
    /// the newline may end it).
    /// - Throws: ``DecodeError`` (line 1) when it is not a valid operation.
    public static func decodeLine(_ line: [UInt8], list: ListID) throws(DecodeError) -> Op {
        let decoded: Result<Op, DecodeError> = line.withUnsafeBufferPointer { buffer in
            var bytes = buffer
            if bytes.last == UInt8(ascii: "\n") { bytes = UnsafeBufferPointer(rebasing: bytes.dropLast()) }
            do throws(DecodeError) {
                return .success(try decodeOperation(bytes, list: list, lineNumber: 1))
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }

    private static func decodeOperation(
        _ line: UnsafeBufferPointer<UInt8>, list: ListID, lineNumber: Int, sealed: Bool = false
    )
        throws(DecodeError) -> Op
    {
        func fail(_ message: String) -> DecodeError { DecodeError(line: lineNumber, message: message) }
        // The four tabs of the five fields; the fifth field (the value) may hold none.
        var tabs = (0, 0, 0, 0)
        var found = 0
        var i = 0
        while i < line.count && found < 4 {
            if line[i] == tab {
                switch found {
                case 0: tabs.0 = i
                case 1: tabs.1 = i
                case 2: tabs.2 = i
                default: tabs.3 = i
                }
                found += 1
            }
            i += 1
        }
        guard found == 4 else { throw fail("an operation has 5 tab-separated fields") }
        func field(_ from: Int, _ to: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: line[from..<to])
        }
        let itemField = field(0, tabs.0)
        let nameField = field(tabs.0 + 1, tabs.1)
        let timestampField = field(tabs.1 + 1, tabs.2)
        let replicaField = field(tabs.2 + 1, tabs.3)
        let raw = field(tabs.3 + 1, line.count)

        let item: ItemID
        if itemField.count == 1 && itemField[0] == UInt8(ascii: "-") {
            item = .list
        } else if itemField.count == 32,
            let high = Hex.decode(buffer: UnsafeBufferPointer(rebasing: itemField[0..<16])),
            let low = Hex.decode(buffer: UnsafeBufferPointer(rebasing: itemField[16..<32]))
        {
            item = ItemID(raw: ID128(high: high, low: low))
        } else {
            throw fail("bad item id")
        }
        guard let field = Field(rawValue: String(decoding: nameField, as: UTF8.self)) else {
            throw fail("unknown field '\(String(decoding: nameField, as: UTF8.self))'")
        }
        guard timestampField.count == 16, let timestamp = Hex.decode(buffer: timestampField) else {
            throw fail("bad timestamp")
        }
        guard replicaField.count == 16, let replica = Hex.decode(buffer: replicaField) else {
            throw fail("bad replica id")
        }
        let value: Value
        switch raw.first {
        case UInt8(ascii: "-") where raw.count == 1: value = .null
        case UInt8(ascii: "t") where raw.count == 1: value = .bool(true)
        case UInt8(ascii: "f") where raw.count == 1: value = .bool(false)
        case UInt8(ascii: "="):
            guard let text = unescape(UnsafeBufferPointer(rebasing: raw[1...])) else {
                throw fail("bad text value (invalid UTF-8 or escape)")
            }
            value = .text(text)
        default: throw fail("bad value")
        }
        let op = Op(
            list: list, item: item, field: field, value: value,
            version: Version(timestamp: HybridTimestamp(rawValue: timestamp), replica: ReplicaID(rawValue: replica)))
        do throws(Op.Problem) {
            if sealed { try op.validateSealed() } else { try op.validate() }
        } catch {
            throw fail(error.description)
        }
        return op
    }

    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
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
