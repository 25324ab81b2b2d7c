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

// SQLiteStore: converting a plain list (``SnapshotStore/convert(_:by:at:snapshot:keyEpoch:envelopes:time:)``).
extension SQLiteStore {
    public func convert(
        _ list: ListID, by account: Int64, at cursor: Int64, snapshot: String, keyEpoch: Int64,
        envelopes: [Wire.EnvelopeDelivery.Envelope], time: Int64
    ) throws -> String {
        defer { heads.invalidate(list) }  // once committed
        let sql = { (template: String) in SharedSQL.sql(template) { "?\($0)" } }
        return try locked { db in
            // What is dropped is overwritten, not only freed: the plain log leaves the file's pages,
            // and the checkpoint after leaves the write-ahead log empty.
            try db.execute("PRAGMA secure_delete = ON")
            defer { try? db.execute("PRAGMA secure_delete = OFF") }
            // BEGIN IMMEDIATE: the store's one writer, so no push lands between the check of the
            // log's end and the drop of the plain log.
            let (no, epoch) = try db.transaction { () throws -> (Int64, String) in
                guard
                    let (role, no, encrypted, _, _, lastSeq, logBytes) = try db.query(
                        sql(SnapshotSQL.sender), .blob(list.raw.bytes), .integer(account),
                        map: {
                            (
                                $0.string(0) ?? "", $0.int64(1), $0.int64(2) != 0, $0.int64(3), $0.int64(4),
                                $0.int64(5), $0.int64(6)
                            )
                        }
                    ).first
                else { throw StoreError.noSuchList }
                let keyed = try db.query(sql(KeySQL.keyedMembers), .integer(no)) { $0.string(0) ?? "" }
                let keyless = try db.query(sql(SnapshotSQL.keylessMembers), .integer(no)) { $0.string(0) ?? "" }
                try SnapshotSQL.checkConversion(
                    role: role, encrypted: encrypted, keyEpoch: keyEpoch, cursor: cursor, lastSeq: lastSeq,
                    bytes: snapshot.utf8.count, logBytes: logBytes, keyed: keyed, keyless: keyless,
                    envelopes: envelopes)
                for envelope in envelopes {
                    guard
                        let recipient = try db.query(
                            sql(KeySQL.recipient), .integer(no), .text(envelope.account), map: { $0.int64(0) }
                        ).first
                    else { throw StoreError.noSuchMember }
                    try db.run(sql(KeySQL.upsert), .integer(no), .integer(recipient), .text(envelope.envelope))
                }
                let epoch = StoredOps.newEpoch()
                try db.run(sql(SnapshotSQL.converted), .integer(no), .text(epoch))
                for statement in SnapshotSQL.droppedByConversion { try db.run(sql(statement), .integer(no)) }
                try db.run(sql(SnapshotSQL.upsert), .integer(no), .integer(cursor), .text(snapshot), .integer(time))
                return (no, epoch)
            }
            // The writer's table of the list's items and operations is read again: the log is gone.
            logs.forget(no)
            _ = try? db.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
            return epoch
        }
    }
}
