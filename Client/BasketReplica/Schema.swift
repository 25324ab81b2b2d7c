import BasketCore
import SQLite

/// The replica file's schema and its migrations, versioned by `PRAGMA user_version`.
enum Schema {
    /// Migration `n` takes the schema from version `n` to `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
        CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE lists(
            no INTEGER PRIMARY KEY,
            id BLOB NOT NULL UNIQUE,
            title TEXT
        );
        -- One row per item, and one per list (id = 16 zero bytes) for the list's own registers.
        -- name … category are the winning values, for reading; `registers` holds the winning writes
        -- and `history` every write ever seen (binary records, see Records.swift).
        CREATE TABLE items(
            list INTEGER NOT NULL REFERENCES lists(no),
            id BLOB NOT NULL,
            name TEXT,
            checked INTEGER NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0,
            quantity TEXT,
            note TEXT,
            category TEXT,
            registers BLOB NOT NULL,
            history BLOB NOT NULL,
            PRIMARY KEY(list, id)
        ) WITHOUT ROWID;
        -- Local writes not yet acknowledged by a server.
        CREATE TABLE outbox(
            seq INTEGER PRIMARY KEY,
            list BLOB NOT NULL,
            item BLOB NOT NULL,
            record BLOB NOT NULL
        );
        """,
        """
        -- Where each list stands with the server: its epoch there, the cursor of the last page
        -- applied (written in the same transaction as the page), and whether it was registered.
        CREATE TABLE sync_lists(
            list BLOB PRIMARY KEY,
            epoch TEXT,
            cursor INTEGER NOT NULL DEFAULT 0,
            registered INTEGER NOT NULL DEFAULT 0,
            last_sync INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX outbox_by_list ON outbox(list, seq);
        """,
        """
        -- Whether the server had compacted writes this replica never received (a page answered
        -- historyComplete = false): item histories of the list lack the superseded writes.
        ALTER TABLE sync_lists ADD COLUMN history_incomplete INTEGER NOT NULL DEFAULT 0;
        """,
        """
        -- This account's role on the list as the server last said it (NULL: not known), and
        -- whether the server no longer has the account as a member (removed, left, list deleted):
        -- writes to a viewer's or a former member's copy are refused before anything is written.
        ALTER TABLE sync_lists ADD COLUMN role TEXT;
        ALTER TABLE sync_lists ADD COLUMN gone INTEGER NOT NULL DEFAULT 0;
        """,
        """
        -- The undo journal: one step per local command (its writes), newest last, at most 50;
        -- for each (item, field) it wrote, the register before it (NULL: none) and whether the
        -- item existed. A step too large to journal is a barrier (journaled = 0).
        CREATE TABLE undo_steps(
            step INTEGER PRIMARY KEY,
            writes INTEGER NOT NULL,
            journaled INTEGER NOT NULL
        );
        CREATE TABLE undo(
            step INTEGER NOT NULL,
            list BLOB NOT NULL,
            item BLOB NOT NULL,
            field INTEGER NOT NULL,
            existed INTEGER NOT NULL,
            before BLOB,
            PRIMARY KEY(step, list, item, field)
        ) WITHOUT ROWID;
        """,
        """
        -- A list removed from this device is a step of the journal too (journaled = 2, its title
        -- here): undo then says it cannot bring the list back, rather than undoing a step made
        -- on another list.
        ALTER TABLE undo_steps ADD COLUMN removed_list TEXT;
        """,
        """
        -- The outbox keeps each write as it is sent: its line of the text encoding (see
        -- OperationCodec), so a push joins lines and encodes nothing. Filled from `record` by
        -- `textOutbox` before the next migration drops that column.
        ALTER TABLE outbox ADD COLUMN line BLOB NOT NULL DEFAULT x'';
        """,
        """
        ALTER TABLE outbox DROP COLUMN record;
        """,
        """
        -- The line an item was last added with, when it said more than the name (Field.typed).
        ALTER TABLE items ADD COLUMN typed TEXT;
        """,
        """
        -- What other devices did that this one has not shown yet (Replica+News.swift): the items
        -- another replica added or changed since the list was last shown, one row per item, and
        -- this device's writes another member's later write replaced, until they are told.
        CREATE TABLE news(
            list BLOB NOT NULL,
            item BLOB NOT NULL,
            replica INTEGER NOT NULL,
            added INTEGER NOT NULL,
            PRIMARY KEY(list, item)
        ) WITHOUT ROWID;
        CREATE TABLE lost(
            seq INTEGER PRIMARY KEY,
            list BLOB NOT NULL,
            item BLOB NOT NULL,
            field INTEGER NOT NULL,
            mine TEXT,
            theirs TEXT,
            replica INTEGER NOT NULL
        );
        """,
        """
        -- Shops and usuals (Replica+Shops.swift): an item's shop marks, its aisle per shop and
        -- when it stopped being a usual; every check-off seen on it (a `checked = true` write: its
        -- hybrid timestamp and replica, 16 bytes each, in the order seen; Purchases.swift) and how
        -- many, written with the row by the merge, so the usuals and a trip's order are found
        -- without reading histories; shop rows (registers only, no name) found without a scan.
        ALTER TABLE items ADD COLUMN shops TEXT;
        ALTER TABLE items ADD COLUMN places TEXT;
        ALTER TABLE items ADD COLUMN dismissed TEXT;
        ALTER TABLE items ADD COLUMN purchases INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE items ADD COLUMN checks BLOB NOT NULL DEFAULT x'';
        CREATE INDEX items_usuals ON items(list, purchases) WHERE purchases >= 3;
        CREATE INDEX items_unnamed ON items(list) WHERE name IS NULL;
        """,
    ]

    /// The migration after which ``fillPurchases(_:)`` runs.
    static let purchasesMigration = 10

    /// The migration after which ``textOutbox(_:)`` runs.
    static let outboxLinesMigration = 6

    static func migrate(_ db: Connection) throws {
        do {
            try db.migrate(migrations) { version in
                if version == outboxLinesMigration { try textOutbox(db) }
                if version == purchasesMigration { try fillPurchases(db) }
            }
        } catch let error as SchemaTooNewError {
            throw ReplicaError.newerSchema(found: error.found, supported: error.supported)
        }
    }

    /// Notes every check-off the items' histories hold (a file made before shops and usuals).
    static func fillPurchases(_ db: Connection) throws {
        let rows = try db.prepare("SELECT list, id, history FROM items WHERE name IS NOT NULL")
        var found: [(Int64, [UInt8], [Version])] = []
        while let row = try rows.step() {
            var versions: [Version] = []
            try row.withBlob(2) { blob in
                try Records.forEach(in: blob) { field, register in
                    if field == .checked, register.value == .bool(true) { versions.append(register.version) }
                }
            }
            if !versions.isEmpty { found.append((row.int64(0), row.blob(1), versions)) }
        }
        let update = try db.prepare("UPDATE items SET purchases = ?3, checks = ?4 WHERE list = ?1 AND id = ?2")
        for (list, item, versions) in found {
            try update.bind(list, at: 1)
            try update.bind(item, at: 2)
            try update.bind(Int64(versions.count), at: 3)
            try update.bind(Purchases.encode(versions), at: 4)
            try update.runToCompletion()
        }
    }

    /// Writes each outbox row's line from its binary record (a file made before lines).
    static func textOutbox(_ db: Connection) throws {
        let rows = try db.query("SELECT seq, list, item, record FROM outbox") { row throws -> (Int64, [UInt8]) in
            let list = ListID(raw: ID128(row.blob128(1)))
            let item = ItemID(raw: ID128(row.blob128(2)))
            guard let entry = try Records.decode(row.blob(3)).first else {
                throw ReplicaError.corrupt("an empty outbox record")
            }
            var line: [UInt8] = []
            OperationCodec.appendLine(
                Op(
                    list: list, item: item, field: entry.field, value: entry.register.value,
                    version: entry.register.version),
                to: &line)
            return (row.int64(0), line)
        }
        for (seq, line) in rows {
            try db.run("UPDATE outbox SET line = ? WHERE seq = ?", .blob(line), .integer(seq))
        }
    }
}
