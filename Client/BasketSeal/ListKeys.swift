public import BasketCore
import PlatformCrypto

/// Why a sealed value, a key text or an envelope could not be opened.
public enum SealError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The value is not sealed text (`Sealed/parse(_:)` refused it).
    case notSealed
    /// It was sealed under an epoch of the list's key this device does not have.
    case unknownEpoch(UInt32)
    /// Its tag does not verify: another key, or moved to another place, or tampered with.
    case forged
    /// It opened, but to bytes that are no value (`Sealed/value(ofPlaintext:)`).
    case malformed
    /// A key text or envelope that is not one.
    case badKey

    public var description: String {
        switch self {
        case .notSealed: "not a sealed value"
        case .unknownEpoch(let epoch): "sealed under key \(epoch), which this device does not have"
        case .forged: "does not open with the list's key where it stands"
        case .malformed: "opens to no value"
        case .badKey: "not a key of Basket's"
        }
    }
}

/// The keys of one end-to-end encrypted list (docs/encryption.md):
///
/// - the **identity key**, made with the list and never changed: item and shop ids are an HMAC
///   of their key under it, so two devices adding "Milk" offline make one item and the server
///   learns only a keyed tag;
/// - one **epoch key** per epoch: values are sealed with the newest, and a member's removal or
///   departure adds an epoch (``rotated()``) that the removed member never receives. Earlier
///   epochs stay, so the history still opens.
///
/// Sub-keys are derived with HKDF-SHA-256, salted with the list's id, so a key of one list used
/// for another opens nothing.
public struct ListKeys: Sendable, Equatable {
    /// The list these keys belong to.
    public let list: ListID
    /// The 32-byte identity key.
    public let identity: [UInt8]
    /// The 32-byte key of each epoch this device holds.
    public private(set) var epochs: [UInt32: [UInt8]]
    /// The newest epoch: values are sealed under it.
    public private(set) var current: UInt32

    /// Keys are equal when they are the same keys of the same list (the derived ones follow).
    public static func == (lhs: ListKeys, rhs: ListKeys) -> Bool {
        lhs.list == rhs.list && lhs.identity == rhs.identity && lhs.epochs == rhs.epochs && lhs.current == rhs.current
    }

    private let idKey: [UInt8]
    private var valueKeys: [UInt32: AESGCMKey]
    private var nonceKeys: [UInt32: [UInt8]]

    /// Keys of `list`: its identity key and the epochs' keys (`current` among them).
    /// - Throws: ``SealError/badKey`` when a key is not 32 bytes or `current` has none.
    public init(list: ListID, identity: [UInt8], epochs: [UInt32: [UInt8]], current: UInt32) throws(SealError) {
        guard identity.count == 32, epochs[current] != nil, epochs.count <= 1_000,
            epochs.allSatisfy({ $0.key <= Sealed.maxEpoch && $0.value.count == 32 })
        else { throw .badKey }
        self.list = list
        self.identity = identity
        self.epochs = epochs
        self.current = current
        idKey = Self.derive(identity, list: list, info: "basket-ids-v1")
        valueKeys = epochs.mapValues { AESGCMKey(Self.derive($0, list: list, info: "basket-values-v1")) }
        nonceKeys = epochs.mapValues { Self.derive($0, list: list, info: "basket-nonces-v1") }
    }

    /// New keys for a new list: a random identity key and epoch 0.
    public static func generate(list: ListID) -> ListKeys {
        // swift-format-ignore: NeverUseForceTry
        try! ListKeys(list: list, identity: SecureRandom.bytes(32), epochs: [0: SecureRandom.bytes(32)], current: 0)
    }

    /// These keys with a new random epoch after the newest: what a removal seals with.
    public func rotated() -> ListKeys { adding(epoch: current + 1, key: SecureRandom.bytes(32)) }

    /// These keys with `key` for `epoch` (an epoch another member made, from its envelope); the
    /// newest stays current.
    public func adding(epoch: UInt32, key: [UInt8]) -> ListKeys {
        var epochs = epochs
        epochs[epoch] = key
        // swift-format-ignore: NeverUseForceTry
        return try! ListKeys(list: list, identity: identity, epochs: epochs, current: max(current, epoch))
    }

    static func derive(_ key: [UInt8], list: ListID, info: String) -> [UInt8] {
        // swift-format-ignore: NeverUseForceTry
        try! HKDF.sha256(key: key, salt: list.raw.bytes, info: Array(info.utf8), length: 32)
    }

    /// The id of the item with key `key` (`ItemKey/normalize(_:)` of its name): the first 128
    /// bits of HMAC-SHA-256 under the list's id key of what `ItemID/init(list:key:)` hashes.
    public func itemID(key: String) -> ItemID {
        ItemID(raw: ID128(bytes: HMACSHA256.code(ItemID.derivationInput(list: list, key: key), key: idKey).prefix(16))!)
    }

    /// The id of the shop with key `shopKey`, as ``itemID(key:)`` with the shops' prefix.
    public func shopID(key shopKey: String) -> ItemID {
        ItemID(
            raw: ID128(
                bytes: HMACSHA256.code(ItemID.derivationInput(list: list, shopKey: shopKey), key: idKey).prefix(16))!)
    }

    /// A plain list's operations moved to the ids they take under these keys when the list is
    /// encrypted (`ListConversion`, docs/encryption.md, "Converting a plain list"); the items'
    /// names are read from `known` as well (a device's whole copy, when it converts its unsent
    /// writes).
    public func converted(_ operations: [Op], known: [Op] = []) -> [Op] {
        let (items, shops) = ListConversion.keys(of: known + operations)
        return ListConversion.rekey(
            operations, items: items.mapValues(itemID(key:)), shops: shops.mapValues(shopID(key:)))
    }

    /// `op` with its value sealed under the current epoch.
    public func seal(_ op: Op) -> Op { seal(op, epoch: current) }

    /// `op` with its value sealed under `epoch`. The nonce is derived from what is sealed: the
    /// first 12 bytes of HMAC-SHA-256, under the epoch's nonce key, of the associated data and the
    /// padded plaintext. The same operation seals to the same text every time (a push retried after
    /// a lost answer is a duplicate, not a conflict), and two different plaintexts never share a
    /// nonce under one key, even from a device restored from a backup that reuses its versions.
    public func seal(_ op: Op, epoch: UInt32) -> Op {
        guard let key = valueKeys[epoch], let nonceKey = nonceKeys[epoch] else {
            preconditionFailure("no key for epoch \(epoch)")
        }
        var sealed = op
        let plaintext = Sealed.plaintext(op.value)
        let associatedData = Sealed.associatedData(op, epoch: epoch)
        let nonce = Array(HMACSHA256.code(associatedData + plaintext, key: nonceKey).prefix(12))
        // swift-format-ignore: NeverUseForceTry
        let payload = try! key.seal(plaintext, nonce: nonce, associatedData: associatedData)
        sealed.value = .text(Sealed.text(epoch: epoch, payload: nonce + payload))
        return sealed
    }

    /// `op` with its value opened: as it was written, where it was written.
    /// - Throws: ``SealError`` when it is not sealed, its epoch is unknown here, it does not
    ///   verify where it stands (another list, item, field, time, writer or epoch), or opens to
    ///   no value.
    public func open(sealed op: Op) throws(SealError) -> Op {
        guard case .text(let text) = op.value, let (epoch, payload) = Sealed.parse(text) else { throw .notSealed }
        guard let key = valueKeys[epoch] else { throw .unknownEpoch(epoch) }
        guard
            let plaintext = try? key.open(
                payload.dropFirst(12), nonce: payload.prefix(12),
                associatedData: Sealed.associatedData(op, epoch: epoch))
        else { throw .forged }
        guard let value = Sealed.value(ofPlaintext: plaintext) else { throw .malformed }
        var opened = op
        opened.value = value
        return opened
    }
}
