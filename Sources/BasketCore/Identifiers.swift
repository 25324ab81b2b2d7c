/// The id of a replica (a device's copy of the lists): 64 random bits, never zero.
public struct ReplicaID: Hashable, Sendable, CustomStringConvertible {
    /// The id's 64 bits.
    public let rawValue: UInt64

    /// The replica id whose bits are `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A new random replica id.
    public static func random() -> ReplicaID {
        var generator = SystemRandomNumberGenerator()
        var value: UInt64 = 0
        while value == 0 { value = generator.next() }
        return ReplicaID(rawValue: value)
    }

    /// Parses 16 hex digits.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == 16, let value = UInt64(hex, radix: 16) else { return nil }
        self.rawValue = value
    }

    /// 16 lowercase hex digits.
    public var description: String { Hex.encode(rawValue) }
}

/// A 128-bit identifier, written as 32 lowercase hex digits.
public struct ID128: Hashable, Comparable, Sendable {
    /// The first 64 bits (big-endian).
    public let high: UInt64
    /// The last 64 bits.
    public let low: UInt64

    /// The id made of two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses 32 hex digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 32, let high = Hex.decode(utf8[0..<16]), let low = Hex.decode(utf8[16..<32]) else {
            return nil
        }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            result[i] = UInt8(truncatingIfNeeded: high >> (56 - 8 * i))
            result[8 + i] = UInt8(truncatingIfNeeded: low >> (56 - 8 * i))
        }
        return result
    }

    /// The id made of a pair of halves (as a database row reads them).
    public init(_ halves: (high: UInt64, low: UInt64)) {
        self.init(high: halves.high, low: halves.low)
    }

    /// From 16 big-endian bytes in memory (the fast path for database rows).
    public init?(buffer: UnsafeRawBufferPointer) {
        guard buffer.count == 16 else { return nil }
        self.init(
            high: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            low: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// The id from 16 big-endian bytes; nil when there are not 16.
    public init?(bytes: [UInt8]) {
        guard let id = bytes.withUnsafeBytes({ ID128(buffer: $0) }) else { return nil }
        self = id
    }

    /// The id from 16 big-endian bytes of any collection; nil when there are not 16.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// 32 lowercase hex digits.
    public var hex: String { Hex.encode(high) + Hex.encode(low) }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

/// The id of a list: 128 random bits.
public struct ListID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id's 128 bits.
    public let raw: ID128

    /// The list id made of `raw`.
    public init(raw: ID128) { self.raw = raw }

    /// Parses 32 hex digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        guard let raw = ID128(hex: hex) else { return nil }
        self.raw = raw
    }

    /// A new random list id.
    public static func random() -> ListID {
        var generator = SystemRandomNumberGenerator()
        return ListID(raw: ID128(high: generator.next(), low: generator.next()))
    }

    public var description: String { raw.hex }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.raw < rhs.raw }
}

/// The id of an item: derived from the list id and the item's key, so two replicas that add the
/// same name offline create the same item.
public struct ItemID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id's 128 bits.
    public let raw: ID128

    /// The item id made of `raw`.
    public init(raw: ID128) { self.raw = raw }

    /// Parses 32 hex digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        guard let raw = ID128(hex: hex) else { return nil }
        self.raw = raw
    }

    /// The reserved id that list-level registers (the title) are written to.
    public static let list = ItemID(raw: ID128(high: 0, low: 0))

    /// The id of the item with key `key` in `list`: the first 128 bits of
    /// SHA-256("basket-item-v1" 0x00 list-id-bytes key-utf8).
    public init(list: ListID, key: String) {
        self.init(derivedFrom: "basket-item-v\(ItemKey.version)", list: list, key: key)
    }

    /// The id of the shop with key `shopKey` (``ItemKey/normalize(_:)`` of its name) in `list`: the
    /// first 128 bits of SHA-256("basket-shop-v1" 0x00 list-id-bytes key-utf8), so two devices
    /// adding "Lidl" offline make one shop, and no shop shares an id with an item.
    public init(list: ListID, shopKey: String) {
        self.init(derivedFrom: "basket-shop-v1", list: list, key: shopKey)
    }

    /// The first 128 bits of SHA-256(`prefix` 0x00 list-id-bytes key-utf8).
    private init(derivedFrom prefix: String, list: ListID, key: String) {
        self.raw = ID128(bytes: SHA256.hash(Self.derivationInput(prefix, list: list, key: key)).prefix(16))!
    }

    /// `prefix` 0x00 list-id-bytes key-utf8: what an item's or a shop's id is derived from.
    private static func derivationInput(_ prefix: String, list: ListID, key: String) -> [UInt8] {
        var input = Array(prefix.utf8)
        input.append(0)
        input.append(contentsOf: list.raw.bytes)
        input.append(contentsOf: key.utf8)
        return input
    }

    /// What the id of the item with key `key` in `list` is derived from: hashed with SHA-256 for a
    /// plain list, with HMAC-SHA-256 under the list's id key for an encrypted one.
    public static func derivationInput(list: ListID, key: String) -> [UInt8] {
        derivationInput("basket-item-v\(ItemKey.version)", list: list, key: key)
    }

    /// What the id of the shop with key `shopKey` in `list` is derived from.
    public static func derivationInput(list: ListID, shopKey: String) -> [UInt8] {
        derivationInput("basket-shop-v1", list: list, key: shopKey)
    }

    public var description: String { raw.hex }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.raw < rhs.raw }
}
