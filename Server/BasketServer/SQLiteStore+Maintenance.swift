import BasketCore
import Foundation
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
        _ = try SQLiteStore(path: source)  // refuses what is not a store
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: source, toPath: path)
        try PrivateFile.prepare(path)
        return try SQLiteStore(path: path).renewEpochs()
    }

    /// Gives every list a new epoch: clients then see that this store forgot what they had
    /// pushed after the backup, and push everything again. Run after restoring a backup.
    public func renewEpochs() throws -> Int {
        defer { heads.invalidateAll() }  // once committed
        return try locked { db in
            try db.transaction {
                let lists = try db.query("SELECT no FROM lists") { $0.int64(0) }
                for no in lists {
                    try db.run("UPDATE lists SET epoch = ? WHERE no = ?", .text(StoredOps.newEpoch()), .integer(no))
                }
                return lists.count
            }
        }
    }

    public func compact(receivedBefore before: Int64) throws -> Int {
        defer { heads.invalidateAll() }  // once committed
        return try locked { db in
            try db.transaction {
                // One sorted pass: every operation that is not the latest of its register.
                try db.run(
                    """
                    CREATE TEMP TABLE doomed AS SELECT list, seq, bytes FROM (
                        SELECT list, seq, received, \(Self.rowBytes) AS bytes, row_number() OVER (
                            PARTITION BY list, item, field ORDER BY ts DESC, replica DESC) AS rank
                        FROM ops)
                    WHERE rank > 1 AND received < ?1
                    """, .integer(before))
                defer { try? db.execute("DROP TABLE IF EXISTS temp.doomed") }
                try db.execute(
                    """
                    UPDATE lists SET compacted_through = max(compacted_through,
                            (SELECT max(seq) FROM doomed d WHERE d.list = lists.no)),
                        dropped = dropped + (SELECT count(*) FROM doomed d WHERE d.list = lists.no),
                        bytes = bytes - (SELECT sum(bytes) FROM doomed d WHERE d.list = lists.no)
                    WHERE no IN (SELECT list FROM doomed);
                    DELETE FROM ops WHERE (list, seq) IN (SELECT list, seq FROM doomed);
                    """)
                return db.changes
            }
        }
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
