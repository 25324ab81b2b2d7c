import BasketCore

/// How both stores keep an operation in a row, and build a pulled page from rows: one codec, so
/// the SQLite and PostgreSQL logs hold the same numbers and send the same pages.
enum StoredOps {
    /// A timestamp as the signed 64-bit column both databases have (the same 64 bits).
    static func column(_ timestamp: HybridTimestamp) -> Int64 { Int64(bitPattern: timestamp.rawValue) }

    /// A replica id as a signed 64-bit column, its top bit flipped: signed order is then the ids'
    /// unsigned order, so an index on (timestamp, replica) sorts as versions do.
    static func column(_ replica: ReplicaID) -> Int64 { Int64(bitPattern: replica.rawValue ^ (1 << 63)) }

    /// The replica id a column holds (``column(_:)-(ReplicaID)`` undone).
    static func replica(_ column: Int64) -> ReplicaID { ReplicaID(rawValue: UInt64(bitPattern: column) ^ (1 << 63)) }

    /// The version stored in the two columns.
    static func version(timestamp: Int64, replica: Int64) -> Version {
        Version(
            timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: timestamp)),
            replica: Self.replica(replica))
    }

    /// The timestamp column of the moment a list's epoch began (Unix milliseconds; 0 for a list
    /// never restored): operations stamped before it may be relayed by any member.
    static func epochColumn(_ milliseconds: Int64) -> Int64 {
        column(HybridTimestamp(milliseconds: UInt64(max(0, milliseconds)), counter: 0))
    }

    /// A new list epoch: 16 random hex digits (a restored store gets new ones, see docs/api.md).
    static func newEpoch() -> String { Secrets.randomHex(bytes: 8) }
}

/// A page of one list's log, filled row by row (in sequence order) until it holds `maxBytes`
/// of encoded operations; it holds at least one when there is one.
struct PageBuilder {
    let list: ListID
    let cursor: Int64
    let head: Int64
    let maxBytes: Int
    private var encoded: [UInt8]
    private let headerBytes: Int
    private var last: Int64
    private var count = 0

    /// A page of `list` after `cursor`, whose log ends at `head`.
    init(list: ListID, after cursor: Int64, head: Int64, maxBytes: Int) {
        self.list = list
        self.cursor = cursor
        self.head = head
        self.maxBytes = maxBytes
        encoded = OperationCodec.header(for: list)
        headerBytes = encoded.count
        last = min(cursor, head)
    }

    /// Whether the page holds `maxBytes` already: the next row belongs to the next page.
    var isFull: Bool { encoded.count - headerBytes >= maxBytes }

    /// Adds the operation with sequence number `seq`, as its row stores it.
    mutating func append(seq: Int64, item: ItemID, field: Int64, value: Value, timestamp: Int64, replica: Int64) {
        OperationCodec.appendLine(
            item: item, field: Field(code: UInt8(truncatingIfNeeded: field)) ?? .name,
            version: StoredOps.version(timestamp: timestamp, replica: replica), value: value, to: &encoded)
        last = seq
        count += 1
    }

    /// The page; `compactedThrough` is the last sequence number compaction may have dropped.
    func page(epoch: String, compactedThrough: Int64) -> LogPage {
        LogPage(
            encoded: encoded, count: count, cursor: last, more: last < head, epoch: epoch,
            historyComplete: cursor >= compactedThrough)
    }
}
