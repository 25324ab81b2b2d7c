public import BasketCore
import Postgres
import Synchronization

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

// PostgresStore: converting a plain list (``SnapshotStore/convert(_:by:at:snapshot:keyEpoch:envelopes:time:)``).
extension PostgresStore {
    public func convert(
        _ list: ListID, by account: Int64, at cursor: Int64, snapshot: String, keyEpoch: Int64,
        envelopes: [Wire.EnvelopeDelivery.Envelope], time: Int64
    ) throws -> String {
        let sql = { (template: String) in SharedSQL.sql(template) { "$\($0)" } }
        let (no, epoch) = try connected { db in
            try db.transaction { () throws -> (Int64, String) in
                // The list's row locked, as a push locks it: pushes from every instance wait, then
                // see the list encrypted (the locked way) or miss the one-statement way's check.
                let sender = try db.prepared(
                    sql(SnapshotSQL.sender) + " FOR UPDATE OF l", [Self.listParameter(list), "\(account)"])
                guard sender.count == 1 else { throw StoreError.noSuchList }
                let no = sender.int64(0, 1)
                let keyed = try db.prepared(sql(KeySQL.keyedMembers), ["\(no)"])
                let keyless = try db.prepared(sql(SnapshotSQL.keylessMembers), ["\(no)"])
                try SnapshotSQL.checkConversion(
                    role: sender.string(0, 0) ?? "", encrypted: sender.bool(0, 2) == true, keyEpoch: keyEpoch,
                    cursor: cursor, lastSeq: sender.int64(0, 5), bytes: snapshot.utf8.count,
                    logBytes: sender.int64(0, 6), keyed: (0..<keyed.count).map { keyed.string($0, 0) ?? "" },
                    keyless: (0..<keyless.count).map { keyless.string($0, 0) ?? "" }, envelopes: envelopes)
                for envelope in envelopes {
                    let recipient = try db.prepared(sql(KeySQL.recipient), ["\(no)", envelope.account])
                    guard recipient.count == 1 else { throw StoreError.noSuchMember }
                    _ = try db.prepared(sql(KeySQL.upsert), ["\(no)", "\(recipient.int64(0, 0))", envelope.envelope])
                }
                let epoch = StoredOps.newEpoch()
                _ = try db.prepared(sql(SnapshotSQL.converted), ["\(no)", epoch])
                for statement in SnapshotSQL.droppedByConversion { _ = try db.prepared(sql(statement), ["\(no)"]) }
                _ = try db.prepared(sql(SnapshotSQL.upsert), ["\(no)", "\(cursor)", snapshot, "\(time)"])
                return (no, epoch)
            }
        }
        // This instance's table of the list's log is read again; the others' find the new epoch's
        // start (a push reads the list's row) and their entries of dropped rows gone.
        logs.withLock { $0.forget(no) }
        return epoch
    }
}
