public import BasketCore
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
            try Self.translatingErrors { snapshot ? try db.reading { try body(db) } : try body(db) }
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
        try lock.withLock { try Self.translatingErrors { try body(db) } }
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

    // MARK: Accounts and tokens

    public func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws
        -> Account
    {
        try locked { db in
            try db.transaction {
                if try db.scalar("SELECT 1 FROM accounts WHERE name = ?", .text(name)) != nil {
                    throw StoreError.accountExists
                }
                if let signupInvite {
                    try db.run(
                        "UPDATE signup_invites SET uses_left = uses_left - 1 WHERE hash = ? AND expires > ? AND uses_left > 0",
                        .text(signupInvite), .integer(now))
                    guard db.changes == 1 else { throw StoreError.noSuchInvite }
                    try db.run("DELETE FROM signup_invites WHERE uses_left <= 0")
                }
                try db.run("INSERT INTO accounts(name, password) VALUES (?, ?)", .text(name), .text(passwordHash))
                return Account(id: db.lastInsertRowID, name: name, passwordHash: passwordHash)
            }
        }
    }

    public func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws {
        try locked {
            try $0.run(
                "INSERT INTO signup_invites(hash, created, expires, uses_left) VALUES (?, ?, ?, ?)", .text(hash),
                .integer(createdAt), .integer(expiresAt), .integer(Int64(uses)))
        }
    }

    public func signupInviteWorks(hash: String, now: Int64) throws -> Bool {
        try locked { db in
            try db.scalar(
                "SELECT 1 FROM signup_invites WHERE hash = ? AND expires > ? AND uses_left > 0", .text(hash),
                .integer(now)) != nil
        }
    }

    public func account(named name: String) throws -> Account? {
        try locked { db in
            try db.query("SELECT id, name, password FROM accounts WHERE name = ?", .text(name)) {
                Account(id: $0.int64(0), name: $0.string(1) ?? "", passwordHash: $0.string(2) ?? "")
            }.first
        }
    }

    public func setPasswordHash(_ hash: String, of account: Int64) throws {
        try locked { try $0.run("UPDATE accounts SET password = ? WHERE id = ?", .text(hash), .integer(account)) }
    }

    public func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws {
        try locked {
            try $0.run(
                "INSERT INTO tokens(hash, id, account, device, created, last_used) VALUES (?, ?, ?, ?, ?, ?)",
                .text(hash), .text(id), .integer(account), .text(device), .integer(createdAt), .integer(createdAt))
        }
    }

    static func tokenInfo(_ row: Row, from column: Int32) -> TokenInfo {
        TokenInfo(
            id: row.string(column) ?? "", device: row.string(column + 1) ?? "", created: row.int64(column + 2),
            lastUsed: row.int64(column + 3))
    }

    public func session(forTokenHash hash: String) throws -> (Account, TokenInfo)? {
        try reading { db in
            try db.query(
                """
                SELECT a.id, a.name, a.password, t.id, t.device, t.created, t.last_used
                FROM tokens t JOIN accounts a ON a.id = t.account WHERE t.hash = ?
                """, .text(hash)
            ) {
                (
                    Account(id: $0.int64(0), name: $0.string(1) ?? "", passwordHash: $0.string(2) ?? ""),
                    Self.tokenInfo($0, from: 3)
                )
            }.first
        }
    }

    public func touchToken(hash: String, at now: Int64) throws {
        try locked { try $0.run("UPDATE tokens SET last_used = ? WHERE hash = ?", .integer(now), .text(hash)) }
    }

    public func tokens(of account: Int64) throws -> [TokenInfo] {
        try locked { db in
            try db.query(
                "SELECT id, device, created, last_used FROM tokens WHERE account = ? ORDER BY created, id",
                .integer(account)
            ) { Self.tokenInfo($0, from: 0) }
        }
    }

    public func revokeToken(hash: String) throws {
        try locked { try $0.run("DELETE FROM tokens WHERE hash = ?", .text(hash)) }
    }

    public func revokeToken(id: String, of account: Int64) throws -> Bool {
        try locked { db in
            try db.run("DELETE FROM tokens WHERE id = ? AND account = ?", .text(id), .integer(account))
            return db.changes == 1
        }
    }

    public func revokeTokens(of account: Int64, keeping: String?) throws -> Int {
        try locked { db in
            try db.run(
                "DELETE FROM tokens WHERE account = ? AND hash IS NOT ?", .integer(account),
                keeping.map(SQLValue.text) ?? .null)
            return db.changes
        }
    }

    // MARK: Lists, members, invites

    private func listNo(_ list: ListID, _ db: Connection) throws -> Int64? {
        try db.scalar("SELECT no FROM lists WHERE id = ?", .blob(list.raw.bytes))?.integerValue
    }

    public func createList(_ list: ListID, owner: Int64) throws -> Membership {
        defer { heads.invalidateMemberships(of: owner) }  // once committed
        return try locked { db in
            try db.transaction {
                if try listNo(list, db) != nil { throw StoreError.listExists }
                let epoch = StoredOps.newEpoch()
                try db.run(
                    "INSERT INTO lists(id, epoch, created_by) VALUES (?, ?, ?)", .blob(list.raw.bytes), .text(epoch),
                    .integer(owner))
                let no = db.lastInsertRowID
                try db.run(
                    "INSERT INTO members(list, account, role) VALUES (?, ?, 'owner')", .integer(no), .integer(owner))
                return Membership(list: list, role: .owner, epoch: epoch, cursor: 0)
            }
        }
    }

    public func memberships(of account: Int64) throws -> [Membership] {
        let (found, generation) = heads.memberships(of: account)
        let lists =
            try found
            ?? reading { db in
                try db.query(
                    """
                    SELECT l.id, m.role, l.no, l.last_seq, l.epoch, l.compacted_through
                    FROM members m JOIN lists l ON l.no = m.list WHERE m.account = ? ORDER BY l.no
                    """, .integer(account)
                ) { row in
                    (
                        list: ListID(raw: ID128(row.blob128(0))),
                        head: ListHead(
                            no: row.int64(2), cursor: row.int64(3), epoch: row.string(4) ?? "",
                            compactedThrough: row.int64(5)),
                        role: Role(rawValue: row.string(1) ?? "") ?? .viewer
                    )
                }
            }
        if found == nil { heads.insertMemberships(of: account, lists, ifUnchangedSince: generation) }
        return lists.map { Membership(list: $0.list, role: $0.role, epoch: $0.head.epoch, cursor: $0.head.cursor) }
    }

    public func role(of account: Int64, in list: ListID) throws -> Role? {
        do {
            return try memberHead(list, account).role
        } catch StoreError.noSuchList {
            return nil
        }
    }

    /// The list's head and the member's role: from memory when known, else read (and kept).
    /// - Throws: ``StoreError/noSuchList`` when there is no such list or `account` is not a member.
    func memberHead(_ list: ListID, _ account: Int64) throws -> (head: ListHead, role: Role) {
        let (found, generation) = heads.lookup(list, account: account)
        if let found { return found }
        let (head, role) = try reading { db in try self.head(db, list, account) }
        guard let role else { throw StoreError.noSuchList }
        heads.insert(list, head: head, account: account, role: role, ifUnchangedSince: generation)
        return (head, role)
    }

    public func listCount(of account: Int64) throws -> Int {
        try locked { db in
            Int(
                try db.scalar(
                    """
                    SELECT count(*) FROM lists l WHERE l.created_by = ?1
                        OR EXISTS (SELECT 1 FROM members m WHERE m.list = l.no AND m.account = ?1)
                    """, .integer(account))?.integerValue ?? 0)
        }
    }

    public func members(of list: ListID) throws -> [Member] {
        try locked { db in
            var replicas: [Int64: [ReplicaID]] = [:]
            for (account, replica) in try db.query(
                Member.replicasQuery("?"), .blob(list.raw.bytes), map: { ($0.int64(0), $0.int64(1)) })
            {
                replicas[account, default: []].append(StoredOps.replica(replica))
            }
            return try db.query(
                """
                SELECT a.name, m.role, m.account FROM members m JOIN lists l ON l.no = m.list
                JOIN accounts a ON a.id = m.account WHERE l.id = ? ORDER BY a.name
                """, .blob(list.raw.bytes)
            ) {
                Member(
                    account: $0.string(0) ?? "", role: Role(rawValue: $0.string(1) ?? "") ?? .viewer,
                    replicas: replicas[$0.int64(2)] ?? [])
            }
        }
    }

    /// The list's row number and the member's role. Call inside a transaction.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember``.
    private func member(_ account: Int64, of list: ListID, _ db: Connection) throws -> (no: Int64, role: String) {
        guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
        guard
            let role = try db.scalar(
                "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account))?.textValue
        else { throw StoreError.noSuchMember }
        return (no, role)
    }

    private func owners(_ no: Int64, _ db: Connection) throws -> Int64 {
        try db.scalar("SELECT count(*) FROM members WHERE list = ? AND role = 'owner'", .integer(no))?.integerValue ?? 0
    }

    @discardableResult
    public func removeMember(_ account: Int64, from list: ListID) throws -> Bool {
        defer { heads.invalidate(list) }  // once committed
        return try locked { db in
            try db.transaction {
                let (no, role) = try member(account, of: list, db)
                let members =
                    try db.scalar("SELECT count(*) FROM members WHERE list = ?", .integer(no))?.integerValue ?? 0
                if role == Role.owner.rawValue, try owners(no, db) == 1 && members > 1 { throw StoreError.lastOwner }
                if members == 1 {
                    // The last member: nobody could reach the list again, so it goes.
                    try deleteList(no, db)
                    return true
                }
                try db.run("DELETE FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account))
                // Who may no longer invite has no invites out.
                try db.run("DELETE FROM invites WHERE list = ? AND created_by = ?", .integer(no), .integer(account))
                return false
            }
        }
    }

    public func setRole(_ role: Role, of account: Int64, in list: ListID) throws {
        defer { heads.invalidate(list) }  // once committed
        try locked { db in
            try db.transaction {
                let (no, current) = try member(account, of: list, db)
                if current == Role.owner.rawValue && role != .owner, try owners(no, db) == 1 {
                    throw StoreError.lastOwner
                }
                try db.run(
                    "UPDATE members SET role = ? WHERE list = ? AND account = ?", .text(role.rawValue), .integer(no),
                    .integer(account))
                try db.run(Self.dropInvitesAboveRole, .integer(no), .integer(account), .text(role.rawValue))
            }
        }
    }

    public func deleteList(_ list: ListID) throws -> Bool {
        defer { heads.invalidate(list) }  // once committed
        return try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { return false }
                try deleteList(no, db)
                return true
            }
        }
    }

    /// Deletes list `no` with its log, members and invites. Call inside a transaction.
    private func deleteList(_ no: Int64, _ db: Connection) throws {
        for table in ["pushes", "invites", "members", "replicas"] {
            try db.run("DELETE FROM \(table) WHERE list = ?", .integer(no))
        }
        logs.forget(no)
        try db.run("DELETE FROM lists WHERE no = ?", .integer(no))
    }

    static let insertInvite = SharedSQL.sql(SharedSQL.insertInvite + " RETURNING id") { "?\($0)" }
    static let dropInvitesAboveRole = SharedSQL.sql(SharedSQL.dropInvitesAboveRole) { "?\($0)" }

    public func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?
    ) throws {
        try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
                // Expired invites go first: they count against nothing, and the table stays bounded.
                try db.run("DELETE FROM invites WHERE list = ? AND expires <= ?", .integer(no), .integer(createdAt))
                let stored = try db.query(
                    Self.insertInvite, .text(hash), .text(id), .blob(list.raw.bytes), .text(role.rawValue),
                    .integer(createdBy), .integer(createdAt), .integer(expiresAt), .integer(Int64(uses)),
                    .integer(Int64(limits.perList)), .integer(Int64(limits.perMember)), title.map { .text($0) } ?? .null
                ) { _ in true }
                guard stored.isEmpty else { return }
                let maker = try db.scalar(
                    "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(createdBy)
                )?.textValue.flatMap(Role.init(rawValue:))
                guard let maker, maker != .viewer, role <= maker else { throw StoreError.noSuchMember }
                throw StoreError.tooManyInvites
            }
        }
    }

    public func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> Membership {
        // A new member: its list of memberships changes (non-members' roles are never cached).
        defer { heads.invalidateMemberships(of: account) }
        return try locked { db in
            try db.transaction {
                let rows = try db.query(
                    """
                    SELECT i.list, i.role, l.id, l.epoch, l.last_seq FROM invites i JOIN lists l ON l.no = i.list
                    WHERE i.hash = ? AND i.expires > ? AND i.uses_left > 0
                    """, .text(hash), .integer(now)
                ) { row in
                    (
                        row.int64(0), Role(rawValue: row.string(1) ?? "") ?? .viewer, row.blob(2), row.string(3) ?? "",
                        row.int64(4)
                    )
                }
                guard let (no, invited, id, epoch, cursor) = rows.first else { throw StoreError.noSuchInvite }
                let current = try db.scalar(
                    "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account)
                )?.textValue.flatMap(Role.init(rawValue:))
                let usedBefore =
                    try db.scalar(
                        "SELECT 1 FROM invite_uses WHERE hash = ? AND account = ?", .text(hash), .integer(account))
                    != nil
                if usedBefore {
                    // The same code again: harmless for a member (another of its devices), refused for
                    // an account that was removed or left since.
                    guard let current else { throw StoreError.noSuchInvite }
                    return Membership(list: ListID(raw: ID128(bytes: id)!), role: current, epoch: epoch, cursor: cursor)
                }
                if let current {
                    // A member already: its role changes only through the members route, and the
                    // invite stays for whom it was meant.
                    return Membership(list: ListID(raw: ID128(bytes: id)!), role: current, epoch: epoch, cursor: cursor)
                }
                let members =
                    try db.scalar("SELECT count(*) FROM members WHERE list = ?", .integer(no))?.integerValue ?? 0
                if members >= maxMembers { throw StoreError.tooManyMembers }
                let role = invited
                try db.run(
                    "INSERT INTO members(list, account, role) VALUES (?, ?, ?)", .integer(no), .integer(account),
                    .text(role.rawValue))
                try db.run("UPDATE invites SET uses_left = uses_left - 1 WHERE hash = ?", .text(hash))
                try db.run("INSERT INTO invite_uses(hash, account) VALUES (?, ?)", .text(hash), .integer(account))
                try db.run("DELETE FROM invites WHERE hash = ? AND uses_left <= 0", .text(hash))
                return Membership(list: ListID(raw: ID128(bytes: id)!), role: role, epoch: epoch, cursor: cursor)
            }
        }
    }

    public func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview? {
        try locked { db in
            try db.query(
                """
                SELECT l.id, i.title, i.role, coalesce(a.name, ''), i.expires,
                    EXISTS (SELECT 1 FROM members m WHERE m.list = i.list AND m.account = ?3)
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE i.hash = ?1 AND i.expires > ?2 AND i.uses_left > 0
                """, .text(hash), .integer(now), .integer(account)
            ) { row in
                Wire.InvitePreview(
                    list: ListID(raw: ID128(row.blob128(0))), title: row.string(1),
                    role: Role(rawValue: row.string(2) ?? "") ?? .viewer, createdBy: row.string(3) ?? "",
                    expiresAt: row.int64(4), member: row.int64(5) != 0)
            }.first
        }
    }

    public func invites(of list: ListID, now: Int64) throws -> [InviteInfo] {
        try locked { db in
            try db.query(
                """
                SELECT i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE l.id = ? AND i.expires > ? AND i.uses_left > 0 ORDER BY i.created, i.id
                """, .blob(list.raw.bytes), .integer(now)
            ) { Self.inviteInfo($0) }
        }
    }

    static func inviteInfo(_ row: Row) -> InviteInfo {
        InviteInfo(
            id: row.string(0) ?? "", role: Role(rawValue: row.string(1) ?? "") ?? .viewer,
            createdBy: row.string(2) ?? "", created: row.int64(3), expires: row.int64(4),
            usesLeft: Int(row.int64(5)))
    }

    public func revokeInvite(id: String, of list: ListID) throws -> InviteInfo? {
        try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
                let found = try db.query(
                    """
                    SELECT i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left
                    FROM invites i LEFT JOIN accounts a ON a.id = i.created_by WHERE i.list = ? AND i.id = ?
                    """, .integer(no), .text(id)
                ) { Self.inviteInfo($0) }.first
                try db.run("DELETE FROM invites WHERE list = ? AND id = ?", .integer(no), .text(id))
                return found
            }
        }
    }
}
