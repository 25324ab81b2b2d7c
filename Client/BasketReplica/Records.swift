import BasketCore

/// The compact binary form of register writes kept in the replica file: per item, one blob of
/// winning registers and one blob of every write ever seen (its history).
///
/// A record is: field code (1 byte), timestamp (8 bytes LE), replica (8 bytes LE), value tag
/// (0 null, 1 false, 2 true, 3 text), and for text a LEB128 length and the UTF-8 bytes.
enum Records {
    struct Entry: Hashable {
        var field: Field
        var register: Register
    }

    static func append(field: Field, register: Register, to out: inout [UInt8]) {
        out.append(field.code)
        appendLE(register.version.timestamp.rawValue, to: &out)
        appendLE(register.version.replica.rawValue, to: &out)
        switch register.value {
        case .null: out.append(0)
        case .bool(let b): out.append(b ? 2 : 1)
        case .text(let text):
            out.append(3)
            var count = UInt64(text.utf8.count)
            repeat {
                var byte = UInt8(count & 0x7F)
                count >>= 7
                if count != 0 { byte |= 0x80 }
                out.append(byte)
            } while count != 0
            out.append(contentsOf: text.utf8)
        }
    }

    private static func appendLE(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        for _ in 0..<8 {
            out.append(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    struct CorruptRecord: Error, CustomStringConvertible {
        var description: String { "the replica file holds a damaged register record" }
    }

    /// Calls `body` for every record in `bytes`.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (Field, Register) throws -> Void) throws {
        var i = 0
        let n = bytes.count
        func readLE() throws -> UInt64 {
            guard i + 8 <= n else { throw CorruptRecord() }
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
            i += 8
            return v
        }
        while i < n {
            guard let field = Field(code: bytes[i]) else { throw CorruptRecord() }
            i += 1
            let timestamp = try readLE()
            let replica = try readLE()
            guard i < n else { throw CorruptRecord() }
            let tag = bytes[i]
            i += 1
            let value: Value
            switch tag {
            case 0: value = .null
            case 1: value = .bool(false)
            case 2: value = .bool(true)
            case 3:
                var count = 0
                var shift = 0
                while true {
                    guard i < n, shift < 64 else { throw CorruptRecord() }
                    let byte = bytes[i]
                    i += 1
                    count |= Int(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { break }
                    shift += 7
                }
                guard count >= 0, i + count <= n else { throw CorruptRecord() }
                value = .text(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + count)]), as: UTF8.self))
                i += count
            default: throw CorruptRecord()
            }
            let version = Version(
                timestamp: HybridTimestamp(rawValue: timestamp), replica: ReplicaID(rawValue: replica))
            try body(field, Register(value: value, version: version))
        }
    }

    static func decode(_ bytes: [UInt8]) throws -> [Entry] {
        var entries: [Entry] = []
        try bytes.withUnsafeBytes { buffer in
            try forEach(in: buffer) { entries.append(Entry(field: $0, register: $1)) }
        }
        return entries
    }
}
