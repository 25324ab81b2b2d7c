public import BasketCore
import SQLite

// SQLiteStore: snapshots of encrypted lists (``SnapshotStore``).
extension SQLiteStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "?\($0)" } }

    public func putSnapshot(
        _ snapshot: String, keyEpoch: Int64, at cursor: Int64, of list: ListID, by account: Int64, time: Int64
    ) throws {
        try locked { db in
            // BEGIN IMMEDIATE: the store's write lock is held from the first read, so a rotation or
            // a removal waits for the snapshot, or the snapshot sees it.
            try db.transaction {
                guard
                    let (role, no, encrypted, listKeyEpoch, pushEpoch, lastSeq, logBytes) = try db.query(
                        Self.sql(SnapshotSQL.sender), .blob(list.raw.bytes), .integer(account),
                        map: {
                            (
                                $0.string(0) ?? "", $0.int64(1), $0.int64(2) != 0, $0.int64(3), $0.int64(4),
                                $0.int64(5), $0.int64(6)
                            )
                        }
                    ).first
                else { throw StoreError.noSuchList }
                try SnapshotSQL.check(
                    role: role, encrypted: encrypted, keyEpoch: keyEpoch, listKeyEpoch: listKeyEpoch,
                    pushEpoch: pushEpoch, cursor: cursor, lastSeq: lastSeq, bytes: snapshot.utf8.count,
                    logBytes: logBytes)
                try db.run(
                    Self.sql(SnapshotSQL.upsert), .integer(no), .integer(cursor), .text(snapshot), .integer(time))
            }
        }
    }

    public func snapshot(of list: ListID, for account: Int64) throws -> Wire.ListSnapshot? {
        try reading { db in
            let rows = try db.query(Self.sql(SnapshotSQL.snapshot), .blob(list.raw.bytes), .integer(account)) {
                row -> Wire.ListSnapshot? in
                guard let text = row.string(1) else { return nil }
                return Wire.ListSnapshot(
                    cursor: row.int64(0), snapshot: text, epoch: row.string(3) ?? "", made: row.int64(2))
            }
            guard let row = rows.first else { throw StoreError.noSuchList }
            return row
        }
    }
}
