import BasketCore
import Testing

@testable import BasketServer

/// The records PostgreSQL's log keeps a push's operations in: read back as written, for every
/// kind of value, and a row cut short or of an unknown kind is refused rather than misread.
struct PushRecordsTests {
    static let identities: [ListLogs.Identity] = (0..<4).map { (n: Int) -> ListLogs.Identity in
        let high: UInt64 = 0x0102_0304_0506_0708 &* UInt64(n + 1)
        let item = ItemID(raw: ID128(high: high, low: ~UInt64(n)))
        return ListLogs.Identity(
            item: item, field: Int64(n), timestamp: Int64.max - Int64(n), replica: Int64.min + Int64(n))
    }
    static let values: [Value] = [.null, .bool(false), .bool(true), .text("tab\there, é, 🥛")]

    static func row() -> [UInt8] {
        var row: [UInt8] = []
        for (n, identity) in identities.enumerated() {
            PushRecords.append(seq: 1_000_000_000_000 + Int64(n), identity, value: values[n], to: &row)
        }
        return row
    }

    @Test func recordsAreReadAsWritten() throws {
        let row = Self.row()
        #expect(row.count == 4 * PushRecords.fixedBytes + 4 + "tab\there, é, 🥛".utf8.count)
        var read: [(Int64, ListLogs.Identity, Value, Int64)] = []
        try row.withUnsafeBytes { bytes in
            try PushRecords.read(bytes) { record, bytes in
                read.append((record.seq, record.identity, record.value(in: bytes), record.quotaBytes))
            }
        }
        #expect(read.map(\.0) == (0..<4).map { 1_000_000_000_000 + Int64($0) })
        #expect(read.map(\.1) == Self.identities)
        #expect(read.map(\.2) == Self.values)
        #expect(read.map(\.3) == Self.values.map { ListLimits.bytes(of: $0) })
    }

    @Test(arguments: [1, 10, 42, 43 + 43 + 1, 43 * 3 + 3, 43 * 4 + 2, 43 * 4 + 4 + 2])
    func aRowCutShortIsDamaged(_ cut: Int) {
        let row = Array(Self.row().prefix(cut))
        #expect(throws: StoreError.database("a row of the log (pushes) is damaged")) {
            try row.withUnsafeBytes { try PushRecords.read($0) { _, _ in } }
        }
    }

    @Test func anUnknownKindIsDamaged() {
        var row = Self.row()
        row[42] = 4
        #expect(throws: StoreError.database("a row of the log (pushes) is damaged")) {
            try row.withUnsafeBytes { try PushRecords.read($0) { _, _ in } }
        }
    }
}
