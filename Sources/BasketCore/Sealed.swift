/// The text form of a value sealed for an end-to-end encrypted list, and everything about it that
/// needs no key: what a server checks, and the bytes a client seals (docs/encryption.md).
///
/// A sealed value is `s1.` epoch `.` base64url(nonce ‖ ciphertext ‖ tag): the epoch of the
/// list's key it was sealed under (decimal), a 12-byte nonce, the AES-256-GCM ciphertext of the
/// padded plaintext and its 16-byte tag. Every register of an encrypted list holds one, the
/// flags and cleared values too, so a server sees their sizes in buckets and nothing else.
public enum Sealed {
    /// What every sealed value starts with: the version of this format.
    public static let prefix = "s1."
    /// The most epochs a list may have (a removal or a departure makes one).
    public static let maxEpoch: UInt32 = 999_999
    /// The nonce's and the tag's bytes around the ciphertext.
    public static let overhead = 12 + 16

    /// The plaintext of `value`: a kind byte (0 null, 1 false, 2 true, 3 text), the text's
    /// UTF-8, then `0x80` and zeros to ``paddedLength(_:)``, so "milk" and "gluten-free oat
    /// milk" seal to the same size.
    public static func plaintext(_ value: Value) -> [UInt8] {
        var bytes: [UInt8]
        switch value {
        case .null: bytes = [0]
        case .bool(let flag): bytes = [flag ? 2 : 1]
        case .text(let text): bytes = [3] + Array(text.utf8)
        }
        let length = paddedLength(bytes.count)
        bytes.append(0x80)
        bytes.append(contentsOf: repeatElement(0, count: length - bytes.count))
        return bytes
    }

    /// The value of a plaintext ``plaintext(_:)`` made; nil when it is not one (a kind unknown,
    /// text that is not UTF-8, padding that is not `0x80` then zeros, or not a padded length).
    public static func value(ofPlaintext bytes: [UInt8]) -> Value? {
        guard let end = bytes.lastIndex(where: { $0 != 0 }), bytes[end] == 0x80, end >= 1,
            paddedLength(end) == bytes.count
        else { return nil }
        switch (bytes[0], end) {
        case (0, 1): return .null
        case (1, 1): return .bool(false)
        case (2, 1): return .bool(true)
        case (3, _):
            guard let text = String(validating: bytes[1..<end], as: UTF8.self) else { return nil }
            return .text(text)
        default: return nil
        }
    }

    /// The padded length of a plaintext of `count` bytes (its terminator included): 32 bytes at
    /// least, then powers of two up to 512, then multiples of 512.
    public static func paddedLength(_ count: Int) -> Int {
        let needed = count + 1
        if needed <= 32 { return 32 }
        if needed <= 512 {
            var length = 64
            while length < needed { length *= 2 }
            return length
        }
        return (needed + 511) / 512 * 512
    }

    /// The longest sealed text a register of `field` may hold: its longest value, padded and sealed.
    public static func maxTextBytes(for field: Field) -> Int {
        let payload = overhead + paddedLength(1 + field.maxBytes)
        return prefix.utf8.count + String(maxEpoch).utf8.count + 1 + (payload * 4 + 2) / 3
    }

    /// The text of a sealed `payload` (nonce, ciphertext, tag) under key epoch `epoch`.
    public static func text(epoch: UInt32, payload: [UInt8]) -> String {
        prefix + String(epoch) + "." + Base64URL.encode(payload)
    }

    /// The epoch and payload of a sealed text; nil when it is not one (a server's check, before
    /// any key).
    public static func parse(_ text: String) -> (epoch: UInt32, payload: [UInt8])? {
        var text = text
        return text.withUTF8 { bytes -> (UInt32, [UInt8])? in
            guard let (epoch, start) = header(bytes),
                let payload = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[start...])),
                payload.count >= overhead + 32
            else { return nil }
            return (epoch, payload)
        }
    }

    /// Where a shopping status's shop name is sealed (docs/encryption.md): the list's `shop`
    /// register at version zero, a place no operation of the log takes (the list has no `shop`
    /// register), so a status cannot be replayed as a write, nor a write as a status.
    public static func shopPlace(of list: ListID, shop: String) -> Op {
        Op(
            list: list, item: .list, field: .shop, value: .text(shop),
            version: Version(timestamp: .zero, replica: ReplicaID(rawValue: 0)))
    }

    /// The key epoch a sealed text names, read from its header alone (a server's check of which
    /// keys a push is sealed under); nil when it does not start as one.
    public static func epoch(of text: String) -> UInt32? {
        var text = text
        return text.withUTF8 { header($0)?.0 }
    }

    /// What a snapshot's text starts with (docs/encryption.md, "Snapshots"): `n1.`, its key
    /// epoch, `.` and base64url of a nonce, the ciphertext and its tag.
    public static let snapshotPrefix = "n1."
    /// The longest snapshot text a server keeps: 3 MiB, which a request body of 4 MiB holds in
    /// JSON (a snapshot is gzipped before it is sealed: 10,000 items with a note each take 0.84 MB).
    public static let maxSnapshotBytes = 3 << 20

    /// The key epoch and the payload (nonce, ciphertext, tag) of a snapshot's text; nil when it
    /// is not one (what a server checks, before any key).
    public static func parseSnapshot(_ text: String) -> (epoch: UInt32, payload: [UInt8])? {
        guard text.utf8.count <= maxSnapshotBytes else { return nil }
        var text = text
        return text.withUTF8 { bytes -> (UInt32, [UInt8])? in
            guard let (epoch, start) = header(bytes, letter: 0x6E),
                let payload = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[start...])),
                payload.count >= overhead + 4
            else { return nil }
            return (epoch, payload)
        }
    }

    /// The key epoch a snapshot's text names, read from its header alone (what the server checks
    /// against the list's, once ``parseSnapshot(_:)`` took the whole text); nil when it does not
    /// start as one.
    public static func snapshotEpoch(of text: String) -> UInt32? {
        var text = text
        return text.withUTF8 { header($0, letter: 0x6E)?.0 }
    }

    /// The epoch of "s1." (or `letter` and "1.") and 1 to 6 digits without a leading zero and
    /// ".", and where the base64url after it starts; nil when `bytes` do not start so.
    private static func header(_ bytes: UnsafeBufferPointer<UInt8>, letter: UInt8 = 0x73) -> (UInt32, Int)? {
        guard bytes.count > 4, bytes[0] == letter, bytes[1] == 0x31, bytes[2] == 0x2e else { return nil }
        var index = 3
        var epoch: UInt32 = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]), index < 9 {
            epoch = epoch * 10 + UInt32(bytes[index] - 0x30)
            index += 1
        }
        let digits = index - 3
        guard digits >= 1, index < bytes.count, bytes[index] == 0x2e, bytes[3] != 0x30 || digits == 1 else {
            return nil
        }
        return (epoch, index + 1)
    }

    /// Whether `op` is what an encrypted list's log may hold: its value sealed text within its
    /// field's bound. What a server checks in place of ``Op/validate()`` for such a list.
    public static func isWellFormed(_ op: Op) -> Bool {
        guard case .text(var text) = op.value, text.utf8.count <= maxTextBytes(for: op.field) else { return false }
        // What parse(_:) accepts, checked in place: a server and a pull check every operation.
        return text.withUTF8 { bytes in
            guard let (_, start) = header(bytes),
                let count = Base64URL.decodedCount(buffer: UnsafeBufferPointer(rebasing: bytes[start...]))
            else { return false }
            return count >= overhead + 32
        }
    }

    /// The associated data a value is sealed with: what binds it to its place, so that a relay
    /// cannot move it to another list, item, field, time or writer, or claim another epoch:
    /// "basket-seal-v1" 0x00, the list's 16 bytes, the item's 16, the field's code, the
    /// timestamp's and the replica's 8 bytes each (big-endian), and the epoch's 4.
    public static func associatedData(_ op: Op, epoch: UInt32) -> [UInt8] {
        var bytes = Array("basket-seal-v1".utf8)
        bytes.append(0)
        bytes += op.list.raw.bytes
        bytes += op.item.raw.bytes
        bytes.append(op.field.code)
        bytes += bigEndian(op.timestamp.rawValue)
        bytes += bigEndian(op.replica.rawValue)
        bytes += bigEndian(UInt64(epoch)).suffix(4)
        return bytes
    }

    /// The 8 bytes of `value`, most significant first.
    public static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(value >> (56 - 8 * UInt64($0)) & 0xff) }
    }
}
