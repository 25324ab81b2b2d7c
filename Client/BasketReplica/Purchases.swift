import BasketCore
import SQLite

/// An item's check-offs (the `checks` and `purchases` columns of `items`): every `checked = true`
/// write seen on it, whoever made it, kept beside its history so that the usuals and a trip's
/// order read a row per item and no history. 16-byte records, the hybrid timestamp then the replica
/// id (big-endian), in the order they were seen (readers sort them). The merge appends a write
/// only when it is new to the item's history, so none is there twice.
enum Purchases {
    /// The check-offs of a row, from its blob.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> [Version] {
        var versions: [Version] = []
        versions.reserveCapacity(bytes.count / 16)
        var offset = 0
        while offset + 16 <= bytes.count {
            let timestamp = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let replica = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            versions.append(
                Version(timestamp: HybridTimestamp(rawValue: timestamp), replica: ReplicaID(rawValue: replica)))
            offset += 16
        }
        return versions
    }

    /// The milliseconds of a row's check-offs (their hybrid timestamps'), as stored.
    static func milliseconds(_ bytes: UnsafeRawBufferPointer) -> [Int64] {
        (0..<bytes.count / 16).map { i in
            Int64(UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: i * 16, as: UInt64.self)) >> 16)
        }
    }

    /// The blob of `versions`.
    static func encode(_ versions: [Version]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(versions.count * 16)
        for version in versions { append(version, to: &bytes) }
        return bytes
    }

    /// Appends one check-off's record to `bytes`.
    static func append(_ version: Version, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: version.timestamp.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: version.replica.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
