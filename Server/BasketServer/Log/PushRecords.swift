import BasketCore

/// How both stores keep their logs (PostgreSQL schema 4, SQLite schema 6): a row of `pushes` per
/// push, its operations in one blob (bytea), each a record of
///
///     seq (8 bytes) · item (16) · field (2) · timestamp (8) · replica (8) · kind (1) [· length (4) · text]
///
/// integers big-endian (as PostgreSQL's `int8send` writes them; timestamp and replica as the
/// columns ``StoredOps`` makes), kind 0 null, 1 false, 2 true, 3 a text of `length` UTF-8 bytes.
/// A row is one insert however many operations the push has, where a row per operation cost a
/// B-tree entry or two each (PostgreSQL's ingest was a fifth of SQLite's). A row's `first_seq`
/// and `last_seq` are the sequence numbers its push gave out; compaction drops records from it
/// but keeps them, so rows never overlap and a sequence number's row is the first whose
/// `last_seq` is not below it.
enum PushRecords {
    /// The bytes of a record before its text.
    static let fixedBytes = 43
    /// The most operations the migration and an import put in one row.
    static let rowLimit = 1_000

    /// Appends the record of `identity` with `value`, stored at `seq`.
    static func append(seq: Int64, _ identity: ListLogs.Identity, value: Value, to out: inout [UInt8]) {
        func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        integer(seq)
        integer(identity.item.raw.high)
        integer(identity.item.raw.low)
        integer(Int16(truncatingIfNeeded: identity.field))
        integer(identity.timestamp)
        integer(identity.replica)
        switch value {
        case .null: out.append(0)
        case .bool(let flag): out.append(flag ? 2 : 1)
        case .text(let text):
            out.append(3)
            integer(UInt32(text.utf8.count))
            out.append(contentsOf: text.utf8)
        }
    }

    /// One record, read in place.
    struct Record {
        var seq: Int64
        var identity: ListLogs.Identity
        /// The record's bytes in the row.
        var bytes: Range<Int>
        fileprivate var kind: UInt8
        fileprivate var text: Range<Int>

        /// The operation's value (`row` is the bytes the record was read from).
        func value(in row: UnsafeRawBufferPointer) -> Value {
            switch kind {
            case 1: .bool(false)
            case 2: .bool(true)
            case 3: .text(String(decoding: UnsafeRawBufferPointer(rebasing: row[text]), as: UTF8.self))
            default: .null
            }
        }

        /// What the operation counts against its list's bytes (``ListLimits/bytes(of:)``).
        var quotaBytes: Int64 { kind == 3 ? Int64(text.count) + 64 : 64 }

        /// Whether the value is `true`.
        var isTrue: Bool { kind == 2 }
    }

    /// A row that cannot be read: written by something else than this program.
    static let damaged = StoreError.database("a row of the log (pushes) is damaged")

    /// Calls `visit` with every record of `row`, in order.
    static func read(
        _ row: UnsafeRawBufferPointer, _ visit: (Record, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        func integer<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            var value: T = 0
            withUnsafeMutableBytes(of: &value) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: row[at..<at + MemoryLayout<T>.size]))
            }
            return T(bigEndian: value)
        }
        var at = 0
        while at < row.count {
            guard row.count - at >= fixedBytes else { throw damaged }
            let kind = row[at + 42]
            var end = at + fixedBytes
            var text = end..<end
            if kind == 3 {
                guard row.count - end >= 4 else { throw damaged }
                let length = Int(integer(end, UInt32.self))
                guard row.count - end - 4 >= length else { throw damaged }
                text = end + 4..<end + 4 + length
                end = text.upperBound
            } else if kind > 3 {
                throw damaged
            }
            let identity = ListLogs.Identity(
                item: ItemID(raw: ID128(high: integer(at + 8, UInt64.self), low: integer(at + 16, UInt64.self))),
                field: Int64(integer(at + 24, Int16.self)), timestamp: integer(at + 26, Int64.self),
                replica: integer(at + 34, Int64.self))
            try visit(
                Record(seq: integer(at, Int64.self), identity: identity, bytes: at..<end, kind: kind, text: text), row)
            at = end
        }
    }
}

extension PushRecords {
    /// SQL (both stores') that sets `lists.dropped` from the rows of `pushes`: every sequence
    /// number given out and no longer there (after an import).
    static let recountDropped =
        "UPDATE lists SET dropped = last_seq - (SELECT coalesce(sum(count), 0) FROM pushes WHERE list = lists.no)"

    /// A stored row, as compaction reads it.
    struct StoredRow {
        var lastSeq: Int64
        var received: Int64
        var ops: [UInt8]
    }

    /// What compaction does to one list's log.
    struct Compaction {
        /// Rows that lose records: their new records, or nil when none is left (delete the row).
        var rewritten: [(lastSeq: Int64, ops: [UInt8]?, count: Int)] = []
        var dropped = 0
        /// What the dropped operations counted against the list's bytes.
        var bytes: Int64 = 0
        /// The last sequence number dropped.
        var top: Int64 = 0
        /// Items dropped whole: removed (their `deleted` register's winner is true) and with every
        /// operation received before the retention's start. They no longer count against the
        /// list's items.
        var items: Int64 = 0
        /// What the dropped operations gave back, by the replica that wrote them: their bytes,
        /// and the items dropped whole that replica's write first brought to the list. The store
        /// takes it off the writing member's share (`member_usage`).
        var freed: [Int64: (items: Int64, bytes: Int64)] = [:]
    }

    /// Compaction of one list's log, `rows` in sequence order: every operation a later version of
    /// its register (item and field) supersedes goes, when its row was received before `before`;
    /// so does every operation of an item that was removed (its `deleted` register's winner is
    /// true) when all of its operations were received before `before`: the bytes and the item a
    /// member's junk took come back once the junk is removed and the retention has passed. (A
    /// device that kept a change to such an item unsent for longer than the retention brings
    /// back what it changed.)
    static func compact(_ rows: [StoredRow], receivedBefore before: Int64) throws -> Compaction {
        struct Register: Hashable {
            var item: ItemID
            var field: Int64
        }
        // The winning version of each register, whether it is true, and the items with an
        // operation received since `before`.
        var winners: [Register: (version: (Int64, Int64), isTrue: Bool)] = [:]
        var recent: Set<ItemID> = []
        // The replica of each item's first operation in the log: the one that added it.
        var firstWriter: [ItemID: Int64] = [:]
        for row in rows {
            try row.ops.withUnsafeBytes { bytes in
                try read(bytes) { record, _ in
                    let id = record.identity
                    if firstWriter[id.item] == nil { firstWriter[id.item] = id.replica }
                    if row.received >= before { recent.insert(id.item) }
                    let version = (id.timestamp, id.replica)
                    let register = Register(item: id.item, field: id.field)
                    if let winner = winners[register], winner.version >= version { return }
                    winners[register] = (version, record.isTrue)
                }
            }
        }
        let deleted = Int64(Field.deleted.code)
        // Removed items whose every operation is past the retention: dropped whole.
        var gone: Set<ItemID> = []
        for (register, winner) in winners
        where register.field == deleted && winner.isTrue && !recent.contains(register.item) && register.item != .list {
            gone.insert(register.item)
        }
        var compaction = Compaction()
        compaction.items = Int64(gone.count)
        for item in gone {
            if let replica = firstWriter[item] { compaction.freed[replica, default: (0, 0)].items += 1 }
        }
        for row in rows where row.received < before {
            var kept: [UInt8] = []
            var keptCount = 0
            var losers = 0
            try row.ops.withUnsafeBytes { bytes in
                try read(bytes) { record, bytes in
                    let id = record.identity
                    if !gone.contains(id.item),
                        winners[Register(item: id.item, field: id.field)]!.version == (id.timestamp, id.replica)
                    {
                        kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[record.bytes]))
                        keptCount += 1
                    } else {
                        losers += 1
                        compaction.bytes += record.quotaBytes
                        compaction.freed[id.replica, default: (0, 0)].bytes += record.quotaBytes
                        compaction.top = max(compaction.top, record.seq)
                    }
                }
            }
            guard losers > 0 else { continue }
            compaction.dropped += losers
            compaction.rewritten.append((row.lastSeq, keptCount == 0 ? nil : kept, keptCount))
        }
        return compaction
    }

    /// The dump's `ops` rows of one stored row of list `list`.
    static func dumpRows(
        list: Int64, received: Int64, _ row: UnsafeRawBufferPointer, _ visit: ([DumpValue]) throws -> Void
    )
        throws
    {
        try read(row) { record, bytes in
            let id = record.identity
            let value: DumpValue =
                switch record.value(in: bytes) {
                case .null: .null
                case .bool(let flag): .integer(flag ? 1 : 0)
                case .text(let text): .text(text)
                }
            try visit([
                .integer(list), .integer(record.seq), .blob(id.item.raw.bytes), .integer(id.field),
                .integer(id.timestamp), .integer(id.replica), value, .integer(received),
            ])
        }
    }

    /// A row to store, made from a dump.
    struct PackedRow {
        var list: Int64
        var firstSeq: Int64
        var lastSeq: Int64
        var count: Int
        var received: Int64
        var ops: [UInt8]
    }

    /// A dump's `ops` rows (or an old log's rows, in the dump's columns) as rows of `pushes`:
    /// runs of one list received at once, in sequence order, up to ``rowLimit`` a row; and what
    /// each list holds (items, bytes). Throws on a row that is not an operation, or a sequence
    /// number given twice.
    static func pack(_ rows: [[DumpValue]]) throws -> (rows: [PackedRow], usage: [Int64: (items: Int64, bytes: Int64)])
    {
        struct Operation {
            var list: Int64
            var seq: Int64
            var received: Int64
            var identity: ListLogs.Identity
            var value: Value
        }
        var operations: [Operation] = []
        operations.reserveCapacity(rows.count)
        for row in rows {
            guard row.count == 8, case .integer(let list) = row[0], case .integer(let seq) = row[1],
                case .blob(let item) = row[2], let id = ID128(bytes: item), case .integer(let field) = row[3],
                field >= 0, Field(code: UInt8(clamping: field)) != nil, case .integer(let timestamp) = row[4],
                case .integer(let replica) = row[5], case .integer(let received) = row[7]
            else { throw StoreDump.FormatError(description: "an ops row has a value of the wrong kind") }
            let value: Value
            switch row[6] {
            case .null: value = .null
            case .integer(let flag) where flag == 0 || flag == 1: value = .bool(flag == 1)
            case .text(let text): value = .text(text)
            default: throw StoreDump.FormatError(description: "an ops row has \(row[6]) as its value")
            }
            let identity = ListLogs.Identity(
                item: ItemID(raw: id), field: field, timestamp: timestamp, replica: replica)
            operations.append(Operation(list: list, seq: seq, received: received, identity: identity, value: value))
        }
        operations.sort { ($0.list, $0.seq) < ($1.list, $1.seq) }
        for (earlier, later) in zip(operations, operations.dropFirst())
        where earlier.list == later.list && earlier.seq == later.seq {
            throw StoreDump.FormatError(
                description: "two ops rows of list \(later.list) have sequence number \(later.seq)")
        }
        var packed: [PackedRow] = []
        var items: [Int64: Set<ItemID>] = [:]
        var usage: [Int64: (items: Int64, bytes: Int64)] = [:]
        var start = 0
        while start < operations.count {
            let first = operations[start]
            var row = PackedRow(
                list: first.list, firstSeq: first.seq, lastSeq: first.seq, count: 0, received: first.received, ops: [])
            while start + row.count < operations.count, row.count < rowLimit {
                let op = operations[start + row.count]
                guard op.list == first.list, op.received == first.received else { break }
                append(seq: op.seq, op.identity, value: op.value, to: &row.ops)
                row.lastSeq = op.seq
                row.count += 1
                items[op.list, default: []].insert(op.identity.item)
                usage[op.list, default: (0, 0)].bytes += ListLimits.bytes(of: op.value)
            }
            packed.append(row)
            start += row.count
        }
        for (list, held) in items { usage[list]!.items = Int64(held.count) }
        return (packed, usage)
    }
}

extension ListLogs.Push {
    /// What a push writes: its operations new to the list, numbered from `head + 1` in request
    /// order, as records; `count` of them, counting `bytes` against the list's quota.
    struct Admitted {
        var records: [UInt8] = []
        var count = 0
        var bytes: Int64 = 0
        /// Of `bytes`, those of writes that shrink the list (``ListLimits/shrinks(_:_:)``) on items
        /// it held already: within the list's reserve, these are taken when it is full.
        var shrinkingBytes: Int64 = 0
        /// The replicas of the new operations (their column), each with its latest timestamp
        /// (column): the store checks each is the pusher's (``StoreError/replicaTaken``).
        var replicas: [Int64: Int64] = [:]
    }

    /// Admits `operations` (with their keys, `hashed`) to a log whose last sequence number is
    /// `head`: each one new to the list, and not a repeat of an earlier one of the push, is
    /// recorded (``admit(_:value:at:stored:)``) and packed. `stored` reads the stored operation
    /// at a sequence number up to `head`, nil when there is none (compacted away). The log then
    /// counts as read up to the last number given out (a push not kept takes it back).
    /// - Throws: ``StoreError/identityConflict(_:)`` when an operation's identity is stored (or
    ///   earlier in the push) with another value: nothing of the push is to be stored.
    mutating func admit(
        _ operations: [Op], _ hashed: [ListLogs.Hashed], after head: Int64,
        stored: (Int64) throws -> ListLogs.Stored?
    ) throws -> Admitted {
        var admitted = Admitted()
        admitted.records.reserveCapacity(operations.count * 64)
        var fresh: [ListLogs.Stored] = []  // the push's own, from head + 1 on
        var conflicts = 0
        for index in hashed.indices {
            let op = hashed[index]
            let seq = head + Int64(fresh.count) + 1
            let value = operations[index].value
            let itemHeld = holds(op)
            let admission = try admit(op, value: value, at: seq) { earlier in
                guard earlier > head else { return try stored(earlier) }
                // One of this push's: the log has no entry past its head when a push starts.
                let index = Int(earlier - head - 1)
                return index < fresh.count ? fresh[index] : nil
            }
            switch admission {
            case .duplicate: continue
            case .conflict:
                conflicts += 1
                continue
            case .new: break
            }
            fresh.append(ListLogs.Stored(identity: op.identity, value: value))
            admitted.replicas[op.identity.replica] = max(
                admitted.replicas[op.identity.replica] ?? .min, op.identity.timestamp)
            PushRecords.append(seq: seq, op.identity, value: value, to: &admitted.records)
            admitted.bytes += ListLimits.bytes(of: value)
            if itemHeld && ListLimits.shrinks(operations[index].field, value) {
                admitted.shrinkingBytes += ListLimits.bytes(of: value)
            }
        }
        admitted.count = fresh.count
        advance(to: head + Int64(fresh.count))
        if conflicts > 0 { throw StoreError.identityConflict(conflicts) }
        return admitted
    }
}
