import BasketCore
import Foundation
import PrivateFiles
import SQLite

/// Looking after the store: compaction, statistics, backup and restore.
extension SQLiteStore {
    /// Writes a consistent copy of the store to `path` (`VACUUM INTO`), while it keeps serving.
    public func backup(to path: String) throws {
        // VACUUM INTO takes an empty file: made first, 0600 and exclusively, so a backup of
        // everyone's lists is never readable by others and never overwrites a file.
        try PrivateFile.createExclusively(path)
        try locked { try $0.run("VACUUM INTO ?", .text(path)) }
    }

    /// Replaces the store at `path` (stopped) with the backup at `source` and gives every list a
    /// new epoch, so clients push again what the backup does not hold. Returns the lists renewed.
    public static func restore(from source: String, into path: String) throws -> Int {
        try SQLiteStore(path: source).close()  // refuses what is not a store
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: source, toPath: path)
        try PrivateFile.prepare(path)
        let restored = try SQLiteStore(path: path)
        defer { restored.close() }
        return try restored.renewEpochs()
    }

    /// Gives every list a new epoch: clients then see that this store forgot what they had
    /// pushed after the backup, and push everything again. Run after restoring a backup.
    public func renewEpochs() throws -> Int {
        defer { heads.invalidateAll() }  // once committed
        return try locked { db in
            try db.transaction {
                let lists = try db.query("SELECT no FROM lists") { $0.int64(0) }
                let now = Int64(HybridClock.wallClockMilliseconds())
                for no in lists {
                    try db.run(
                        "UPDATE lists SET epoch = ?, epoch_started = ? WHERE no = ?", .text(StoredOps.newEpoch()),
                        .integer(now), .integer(no))
                }
                return lists.count
            }
        }
    }

    /// Drops every operation a later one of its register has superseded, received before
    /// `before`: list by list, each in a transaction of its own, so pushes go on in between.
    public func compact(receivedBefore before: Int64) throws -> Int {
        defer { heads.invalidateAll() }  // once committed
        let lists = try locked { db in
            try db.query("SELECT DISTINCT list FROM pushes WHERE received < ?", .integer(before)) { $0.int64(0) }
        }
        var dropped = 0
        for no in lists {
            dropped += try locked { db in try db.transaction { try compact(no, receivedBefore: before, db) } }
        }
        return dropped
    }

    /// Compacts list `no`'s log (`PushRecords/compact(_:receivedBefore:)`); returns the
    /// operations dropped.
    private func compact(_ no: Int64, receivedBefore before: Int64, _ db: Connection) throws -> Int {
        let read = try db.cached("SELECT last_seq, received, ops FROM pushes WHERE list = ? ORDER BY last_seq")
        try read.bind(no, at: 1)
        var rows: [PushRecords.StoredRow] = []
        while let row = try read.step() {
            rows.append(.init(lastSeq: row.int64(0), received: row.int64(1), ops: row.blob(2)))
        }
        read.reset()
        let compaction = try PushRecords.compact(rows, receivedBefore: before)
        for (lastSeq, ops, count) in compaction.rewritten {
            if let ops {
                try db.run(
                    "UPDATE pushes SET ops = ?, count = ? WHERE list = ? AND last_seq = ?", .blob(ops),
                    .integer(Int64(count)), .integer(no), .integer(lastSeq))
            } else {
                try db.run("DELETE FROM pushes WHERE list = ? AND last_seq = ?", .integer(no), .integer(lastSeq))
            }
        }
        if compaction.dropped > 0 {
            try db.run(
                """
                UPDATE lists SET compacted_through = max(compacted_through, ?), dropped = dropped + ?,
                    bytes = bytes - ?, items = items - ? WHERE no = ?
                """, .integer(compaction.top), .integer(Int64(compaction.dropped)), .integer(compaction.bytes),
                .integer(compaction.items), .integer(no))
        }
        for (replica, freed) in compaction.freed {
            try db.run(
                SQLiteStore.freeMemberUsageSQL, .integer(no), .integer(replica), .integer(freed.items),
                .integer(freed.bytes))
        }
        // Items dropped whole: the writer's table of the list's items is read again.
        if compaction.items > 0 { logs.forget(no) }
        return compaction.dropped
    }

    public func statistics() throws -> StoreStatistics {
        try locked { db in
            let pageCount = try db.scalar("PRAGMA page_count")?.integerValue ?? 0
            let pageSize = try db.scalar("PRAGMA page_size")?.integerValue ?? 0
            return StoreStatistics(
                operations: try db.scalar("SELECT coalesce(sum(last_seq - dropped), 0) FROM lists")?.integerValue ?? 0,
                lists: try db.scalar("SELECT count(*) FROM lists")?.integerValue ?? 0,
                accounts: try db.scalar("SELECT count(*) FROM accounts")?.integerValue ?? 0,
                databaseBytes: pageCount * pageSize)
        }
    }
}
