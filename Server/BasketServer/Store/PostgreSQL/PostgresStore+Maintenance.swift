import BasketCore
import Foundation
import Postgres
import Synchronization

// PostgresStore: maintenance.
extension PostgresStore {
    public func statistics() throws -> StoreStatistics {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT (SELECT coalesce(sum(last_seq - dropped), 0) FROM lists), (SELECT count(*) FROM lists),
                    (SELECT count(*) FROM accounts),
                    pg_database_size(current_database())
                """)
            return StoreStatistics(
                operations: rows.int64(0, 0), lists: rows.int64(0, 1), accounts: rows.int64(0, 2),
                databaseBytes: rows.int64(0, 3))
        }
    }

    /// Gives every list a new epoch (after restoring a backup made with pg_dump: clients then
    /// push again what the backup does not hold). Returns the lists renewed.
    public func renewEpochs() throws -> Int {
        try connected { db in
            // 16 hex digits, as StoredOps.newEpoch makes them.
            try db.query(
                """
                UPDATE lists SET epoch = substr(md5(random()::text || no::text || clock_timestamp()::text), 1, 16),
                    epoch_started = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                """
            )
            .changed
        }
    }
}
