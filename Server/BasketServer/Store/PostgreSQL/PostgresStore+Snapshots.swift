public import BasketCore
import Postgres

// PostgresStore: snapshots of encrypted lists (``SnapshotStore``).
extension PostgresStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "$\($0)" } }

    public func putSnapshot(
        _ snapshot: String, keyEpoch: Int64, at cursor: Int64, of list: ListID, by account: Int64, time: Int64
    ) throws {
        try connected { db in
            try db.transaction {
                // The list's row shared and the sender's membership: a rotation (which locks the row)
                // or a removal waits for the snapshot, or the snapshot sees it.
                let sender = try db.prepared(
                    Self.sql(SnapshotSQL.sender) + " FOR SHARE", [Self.listParameter(list), "\(account)"])
                guard sender.count == 1 else { throw StoreError.noSuchList }
                try SnapshotSQL.check(
                    role: sender.string(0, 0) ?? "", encrypted: sender.bool(0, 2) == true, keyEpoch: keyEpoch,
                    listKeyEpoch: sender.int64(0, 3), pushEpoch: sender.int64(0, 4), cursor: cursor,
                    lastSeq: sender.int64(0, 5), bytes: snapshot.utf8.count, logBytes: sender.int64(0, 6))
                _ = try db.prepared(
                    Self.sql(SnapshotSQL.upsert), ["\(sender.int64(0, 1))", "\(cursor)", snapshot, "\(time)"])
            }
        }
    }

    public func snapshot(of list: ListID, for account: Int64) throws -> Wire.ListSnapshot? {
        try connected { db in
            let rows = try db.prepared(Self.sql(SnapshotSQL.snapshot), [Self.listParameter(list), "\(account)"])
            guard rows.count == 1 else { throw StoreError.noSuchList }
            guard let text = rows.string(0, 1) else { return nil }
            return Wire.ListSnapshot(
                cursor: rows.int64(0, 0), snapshot: text, epoch: rows.string(0, 3) ?? "", made: rows.int64(0, 2))
        }
    }
}
