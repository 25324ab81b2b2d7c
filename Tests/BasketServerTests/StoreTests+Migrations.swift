import BasketCore
import Foundation
import Postgres
import SQLite
import Synchronization
import TestServers
import TestSupport
import Testing

@testable import BasketServer

// The store contract: migrations from every older schema, dumps, moving between backends.
extension StoreTests {
    /// A log of a row per operation (PostgreSQL's schema 3, SQLite's 5) is migrated to rows of
    /// pushes: pages, duplicates, usage and compaction work on it as before, over more operations
    /// than one row holds.
    @Test(arguments: backends) func aLogOfARowPerOperationIsMigratedToPushes(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        let list = ListID.random()
        _ = try store.createList(list, owner: try store.createAccount(name: "alice", passwordHash: "a").id)
        let names = (0..<2_500).map { Self.op(list, "Item \($0 % 1_200)", ms: 1_000 + UInt64($0)) }
        let kinds = [
            Self.op(list, "Milk", field: .checked, value: .bool(true), ms: 5_000),
            Self.op(list, "Milk", field: .checked, value: .bool(false), ms: 5_001, replica: 1 << 63 | 9),
            Self.op(list, "Milk", field: .note, value: .null, ms: 5_002),
            Self.op(list, "Milk", field: .note, value: .text("tab\there, é, 🥛"), ms: 5_003),
        ]
        _ = try store.append(Array(names[..<1_700]), to: list, receivedAt: 10)
        _ = try store.append(Array(names[1_700...]) + kinds, to: list, receivedAt: 20)
        let before = try store.page(of: list, after: 0, limit: 10_000)
        let usage = try store.usage(of: list)
        store.close()
        try Self.undoPushes(storage)
        try storage.execute(sqlite: "PRAGMA user_version = 5", postgres: "UPDATE basket_schema SET version = 3")
        let migrated = try storage.open()
        defer { migrated.close() }
        let applied = (migrated as? PostgresStore)?.appliedMigrations ?? (migrated as? SQLiteStore)?.appliedMigrations
        #expect(applied == (backend == .postgres ? 3..<11 : 5..<13))
        let after = try migrated.page(of: list, after: 0, limit: 10_000)
        #expect(after.encoded == before.encoded && after.count == 2_504 && after.cursor == 2_504)
        #expect(try migrated.usage(of: list) == usage)
        #expect(try migrated.append(names.shuffled(), to: list, receivedAt: 30).duplicates == 2_500)
        // "Item 0" … "Item 1199" were named twice (the first hundred thrice), and Milk's two
        // fields set twice: the older operations are dropped.
        #expect(try migrated.compact(receivedBefore: 25) == 1_300 + 2)
        #expect(try storage.operationCount() == 2_504 - 1_302)
        #expect(try migrated.page(of: list, after: 2_000, limit: 10).count == 10)
    }

    /// Eight instances start at once on a new store: exactly one applies the migrations, each of
    /// them once; all of them work.
    @Test(arguments: backends) func instancesStartingAtOnceMigrateOnce(_ backend: Backend) throws {
        for _ in 0..<3 {
            let storage = try TestStore(backend)
            let (stores, failures) = storage.openAtOnce(8)
            #expect(failures == [])
            #expect(stores.count == 8)
            let applied = stores.map(\.appliedMigrations).filter { !$0.isEmpty }
            #expect(applied == [0..<Self.latest(backend)], "migrations applied by the eight: \(applied)")
            #expect(try storage.schemaVersion() == Self.latest(backend))
            for (index, store) in stores.enumerated() {
                _ = try store.createAccount(name: "user\(index)", passwordHash: "x")
            }
            #expect(try stores.first?.statistics().accounts == 8)
            for store in stores { store.close() }
        }
    }

    /// A store a later build wrote (a newer schema) is refused as such, and left as it is.
    @Test(arguments: backends) func aStoreWithANewerSchemaIsRefused(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        try storage.open().close()
        try storage.execute(
            sqlite: "PRAGMA user_version = 14", postgres: "UPDATE basket_schema SET version = 14")
        #expect(throws: StoreError.newerSchema(found: 14, supported: Self.latest(backend))) { _ = try storage.open() }
        #expect(try storage.schemaVersion() == 14)
    }

    /// A store at schema 1 (before `lists.dropped`) is migrated to 2 when opened, by four
    /// instances at once, and counts its operations as the log has them.
    @Test(arguments: backends) func aStoreAtTheFirstSchemaIsMigrated(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        let owner = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try store.createList(list, owner: owner)
        _ = try store.append(
            [Self.op(list, "Milk", ms: 1_000), Self.op(list, "Milk", value: .text("Oat milk"), ms: 2_000)], to: list,
            receivedAt: 1)
        _ = try store.append([Self.op(list, "Eggs", ms: 3_000)], to: list, receivedAt: 500)
        #expect(try store.compact(receivedBefore: 100) == 1)
        store.close()
        // Back to schema 1, as an older build left it.
        try Self.undoPushes(storage)
        try storage.execute(
            sqlite: Self.undoSchema3(postgres: false)
                + "ALTER TABLE lists DROP COLUMN dropped; PRAGMA user_version = 1",
            postgres: Self.undoSchema3(postgres: true)
                + "ALTER TABLE lists DROP COLUMN dropped; UPDATE basket_schema SET version = 1")
        let (stores, failures) = storage.openAtOnce(4)
        defer { for store in stores { store.close() } }
        #expect(failures == [])
        #expect(try stores.first?.statistics().operations == 2)
        #expect(try stores.first?.page(of: list, after: 0, limit: 10).count == 2)
        #expect(try storage.schemaVersion() == Self.latest(backend))
    }

    /// The schema version a store of this build has: SQLite's schema 4 dropped `list_items`, its 5
    /// the identity index, its 6 keeps a row per push, as PostgreSQL's 4 does; PostgreSQL's 6 and
    /// SQLite's 8 index replica ids by account and lists by maker.
    /// PostgreSQL's 7 and SQLite's 9 keep Web Push's key, subscriptions and slots.
    /// PostgreSQL's 9 and SQLite's 11 keep accounts' key pairs and members' envelopes; PostgreSQL's
    /// 10 and SQLite's 12 each list's key epochs; PostgreSQL's 11 and SQLite's 13 the snapshots of
    /// encrypted lists.
    static func latest(_ backend: Backend) -> Int { backend == .postgres ? 11 : 13 }

    /// What PostgreSQL's schemas 7 and 8 and SQLite's 9 and 10 added (Web Push, encrypted lists),
    /// taken away again.
    static let undoPush = """
        DROP TABLE snapshots; ALTER TABLE lists DROP COLUMN key_epoch; ALTER TABLE lists DROP COLUMN push_epoch;
        DROP TABLE envelopes; ALTER TABLE accounts DROP COLUMN public_key; ALTER TABLE accounts DROP COLUMN wrapped_key;
        ALTER TABLE accounts DROP COLUMN recovery_key; ALTER TABLE accounts DROP COLUMN recovery_hash;
        ALTER TABLE lists DROP COLUMN encrypted;
        DROP TABLE inbox; DROP TABLE add_keys; DROP TABLE shopping; DROP TABLE push_slots; DROP TABLE push_lists; DROP TABLE push_subscriptions;
        DROP TABLE push_key;

        """

    /// What PostgreSQL's schema 5 and SQLite's 7 added (lists' makers and epoch starts, replica
    /// owners), taken away again.
    static let undoReplicaOwners = """
        DROP INDEX lists_by_creator; DROP TABLE member_usage;
        DROP TABLE replicas; ALTER TABLE lists DROP COLUMN created_by; ALTER TABLE lists DROP COLUMN epoch_started;
        ALTER TABLE invites DROP COLUMN title;

        """

    /// The log taken back to a row per operation: PostgreSQL's schema 6 to 3 (``undoReplicaOwners``,
    /// ``undoPostgresSchema4``), SQLite's 8 to 5 (the records read here, into `ops` as schema 5 had
    /// it). The caller sets the version.
    static func undoPushes(_ storage: TestStore) throws {
        try storage.execute(
            sqlite: "DROP TRIGGER push_ends_with_token; DROP TRIGGER push_ends_with_membership;"
                + " DROP TRIGGER push_ends_with_list; DROP TRIGGER shopping_ends_with_membership;"
                + " DROP TRIGGER inbox_ends_with_list; DROP TRIGGER envelope_ends_with_membership;"
                + " DROP TRIGGER envelopes_end_with_list; DROP TRIGGER snapshot_ends_with_list;\n" + undoPush
                + undoReplicaOwners,
            postgres: "DROP FUNCTION envelope_ends_with_membership CASCADE;\n" + undoPush
                + "DROP FUNCTION push_ends_with_membership CASCADE; DROP FUNCTION shopping_ends_with_membership CASCADE;\n"
                + undoReplicaOwners)
        guard storage.backend == .sqlite else {
            try storage.execute(sqlite: "", postgres: undoPostgresSchema4)
            return
        }
        let db = try SQLite.Connection(path: storage.directory.file("store.sqlite"))
        try db.execute(
            """
            CREATE TABLE ops(list INTEGER NOT NULL, seq INTEGER NOT NULL, item BLOB NOT NULL, field INTEGER NOT NULL,
                ts INTEGER NOT NULL, replica INTEGER NOT NULL, value, received INTEGER NOT NULL,
                PRIMARY KEY(list, seq)) WITHOUT ROWID
            """)
        let insert = try db.prepare("INSERT INTO ops VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        let scan = try db.prepare("SELECT list, received, ops FROM pushes")
        while let row = try scan.step() {
            try row.withBlob(2) {
                try PushRecords.dumpRows(list: row.int64(0), received: row.int64(1), $0) { values in
                    for (index, value) in values.enumerated() {
                        try insert.bind(SQLiteStore.sqlValue(value), at: Int32(index + 1))
                    }
                    try insert.runToCompletion()
                }
            }
        }
        try db.execute("DROP TABLE pushes")
    }

    /// PostgreSQL's schema 4 taken back to 3: the log as a row per operation again (read from the
    /// pushes' records in PL/pgSQL), with its identity index and `list_items`.
    static let undoPostgresSchema4 = """
        CREATE TABLE ops(list bigint NOT NULL, seq bigint NOT NULL, item bytea NOT NULL, field smallint NOT NULL,
            ts bigint NOT NULL, replica bigint NOT NULL, value_text text, value_bool boolean, received bigint NOT NULL,
            PRIMARY KEY(list, seq));
        CREATE UNIQUE INDEX ops_identity ON ops(list, ts, replica, item, field);
        DO $$
        DECLARE r record; b bytea; at integer; k integer; n integer;
        BEGIN
            FOR r IN SELECT list, received, ops FROM pushes LOOP
                b := r.ops;
                at := 0;
                WHILE at < length(b) LOOP
                    k := get_byte(b, at + 42);
                    n := CASE WHEN k = 3 THEN ('x' || encode(substring(b FROM at + 44 FOR 4), 'hex'))::bit(32)::integer
                        ELSE 0 END;
                    INSERT INTO ops VALUES (r.list, ('x' || encode(substring(b FROM at + 1 FOR 8), 'hex'))::bit(64)::bigint,
                        substring(b FROM at + 9 FOR 16), ('x' || encode(substring(b FROM at + 25 FOR 2), 'hex'))::bit(16)::integer,
                        ('x' || encode(substring(b FROM at + 27 FOR 8), 'hex'))::bit(64)::bigint,
                        ('x' || encode(substring(b FROM at + 35 FOR 8), 'hex'))::bit(64)::bigint,
                        CASE WHEN k = 3 THEN convert_from(substring(b FROM at + 48 FOR n), 'UTF8') END,
                        CASE WHEN k = 2 THEN true WHEN k = 1 THEN false END, r.received);
                    at := at + 43 + CASE WHEN k = 3 THEN 4 + n ELSE 0 END;
                END LOOP;
            END LOOP;
        END $$;
        CREATE TABLE list_items(list bigint NOT NULL, item bytea NOT NULL, PRIMARY KEY(list, item));
        INSERT INTO list_items SELECT DISTINCT list, item FROM ops;
        DROP TABLE pushes;

        """

    /// Schema 3 (and SQLite's 4 and 5) taken back to schema 2, after ``undoPushes(_:)``, as the previous build left it (tokens without id, device and
    /// last use; invites in plain text).
    static func undoSchema3(postgres: Bool) -> String {
        """
        DROP INDEX tokens_by_id; DROP INDEX tokens_by_account;
        ALTER TABLE tokens DROP COLUMN id; ALTER TABLE tokens DROP COLUMN device; ALTER TABLE tokens DROP COLUMN last_used;
        DROP TABLE invites; DROP TABLE invite_uses; DROP TABLE signup_invites; DROP TABLE IF EXISTS list_items;
        ALTER TABLE lists DROP COLUMN bytes; ALTER TABLE lists DROP COLUMN items;
        \(postgres ? "" : "CREATE UNIQUE INDEX ops_identity ON ops(list, ts, replica, item, field);")
        \(postgres ? "DROP FUNCTION IF EXISTS basket_append(bytea, text[], smallint[], bigint[], bigint[], text[], boolean[], bigint, bigint, bigint);" : "")
        CREATE TABLE invites(code TEXT PRIMARY KEY, list \(postgres ? "bigint" : "INTEGER") NOT NULL, role TEXT NOT NULL,
            created_by \(postgres ? "bigint" : "INTEGER") NOT NULL, expires \(postgres ? "bigint" : "INTEGER") NOT NULL);

        """
    }

    /// A store at schema 2 is migrated to 3 by four instances at once: its tokens keep working (with
    /// an id each, last used when made), its plain-text invites are gone.
    @Test(arguments: backends) func aStoreAtSchema2KeepsItsTokensAndDropsPlainInvites(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        let alice = try store.createAccount(name: "alice", passwordHash: "a")
        let list = ListID.random()
        _ = try store.createList(list, owner: alice.id)
        _ = try store.append(
            [Self.op(list, "Milk"), Self.op(list, "Milk", field: .note, value: .text("oat"), counter: 1)], to: list,
            receivedAt: 1)
        store.close()
        try Self.undoPushes(storage)
        try storage.execute(
            sqlite: Self.undoSchema3(postgres: false)
                + "INSERT INTO tokens(hash, account, created) VALUES ('old', \(alice.id), 1234);"
                + "INSERT INTO invites VALUES ('PLAIN-CODE', 1, 'editor', \(alice.id), 9999999999999);"
                + "PRAGMA user_version = 2",
            postgres: Self.undoSchema3(postgres: true)
                + "INSERT INTO tokens(hash, account, created) VALUES ('old', \(alice.id), 1234);"
                + "INSERT INTO invites VALUES ('PLAIN-CODE', 1, 'editor', \(alice.id), 9999999999999);"
                + "UPDATE basket_schema SET version = 2")
        let (stores, failures) = storage.openAtOnce(4)
        defer { for store in stores { store.close() } }
        #expect(failures == [])
        let migrated = try #require(stores.first)
        let (account, token) = try #require(try migrated.session(forTokenHash: "old"))
        #expect(account == alice && token.id.count == 16 && token.created == 1234 && token.lastUsed == 1234)
        #expect(try migrated.invites(of: list, now: 0).isEmpty)
        // What the list holds is counted from its log: one item, two operations.
        #expect(try migrated.usage(of: list) == (1, (4 + 64) + (3 + 64)))
        #expect(try storage.schemaVersion() == Self.latest(backend))
    }

    /// A store written by a newer build (a higher schema version) is refused, not written to.
    @Test(arguments: backends) func aNewerSchemaIsRefused(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        _ = try store.createAccount(name: "alice", passwordHash: "a")
        store.close()
        try storage.execute(sqlite: "PRAGMA user_version = 99", postgres: "UPDATE basket_schema SET version = 99")
        #expect(throws: (any Error).self) { try storage.open() }
        #expect(try storage.schemaVersion() == 99)
    }

    /// A dump of version 2 (before lists' makers and replica owners) is still read: each list's
    /// maker is its owner, as the schema migrations make it.
    @Test(arguments: backends) func aVersion2DumpIsRead(_ backend: Backend) throws {
        let folder = TemporaryDirectory("dump-v2")
        let sourceStorage = try TestStore(.sqlite)
        let source = try sourceStorage.open()
        defer { source.close() }
        let alice = try source.createAccount(name: "alice", passwordHash: "a")
        let list = ListID.random()
        _ = try source.createList(list, owner: alice.id)
        _ = try source.append([Self.op(list, "Milk")], to: list, receivedAt: 1, limits: .none, pusher: alice.id)
        let dump = folder.file("v3.jsonl")
        _ = try source.export(to: dump)
        // Back to version 2 as an older build wrote it.
        let lines = try String(contentsOfFile: dump, encoding: .utf8).split(separator: "\n").compactMap {
            line -> String? in
            if line.hasPrefix(#"{"format""#) { return #"{"format":"basket-store","version":2}"# }
            guard var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            if object["table"] as? String == "replicas" { return nil }
            if object["table"] as? String == "accounts", let row = object["row"] as? [Any] {
                object["row"] = Array(row.prefix(3))
            }
            if object["table"] as? String == "lists", let row = object["row"] as? [Any] {
                object["row"] = Array(row.prefix(5))
            }
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let old = folder.file("v2.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: old, atomically: true, encoding: .utf8)
        let targetStorage = try TestStore(backend)
        let target = try targetStorage.open()
        defer { target.close() }
        let counts = try target.importDump(from: old)
        #expect(counts["lists"] == 1 && counts["replicas"] == 0 && counts["ops"] == 1)
        // The maker came from the owners: Alice leaving the list still counts it against her quota.
        let bob = try target.createAccount(name: "bob", passwordHash: "b")
        try target.saveInvite(
            hash: "h", id: "i", list: list, role: .owner, createdBy: alice.id, createdAt: 1, expiresAt: 1_000, uses: 1,
            limits: Self.inviteLimits, title: nil)
        _ = try target.redeemInvite(hash: "h", account: bob.id, now: 2, maxMembers: 50)
        try target.removeMember(alice.id, from: list)
        #expect(try target.listCount(of: alice.id) == 1 && target.listCount(of: bob.id) == 1)
    }

    /// A store exported from each backend and imported into each: the same rows, the same log.
    @Test(arguments: backends, backends) func aStoreMovesBetweenBackends(_ from: Backend, _ to: Backend) throws {
        let folder = TemporaryDirectory("move")
        let sourceStorage = try TestStore(from)
        let source = try sourceStorage.open()
        defer { source.close() }
        let alice = try source.createAccount(name: "alice", passwordHash: "pbkdf2$1$aa$bb")
        let bob = try source.createAccount(name: "bob", passwordHash: "pbkdf2$1$cc$dd")
        try source.saveToken(hash: "token", id: "t-id", account: alice.id, device: "phone \"1\"", createdAt: 5)
        let list = ListID.random()
        _ = try source.createList(list, owner: alice.id)
        try source.saveInvite(
            hash: "inv", id: "i-id", list: list, role: .editor, createdBy: alice.id, createdAt: 1, expiresAt: 99,
            uses: 2, limits: Self.inviteLimits, title: nil)
        _ = try source.redeemInvite(hash: "inv", account: bob.id, now: 1, maxMembers: 50)
        try source.saveSignupInvite(hash: "signup", createdAt: 1, expiresAt: 2, uses: 3)
        // An encrypted list's envelope and the key pair it is sealed to.
        let keys = StoredAccountKeys(publicKey: "p", wrappedKey: "w", recoveryKey: "r", recoveryHash: "h")
        try source.setAccountKeys(keys, of: alice.id)
        let sealed = ListID.random()
        _ = try source.createList(sealed, owner: alice.id, encrypted: true)
        try source.deliverEnvelopes(
            [.init(account: "alice", envelope: "e1.x")], to: sealed, by: alice.id, rotatingTo: 2)
        let ops =
            (0..<500).map { Self.op(list, "Item \($0)", counter: UInt16($0)) } + [
                Self.op(list, "Item 1", field: .checked, value: .bool(true), counter: 600),
                Self.op(list, "Item 2", field: .note, value: .null, counter: 601),
                Self.op(list, "Øl \"7\" \\", field: .note, value: .text("{a,b}"), counter: 602),
            ]
        _ = try source.append(ops, to: list, receivedAt: 77, limits: .none, pusher: alice.id)  // binds replica 7
        // A rename of Item 0 supersedes its first name; compaction drops that one (seq 1).
        _ = try source.append(
            [Self.op(list, "Item 0", value: .text("Item zero"), ms: 1_764_400_000_001)], to: list, receivedAt: 78)
        #expect(try source.compact(receivedBefore: 78) == 1)
        #expect(try source.statistics().operations == 503)
        let dump = folder.file("dump.jsonl")
        let counts = try source.export(to: dump)
        #expect(
            counts == [
                "accounts": 2, "tokens": 1, "lists": 2, "members": 3, "envelopes": 1, "invites": 1,
                "invite_uses": 1, "signup_invites": 1, "replicas": 1, "ops": 503,
            ])

        let targetStorage = try TestStore(to)
        let target = try targetStorage.open()
        defer { target.close() }
        #expect(try target.importDump(from: dump) == counts)
        let again = folder.file("again.jsonl")
        _ = try target.export(to: again)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == Data(contentsOf: URL(fileURLWithPath: again)))
        #expect(
            try target.page(of: list, after: 0, limit: 1_000).encoded
                == source.page(of: list, after: 0, limit: 1_000).encoded)
        #expect(try target.head(of: list) == source.head(of: list))
        #expect(try target.account(forTokenHash: "token") == alice)
        #expect(
            try target.tokens(of: alice.id) == [TokenRecord(id: "t-id", device: "phone \"1\"", created: 5, lastUsed: 5)]
        )
        #expect(try target.invites(of: list, now: 2).map(\.usesLeft) == [1])
        #expect(try target.accountKeys(of: alice.id) == keys && target.accountKeys(of: bob.id) == nil)
        #expect(
            try target.envelope(of: sealed, for: alice.id)
                == StoredEnvelope(envelope: "e1.x", keyEpoch: 2, rotationDue: false))
        #expect(try target.statistics().operations == 503)
        #expect(try !target.page(of: list, after: 0, limit: 10).historyComplete)
        // New rows continue after the imported ones.
        let carol = try target.createAccount(name: "carol", passwordHash: "x")
        #expect(carol.id > bob.id)
        _ = try target.createList(.random(), owner: carol.id)
        #expect(try target.append([Self.op(list, "New")], to: list, receivedAt: 80).cursor == 505)
        // Never into a store that holds something.
        #expect(throws: StoreDump.FormatError.self) { try target.importDump(from: dump) }
    }
}
