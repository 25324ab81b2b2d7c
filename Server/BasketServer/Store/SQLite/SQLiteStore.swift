import BasketCore
import Foundation
import SQLite
import Synchronization

/// The embedded store: one SQLite file (WAL). Every write goes through one connection behind a
/// lock; the reads requests make most (sessions, lists, pages, heads) go through a few read-only
/// connections of their own, so they neither wait for a push's commit nor queue on one lock.
public final class SQLiteStore: Store, @unchecked Sendable {
    // `@unchecked Sendable`: `db` is only used while `lock` is held (an NSLock: a connection is not
    // Sendable, so it cannot live inside a Mutex; state that is lives in one); each reader likewise.
    private let lock = NSLock()
    private let db: Connection
    private let readers: [Reader]
    private let nextReader = Atomic(0)
    /// Lists' heads and members' roles in memory: this process is the file's only writer.
    let heads = ListHeads(capacity: 100_000, milliseconds: 2_000)
    /// The items lists have held and their operations' identities, for pushes; used only under
    /// `lock`. At most 4M entries (their tables take 27 to 80 bytes each): past it, the lists pushed to least
    /// recently are read again from the file at their next push, which costs a scan of their log.
    var logs = ListLogs(capacity: 4_000_000)
    /// The file's `data_version` when `logs` was last known to be up to date; used only under `lock`.
    var dataVersion: Int64?
    /// The store's file.
    public let path: String
    /// The schema versions opening this store applied (empty when it was up to date).
    public let appliedMigrations: Range<Int>
    /// Group commit: pushes waiting for the writer thread, and whether it runs.
    struct AppendQueue {
        var pending: [PendingAppend] = []
        var writerRunning = false
    }
    let queue = Mutex(AppendQueue())
    /// Signalled for every push queued while the writer thread runs.
    let writerWake = DispatchSemaphore(value: 0)
    /// Entered while a writer thread runs: ``close()`` waits for it.
    let writerThreads = DispatchGroup()
    /// Set by ``close()``: every later use of the store is refused (``StoreError/unavailable``).
    let isClosed = Atomic(false)

    static let migrations: [String] = [
        """
        CREATE TABLE accounts(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            password TEXT NOT NULL
        );
        CREATE TABLE tokens(
            hash TEXT PRIMARY KEY,
            account INTEGER NOT NULL REFERENCES accounts(id),
            created INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE lists(
            no INTEGER PRIMARY KEY,
            id BLOB NOT NULL UNIQUE,
            epoch TEXT NOT NULL,
            last_seq INTEGER NOT NULL DEFAULT 0,
            compacted_through INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE members(
            list INTEGER NOT NULL REFERENCES lists(no),
            account INTEGER NOT NULL REFERENCES accounts(id),
            role TEXT NOT NULL,
            PRIMARY KEY(list, account)
        ) WITHOUT ROWID;
        CREATE INDEX members_by_account ON members(account);
        CREATE TABLE invites(
            code TEXT PRIMARY KEY,
            list INTEGER NOT NULL REFERENCES lists(no),
            role TEXT NOT NULL,
            created_by INTEGER NOT NULL,
            expires INTEGER NOT NULL
        ) WITHOUT ROWID;
        -- The log: one row per accepted operation. value is NULL, 0/1 (booleans) or TEXT.
        -- replica is stored with its top bit flipped so SQL's signed order is the unsigned order.
        CREATE TABLE ops(
            list INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            item BLOB NOT NULL,
            field INTEGER NOT NULL,
            ts INTEGER NOT NULL,
            replica INTEGER NOT NULL,
            value,
            received INTEGER NOT NULL,
            PRIMARY KEY(list, seq)
        ) WITHOUT ROWID;
        -- Identity of an operation, for idempotent pushes. Timestamp first: new operations are
        -- recent, so they land at the end of the index and a commit dirties few pages (with the
        -- random item id first, each insert dirtied its own page and pushes ran 3x slower).
        CREATE UNIQUE INDEX ops_identity ON ops(list, ts, replica, item, field);
        """,
        // 2: operations compaction dropped, per list, so the store's size in operations is a sum
        // over lists instead of a count over the whole log.
        SQLiteStore.countDropped,
        // 3: tokens with a public id, a device name and a last use; invites stored by their code's
        // hash with a number of uses (the plain-text invites of schema 2 are dropped: they expire
        // within days, and no code may stay readable); signup invites.
        """
        ALTER TABLE tokens ADD COLUMN id TEXT;
        ALTER TABLE tokens ADD COLUMN device TEXT NOT NULL DEFAULT '';
        ALTER TABLE tokens ADD COLUMN last_used INTEGER NOT NULL DEFAULT 0;
        UPDATE tokens SET id = lower(hex(randomblob(8))), last_used = created;
        CREATE UNIQUE INDEX tokens_by_id ON tokens(id);
        CREATE INDEX tokens_by_account ON tokens(account);
        DROP TABLE invites;
        CREATE TABLE invites(
            hash TEXT PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            list INTEGER NOT NULL REFERENCES lists(no),
            role TEXT NOT NULL,
            created_by INTEGER NOT NULL,
            created INTEGER NOT NULL,
            expires INTEGER NOT NULL,
            uses_left INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX invites_by_list ON invites(list);
        -- Who used which invite: a member removed from a list cannot come back with a code they used.
        CREATE TABLE invite_uses(
            hash TEXT NOT NULL,
            account INTEGER NOT NULL,
            PRIMARY KEY(hash, account)
        ) WITHOUT ROWID;
        CREATE TABLE signup_invites(
            hash TEXT PRIMARY KEY,
            created INTEGER NOT NULL,
            expires INTEGER NOT NULL,
            uses_left INTEGER NOT NULL
        ) WITHOUT ROWID;
        -- Quotas: what each list holds, kept up to date by pushes and compaction.
        ALTER TABLE lists ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE lists ADD COLUMN items INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE list_items(
            list INTEGER NOT NULL,
            item BLOB NOT NULL,
            PRIMARY KEY(list, item)
        ) WITHOUT ROWID;
        DELETE FROM list_items;
        INSERT OR IGNORE INTO list_items(list, item) SELECT list, item FROM ops;
        UPDATE lists SET bytes = (SELECT coalesce(sum(\(rowBytes)), 0) FROM ops WHERE ops.list = lists.no),
            items = (SELECT count(*) FROM list_items WHERE list_items.list = lists.no);
        """,
        // 4: no list_items: a row per item, keyed by its random id, dirtied a page of its own for
        // every new item and halved push ingest. The items a list has held are its log's distinct
        // items (compaction keeps every register's latest operation), read when a push first needs
        // them (``ItemSets``); lists.items keeps the count.
        "DROP TABLE list_items;",
        // 5: no identity index: its insert was half of a push's cost. The writer knows the
        // identities of each list's operations from its log (``ListLogs``), as it knows its items.
        "DROP INDEX ops_identity;",
        // 6: the log as a row per push, its operations packed as records (``PushRecords``): a
        // push writes one row instead of a B-tree entry per operation. ``packLog(_:)`` moves the
        // operations of `ops` into it and drops `ops`.
        """
        CREATE TABLE pushes(
            list INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            count INTEGER NOT NULL,
            received INTEGER NOT NULL,
            ops BLOB NOT NULL,
            PRIMARY KEY(list, last_seq)
        );
        """,
        // 7: who made each list (the list quota counts it while it exists), when its epoch began
        // (operations stamped before may be relayed by any member after a restore), and the
        // account each replica id of a list belongs to (the first to push it there); an invite's
        // title (the list's, as its maker's device had it).
        """
        ALTER TABLE lists ADD COLUMN created_by INTEGER;
        ALTER TABLE lists ADD COLUMN epoch_started INTEGER NOT NULL DEFAULT 0;
        UPDATE lists SET created_by =
            (SELECT min(account) FROM members WHERE members.list = lists.no AND role = 'owner');
        CREATE TABLE replicas(
            list INTEGER NOT NULL,
            replica INTEGER NOT NULL,
            account INTEGER NOT NULL,
            PRIMARY KEY(list, replica)
        ) WITHOUT ROWID;
        ALTER TABLE invites ADD COLUMN title TEXT;
        """,
        // 8: each member's replica ids in order (the members answer reads a member's first ones; a
        // push counts them against the limits) and lists by who made them (an account's list count):
        // index ranges, each bounded by a limit, instead of scans of every row; what each member who
        // is not an owner added to a list (its share of the list's quotas).
        """
        CREATE INDEX replicas_by_account ON replicas(list, account, replica);
        CREATE INDEX lists_by_creator ON lists(created_by);
        CREATE TABLE member_usage(
            list INTEGER NOT NULL,
            account INTEGER NOT NULL,
            items INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            PRIMARY KEY(list, account)
        ) WITHOUT ROWID;
        """,
        // 9: Web Push: the server's VAPID key pair, each device's subscriptions and the lists they
        // hear of, each list's next push. Subscriptions end with their token, and a list with the
        // subscriber's membership (triggers: this store does not enforce foreign keys). Who is
        // shopping for which list (a row per member, ended or expired rows kept until the next).
        """
        CREATE TABLE push_key(
            slot INTEGER PRIMARY KEY CHECK (slot = 1),
            private BLOB NOT NULL,
            public BLOB NOT NULL,
            created INTEGER NOT NULL
        );
        CREATE TABLE push_subscriptions(
            id TEXT PRIMARY KEY,
            account INTEGER NOT NULL,
            token TEXT NOT NULL,
            endpoint TEXT NOT NULL UNIQUE,
            p256dh TEXT NOT NULL,
            auth TEXT NOT NULL,
            kinds INTEGER NOT NULL,
            created INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX push_subscriptions_by_account ON push_subscriptions(account, created);
        CREATE INDEX push_subscriptions_by_token ON push_subscriptions(token);
        CREATE TABLE push_lists(
            list INTEGER NOT NULL,
            subscription TEXT NOT NULL,
            PRIMARY KEY(list, subscription)
        ) WITHOUT ROWID;
        CREATE INDEX push_lists_by_subscription ON push_lists(subscription);
        CREATE TABLE push_slots(
            list INTEGER PRIMARY KEY,
            next INTEGER NOT NULL
        );
        CREATE TRIGGER push_ends_with_token AFTER DELETE ON tokens BEGIN
            DELETE FROM push_subscriptions WHERE token = OLD.hash;
        END;
        CREATE TRIGGER push_ends_with_subscription AFTER DELETE ON push_subscriptions BEGIN
            DELETE FROM push_lists WHERE subscription = OLD.id;
        END;
        CREATE TRIGGER push_ends_with_membership AFTER DELETE ON members BEGIN
            DELETE FROM push_lists WHERE list = OLD.list
                AND subscription IN (SELECT id FROM push_subscriptions WHERE account = OLD.account);
        END;
        CREATE TRIGGER push_ends_with_list AFTER DELETE ON lists BEGIN
            DELETE FROM push_slots WHERE list = OLD.no;
        END;
        CREATE TABLE shopping(
            list INTEGER NOT NULL,
            account INTEGER NOT NULL,
            shop TEXT,
            since INTEGER NOT NULL,
            until INTEGER NOT NULL,
            ended INTEGER,
            bought INTEGER,
            PRIMARY KEY(list, account)
        ) WITHOUT ROWID;
        CREATE TRIGGER shopping_ends_with_membership AFTER DELETE ON members BEGIN
            DELETE FROM shopping WHERE list = OLD.list AND account = OLD.account;
            DELETE FROM add_keys WHERE list = OLD.list AND created_by = OLD.account;
        END;
        CREATE TABLE add_keys(
            id TEXT PRIMARY KEY,
            hash TEXT NOT NULL UNIQUE,
            list INTEGER NOT NULL,
            name TEXT NOT NULL,
            created_by INTEGER NOT NULL,
            created INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX add_keys_by_list ON add_keys(list);
        CREATE TABLE inbox(
            id TEXT PRIMARY KEY,
            list INTEGER NOT NULL,
            name TEXT NOT NULL,
            text TEXT NOT NULL,
            at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX inbox_by_list ON inbox(list, at);
        CREATE TRIGGER inbox_ends_with_list AFTER DELETE ON lists BEGIN
            DELETE FROM add_keys WHERE list = OLD.no;
            DELETE FROM inbox WHERE list = OLD.no;
        END;
        """,
        // 10: lists encrypted end to end (docs/encryption.md): their registers hold sealed values only.
        """
        ALTER TABLE lists ADD COLUMN encrypted INTEGER NOT NULL DEFAULT 0;
        """,
        // 11: each account's key pair for encrypted lists, its private key wrapped on a device
        // (under the password's key and the recovery code's), the hash of what the recovery code
        // signs in with; each member's envelope of a list's keys, gone with the membership.
        """
        ALTER TABLE accounts ADD COLUMN public_key TEXT;
        ALTER TABLE accounts ADD COLUMN wrapped_key TEXT;
        ALTER TABLE accounts ADD COLUMN recovery_key TEXT;
        ALTER TABLE accounts ADD COLUMN recovery_hash TEXT;
        CREATE TABLE envelopes(
            list INTEGER NOT NULL,
            account INTEGER NOT NULL,
            envelope TEXT NOT NULL,
            PRIMARY KEY(list, account)
        ) WITHOUT ROWID;
        CREATE TRIGGER envelope_ends_with_membership AFTER DELETE ON members BEGIN
            DELETE FROM envelopes WHERE list = OLD.list AND account = OLD.account;
        END;
        CREATE TRIGGER envelopes_end_with_list AFTER DELETE ON lists BEGIN
            DELETE FROM envelopes WHERE list = OLD.no;
        END;
        """,  // 12: an encrypted list's key epochs: the newest its members hold (`key_epoch`) and the
        // oldest a push may seal under (`push_epoch`; past `key_epoch` while a rotation is due,
        // after a member left or was removed).
        """
        ALTER TABLE lists ADD COLUMN key_epoch INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE lists ADD COLUMN push_epoch INTEGER NOT NULL DEFAULT 0;
        """,
        // 13: each encrypted list's newest snapshot, sealed on an owner's device (SnapshotStore).
        """
        CREATE TABLE snapshots(
            list INTEGER PRIMARY KEY,
            at_seq INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            made INTEGER NOT NULL
        );
        CREATE TRIGGER snapshot_ends_with_list AFTER DELETE ON lists BEGIN
            DELETE FROM snapshots WHERE list = OLD.no;
        END;
        """,
    ]

    /// Migration 6's work in code: the operations of `ops` as rows of `pushes`, list by list
    /// (runs received at once, up to 1,000 a row, as an import packs them); then `ops` goes.
    static func packLog(_ db: Connection) throws {
        let scan = try db.prepare(
            "SELECT list, seq, item, field, ts, replica, value, received FROM ops ORDER BY list, seq")
        var list: [[DumpValue]] = []
        func flush() throws {
            try insert(PushRecords.pack(list).rows, db)
            list.removeAll(keepingCapacity: true)
        }
        while let row = try scan.step() {
            if let last = list.last, last[0] != .integer(row.int64(0)) { try flush() }
            list.append((0..<8).map { dumpValue(row.value(Int32($0))) })
        }
        try flush()
        try db.execute("DROP TABLE ops")
    }

    /// Writes rows of `pushes`.
    static func insert(_ rows: [PushRecords.PackedRow], _ db: Connection) throws {
        let insert = try db.cached(
            "INSERT INTO pushes(list, last_seq, first_seq, count, received, ops) VALUES (?, ?, ?, ?, ?, ?)")
        for row in rows {
            try insert.bind(row.list, at: 1)
            try insert.bind(row.lastSeq, at: 2)
            try insert.bind(row.firstSeq, at: 3)
            try insert.bind(Int64(row.count), at: 4)
            try insert.bind(row.received, at: 5)
            try insert.bind(row.ops, at: 6)
            try insert.runToCompletion()
        }
    }

    /// A dump's value as a column has it.
    static func sqlValue(_ value: DumpValue) -> SQLValue {
        switch value {
        case .null: .null
        case .integer(let n): .integer(n)
        case .text(let text): .text(text)
        case .blob(let bytes): .blob(bytes)
        }
    }

    /// A column's value as a dump has it (no column holds reals).
    static func dumpValue(_ value: SQLValue) -> DumpValue {
        switch value {
        case .null: .null
        case .integer(let n): .integer(n)
        case .real(let d): .integer(Int64(d))
        case .text(let text): .text(text)
        case .blob(let bytes): .blob(bytes)
        }
    }

    /// The bytes an operation row counts against its list's quota (``ListLimits/bytes(of:)``).
    static let rowBytes = "(coalesce(length(CAST(value AS BLOB)) * (typeof(value) = 'text'), 0) + 64)"

    /// Adds `lists.dropped` and fills it from the log (migration 2).
    static let countDropped = """
        ALTER TABLE lists ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
        \(recountDropped)
        """

    /// Sets `lists.dropped` from the log of migration 2: every sequence number given out and no
    /// longer there.
    static let recountDropped =
        "UPDATE lists SET dropped = last_seq - (SELECT count(*) FROM ops WHERE ops.list = lists.no);"

    /// Opens or creates the store at `path`, migrating it. The server answers a push only after
    /// its transaction committed; with `fsyncEveryCommit` that commit also survives power loss
    /// (WAL with synchronous=FULL), otherwise it survives a crash of the process (NORMAL).
    public init(path: String, fsyncEveryCommit: Bool = true) throws {
        self.path = path
        db = try Connection(path: path)
        try db.configure(synchronous: fsyncEveryCommit ? .full : .normal)
        // A larger page cache and memory-mapped reads: pushes insert into a random-keyed index.
        try db.execute("PRAGMA cache_size = -65536; PRAGMA mmap_size = 268435456")
        do {
            appliedMigrations = try db.migrate(Self.migrations) { [db] migration in
                if migration == 5 { try Self.packLog(db) }
            }
        } catch let error as SchemaTooNewError {
            throw StoreError.newerSchema(found: error.found, supported: error.supported)
        }
        // A private in-memory database has no file for other connections to open.
        readers = try path == ":memory:" ? [] : (0..<Self.readerCount).map { _ in try Reader(path: path) }
    }

    public func gauges() -> [StoreGauge] {
        lock.withLock { logs.gauges(prefix: "basket_sqlite") }
    }

    /// Read connections: as many as the server's default HTTP threads.
    static let readerCount = 4

    /// A read-only connection and its lock.
    private final class Reader: @unchecked Sendable {
        let lock = NSLock()
        let db: Connection

        init(path: String) throws {
            db = try Connection(path: path)
            // Small caches and no mapping of their own: four readers must not each hold a copy of
            // the pages a large pull reads (the OS's page cache holds them once).
            try db.execute("PRAGMA query_only = 1; PRAGMA cache_size = -2048; PRAGMA mmap_size = 0")
        }
    }

    /// Runs `body` on a read connection: the first one free, else the next in turn (waiting for
    /// it); without read connections, under the store's lock. With `snapshot`, in one read
    /// transaction (for more than one statement: they see one state, and take the lock once).
    func reading<T>(snapshot: Bool = false, _ body: (Connection) throws -> T) throws -> T {
        func run(_ db: Connection) throws -> T {
            guard !isClosed.load(ordering: .acquiring) else { throw StoreError.unavailable }
            return try Self.translatingErrors { snapshot ? try db.reading { try body(db) } : try body(db) }
        }
        guard !readers.isEmpty else { return try lock.withLock { try run(db) } }
        let start = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
        for offset in 0..<readers.count {
            let reader = readers[(start &+ offset) % readers.count]
            guard reader.lock.try() else { continue }
            defer { reader.lock.unlock() }
            return try run(reader.db)
        }
        let reader = readers[start % readers.count]
        return try reader.lock.withLock { try run(reader.db) }
    }

    /// Runs `body` with the connection, under the store's lock.
    func locked<T>(_ body: (Connection) throws -> T) throws -> T {
        try lock.withLock {
            guard !isClosed.load(ordering: .acquiring) else { throw StoreError.unavailable }
            return try Self.translatingErrors { try body(db) }
        }
    }

    /// Stops the store now rather than when it is released: the writer thread ends once what it
    /// holds is written (pushes queued later are refused), then every connection closes (the
    /// last one checkpoints the WAL into the file). Afterwards every call is refused with
    /// ``StoreError/unavailable``. What a process that replaces the file, or opens it again,
    /// does first: a connection left open would close later, on whichever thread let it go.
    public func close() {
        isClosed.store(true, ordering: .releasing)
        writerWake.signal()
        writerThreads.wait()
        lock.withLock { db.close() }
        for reader in readers { reader.lock.withLock { reader.db.close() } }
    }

    /// SQLite's errors as the store's: SQLITE_FULL (the disk or the file system is full) is
    /// ``StoreError/storageFull``, any other ``StoreError/database(_:)``.
    static func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch ResultCode.full {
            throw StoreError.storageFull
        } catch let error as SQLiteError {
            throw StoreError.database(error.description)
        }
    }
}
