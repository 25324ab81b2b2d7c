public import BasketCore
public import PlatformCrypto

/// A list's keys sealed to one account's X25519 public key, so a member's device hands them to
/// another member without anyone else (the server included) reading them: an ephemeral key
/// pair, X25519 with the recipient's key, HKDF-SHA-256 over the secret (salted with both public
/// keys), AES-256-GCM bound to the list. The text `e1.` base64url(ephemeral public key ‖ nonce ‖
/// ciphertext ‖ tag); the plaintext is the identity key, then each epoch (4 bytes, big-endian)
/// with its key.
public enum Envelope {
    /// The most epochs one envelope carries.
    public static let maxEpochs = 1_000

    /// `keys` sealed to `recipient` (a 32-byte public key). `ephemeral` and `nonce` are for
    /// vectors; anything else lets them be fresh.
    public static func seal(
        _ keys: ListKeys, to recipient: [UInt8], ephemeral: X25519KeyPair = .generate(), nonce: [UInt8]? = nil
    ) throws(SealError) -> String {
        guard let shared = try? ephemeral.sharedSecret(with: recipient) else { throw .badKey }
        var plaintext = keys.identity
        for epoch in keys.epochs.keys.sorted() {
            plaintext += Sealed.bigEndian(UInt64(epoch)).suffix(4)
            plaintext += keys.epochs[epoch]!
        }
        let nonce = nonce ?? SecureRandom.bytes(12)
        let key = AccountKeys.derive(shared, "basket-envelope-v1", salt: ephemeral.publicKey + recipient)
        // swift-format-ignore: NeverUseForceTry
        let sealed = try! AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: data(keys.list))
        return "e1." + Base64URL.encode(ephemeral.publicKey + nonce + sealed)
    }

    /// The keys of `list` an envelope sealed to `recipient`'s public key.
    /// - Throws: ``SealError/badKey`` when the text is not an envelope, ``SealError/forged`` when
    ///   it was sealed to another key or for another list.
    public static func open(_ text: String, list: ListID, with recipient: X25519KeyPair) throws(SealError) -> ListKeys {
        guard text.utf8.count <= 64 * 1_024, text.hasPrefix("e1."), let bytes = Base64URL.decode(text.dropFirst(3)),
            bytes.count >= 32 + 12 + 16 + 32 + 36
        else { throw .badKey }
        let ephemeral = Array(bytes.prefix(32))
        guard let shared = try? recipient.sharedSecret(with: ephemeral) else { throw .badKey }
        let key = AccountKeys.derive(shared, "basket-envelope-v1", salt: ephemeral + recipient.publicKey)
        guard
            let plaintext = try? AESGCM.open(
                Array(bytes.dropFirst(44)), key: key, nonce: Array(bytes[32..<44]), associatedData: data(list))
        else { throw .forged }
        let entries = plaintext.dropFirst(32)
        guard entries.count % 36 == 0, (1...maxEpochs).contains(entries.count / 36) else { throw .badKey }
        var epochs: [UInt32: [UInt8]] = [:]
        var index = entries.startIndex
        while index < entries.endIndex {
            let epoch = entries[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            epochs[epoch] = Array(entries[index + 4..<index + 36])
            index += 36
        }
        return try ListKeys(
            list: list, identity: Array(plaintext.prefix(32)), epochs: epochs, current: epochs.keys.max()!)
    }

    private static func data(_ list: ListID) -> [UInt8] { Array("basket-envelope-v1".utf8) + [0] + list.raw.bytes }
}

extension ListKeys {
    /// What an invite link carries after its `#` (never sent to a server) and the terminal's
    /// invite code after its dot: `k1.` base64url(identity key ‖ epoch (4 bytes) ‖ its key), the
    /// newest epoch only (a member removed later never gets the next).
    public var inviteSecret: String { "k1." + Base64URL.encode(keyBytes(newest: Self.maxInviteEpochs)) }

    /// The bytes both key texts carry (``init(list:keyBytes:)`` reads them): the identity key, then
    /// the `newest` epochs, oldest first, each (4 bytes) with its key.
    func keyBytes(newest: Int) -> [UInt8] {
        var bytes = identity
        for epoch in epochs.keys.sorted().suffix(newest) {
            bytes += Sealed.bigEndian(UInt64(epoch)).suffix(4) + epochs[epoch]!
        }
        return bytes
    }

    /// The most epochs an invite secret carries, the newest: with the list's history, a member who
    /// joins reads what was written under earlier keys too. One epoch is 94 characters, each
    /// earlier one 48 more; 16 make at most 814.
    public static let maxInviteEpochs = 16

    /// The keys of `list` an invite secret carries.
    /// - Throws: ``SealError/badKey`` when it is not one.
    public init(list: ListID, inviteSecret text: String) throws(SealError) {
        guard text.utf8.count <= 3 + (32 + 36 * Self.maxInviteEpochs) * 4 / 3 + 2, text.hasPrefix("k1."),
            let bytes = Base64URL.decode(text.dropFirst(3))
        else { throw .badKey }
        try self.init(list: list, keyBytes: bytes)
    }

    /// Keys from the bytes both texts carry (an invite's secret, a device's kept keys): the
    /// identity key, then each epoch (4 bytes) with its key.
    /// - Throws: ``SealError/badKey`` when they are not such bytes.
    init(list: ListID, keyBytes bytes: [UInt8]) throws(SealError) {
        guard bytes.count >= 68, (bytes.count - 32) % 36 == 0 else { throw .badKey }
        var epochs: [UInt32: [UInt8]] = [:]
        var index = 32
        while index < bytes.count {
            epochs[bytes[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }] = Array(
                bytes[index + 4..<index + 36])
            index += 36
        }
        try self.init(list: list, identity: Array(bytes.prefix(32)), epochs: epochs, current: epochs.keys.max()!)
    }
}
