public import BasketCore
import Gzip
import PlatformCrypto

/// Snapshots of encrypted lists (docs/encryption.md, "Snapshots"): a member's device seals the
/// list's state at a cursor of the server's log in one piece, so that a device joining a
/// long-lived list opens one sealed text and pulls the tail after it, instead of opening every
/// operation of the log one by one.
///
/// The text is `n1.EPOCH.` and base64url of a 12-byte random nonce, then AES-256-GCM under the
/// epoch's snapshot key (HKDF of the epoch key, info `basket-snapshots-v1`) of: the length of the
/// gzip (4 bytes), the gzip of the list's operations in the export encoding (canonical order),
/// zero bytes to a multiple of 4,096. The associated data binds it to its list, cursor and epoch.
extension ListKeys {
    /// A snapshot's padded plaintext is a multiple of this many bytes.
    public static let snapshotBucket = 4_096
    /// The most bytes a snapshot's operations may take once uncompressed: more is refused
    /// (10,000 items with a quantity and a note each take about 4 MB).
    public static let maxSnapshotBytes = 64 << 20

    /// The associated data of a snapshot of `list` at `cursor` under `epoch`:
    /// `"basket-snapshot-v1" ‖ 0x00 ‖ list ‖ cursor (8 bytes) ‖ epoch (4 bytes)`.
    static func snapshotAssociatedData(list: ListID, cursor: Int64, epoch: UInt32) -> [UInt8] {
        var out = Array("basket-snapshot-v1".utf8) + [0] + list.raw.bytes
        withUnsafeBytes(of: UInt64(bitPattern: cursor).bigEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: epoch.bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The snapshot key of `epoch`, when these keys hold it.
    private func snapshotKey(_ epoch: UInt32) -> [UInt8]? {
        epochs[epoch].map { Self.derive($0, list: list, info: "basket-snapshots-v1") }
    }

    /// The list's `operations` (its state at `cursor` of the server's log) sealed under the
    /// current epoch as one text. `nonce`: 12 bytes, random unless given (the vectors give one).
    public func sealSnapshot(_ operations: [Op], cursor: Int64, nonce: [UInt8]? = nil) -> String {
        let encoding = OperationCodec.encode(operations, canonicalOrder: true)
        // zlib's gzip of bytes in memory does not fail short of memory.
        guard let zipped = Gzip.compress(encoding), let key = snapshotKey(current) else {
            preconditionFailure("a snapshot could not be compressed, or the current epoch has no key")
        }
        let length = (4 + zipped.count + Self.snapshotBucket - 1) / Self.snapshotBucket * Self.snapshotBucket
        var padded: [UInt8] = []
        padded.reserveCapacity(length)
        withUnsafeBytes(of: UInt32(zipped.count).bigEndian) { padded.append(contentsOf: $0) }
        padded += zipped
        padded += [UInt8](repeating: 0, count: length - padded.count)
        let nonce = nonce ?? SecureRandom.bytes(12)
        // swift-format-ignore: NeverUseForceTry
        let sealed = try! AESGCM.seal(
            padded, key: key, nonce: nonce,
            associatedData: Self.snapshotAssociatedData(list: list, cursor: cursor, epoch: current))
        return Sealed.snapshotPrefix + "\(current)." + Base64URL.encode(nonce + sealed)
    }

    /// The operations of a snapshot of this list at `cursor`, each validated as a page's are.
    /// - Throws: ``SealError/notSealed`` for a text that is no snapshot, ``SealError/unknownEpoch(_:)``,
    ///   ``SealError/forged`` when it does not open for this list at this cursor, and
    ///   ``SealError/malformed`` when it opens to what is not a list's operations.
    public func openSnapshot(_ text: String, cursor: Int64) throws(SealError) -> [Op] {
        guard let (epoch, payload) = Sealed.parseSnapshot(text) else { throw .notSealed }
        guard let key = snapshotKey(epoch) else { throw .unknownEpoch(epoch) }
        guard
            let padded = try? AESGCM.open(
                Array(payload.dropFirst(12)), key: key, nonce: Array(payload.prefix(12)),
                associatedData: Self.snapshotAssociatedData(list: list, cursor: cursor, epoch: epoch))
        else { throw .forged }
        guard padded.count >= 4 else { throw .malformed }
        let length = padded.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length <= padded.count - 4,
            let encoding = Gzip.decompress(Array(padded[4..<(4 + length)]), limit: Self.maxSnapshotBytes),
            let operations = try? OperationCodec.decode(encoding), operations.allSatisfy({ $0.list == list })
        else { throw .malformed }
        return operations
    }
}
