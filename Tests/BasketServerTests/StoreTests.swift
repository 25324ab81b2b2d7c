import BasketCore
import BasketServer
import Foundation
import TestSupport
import Testing

/// The `Store` contract, run unchanged on every backend this run has (SQLite always, PostgreSQL
/// when BASKET_TEST_POSTGRES is set): accounts, lists, members, invites, the log's numbering and
/// idempotence under concurrent writers (one handle per "server instance"), compaction,
/// migrations at concurrent start, and moving a store between backends.
struct StoreTests {
    static let backends = Backend.available

    static func op(
        _ list: ListID, _ name: String, field: Field = .name, value: Value? = nil, ms: UInt64 = 1_764_400_000_000,
        counter: UInt16 = 0, replica: UInt64 = 7
    ) -> BasketCore.Operation {
        BasketCore.Operation(
            list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: field,
            value: value ?? .text(name),
            version: Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: counter), replica: ReplicaID(rawValue: replica)))
    }

    static func decoded(_ page: Page) throws -> [BasketCore.Operation] { try OperationCodec.decode(page.encoded) }

    @Test(arguments: backends) func accountsAndTokens(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "hash-a")
        let bob = try store.createAccount(name: "bob", passwordHash: "hash-b")
        #expect(alice.id != bob.id)
        #expect(throws: StoreError.accountExists) { try store.createAccount(name: "alice", passwordHash: "other") }
        #expect(try store.account(named: "alice") == alice)
        #expect(try store.account(named: "carol") == nil)
        try store.setPasswordHash("hash-a2", of: alice.id)
        #expect(try store.account(named: "alice")?.passwordHash == "hash-a2")
        #expect(try store.account(named: "bob")?.passwordHash == "hash-b")
        try store.setPasswordHash("hash-a", of: alice.id)
        try store.saveToken(hash: "t1", account: alice.id, createdAt: 1)
        try store.saveToken(hash: "t2", account: bob.id, createdAt: 2)
        #expect(try store.account(forTokenHash: "t1") == alice)
        try store.revokeToken(hash: "t1")
        #expect(try store.account(forTokenHash: "t1") == nil)
        #expect(try store.account(forTokenHash: "t2") == bob)
        #expect(try store.statistics().accounts == 2)
    }

    @Test(arguments: backends) func listsMembersAndInvites(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        let carol = try store.createAccount(name: "carol", passwordHash: "c").id
        let list = ListID.random()
        let created = try store.createList(list, owner: alice)
        #expect(created.role == .owner && created.cursor == 0 && created.epoch.count == 16)
        #expect(throws: StoreError.listExists) { try store.createList(list, owner: bob) }
        #expect(try store.role(of: alice, in: list) == .owner)
        #expect(try store.role(of: bob, in: list) == nil)
        #expect(throws: StoreError.noSuchList) {
            try store.saveInvite(code: "x", list: .random(), role: .editor, createdBy: alice, expiresAt: 10)
        }

        try store.saveInvite(code: "edit", list: list, role: .editor, createdBy: alice, expiresAt: 1_000)
        try store.saveInvite(code: "view", list: list, role: .viewer, createdBy: alice, expiresAt: 1_000)
        try store.saveInvite(code: "old", list: list, role: .owner, createdBy: alice, expiresAt: 100)
        #expect(throws: StoreError.noSuchInvite) { try store.redeemInvite(code: "old", account: bob, now: 500) }
        #expect(throws: StoreError.noSuchInvite) { try store.redeemInvite(code: "nope", account: bob, now: 500) }
        let joined = try store.redeemInvite(code: "edit", account: bob, now: 500)
        #expect(joined.list == list && joined.role == .editor && joined.epoch == created.epoch)
        // A weaker invite never lowers a role.
        #expect(try store.redeemInvite(code: "view", account: bob, now: 500).role == .editor)
        #expect(try store.redeemInvite(code: "view", account: carol, now: 500).role == .viewer)
        #expect(
            try store.members(of: list).map { "\($0.account):\($0.role)" } == [
                "alice:owner", "bob:editor", "carol:viewer",
            ])
        let other = ListID.random()
        _ = try store.createList(other, owner: bob)
        #expect(try store.memberships(of: bob).map(\.list) == [list, other])
        #expect(try store.memberships(of: bob).map(\.role) == [.editor, .owner])

        // The last owner stays while others remain; members leave; unknown ones are named.
        #expect(throws: StoreError.lastOwner) { try store.removeMember(alice, from: list) }
        #expect(throws: StoreError.noSuchMember) { try store.removeMember(alice, from: other) }
        #expect(throws: StoreError.noSuchList) { try store.removeMember(alice, from: .random()) }
        try store.removeMember(carol, from: list)
        try store.removeMember(bob, from: list)
        try store.removeMember(alice, from: list)
        #expect(try store.members(of: list).isEmpty)
        #expect(try store.memberships(of: alice).isEmpty)
    }

    @Test(arguments: backends) func theLogNumbersNewOperationsAndSkipsKnownOnes(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let owner = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        let epoch = try store.createList(list, owner: owner).epoch
        #expect(throws: StoreError.noSuchList) {
            try store.append([Self.op(list, "Milk")], to: .random(), receivedAt: 1)
        }

        // Every kind of value comes back as it went in, in push order; a repeat inside the batch is skipped.
        let first = [
            Self.op(list, "Milk"), Self.op(list, "Milk", field: .checked, value: .bool(true), counter: 1),
            Self.op(list, "Milk", field: .note, value: .null, counter: 2),
            Self.op(list, "Crème fraîche \"double\" \\ {x,y}", counter: 3),
            Self.op(list, "Milk"),
            Self.op(list, "Eggs", field: .checked, value: .bool(false), counter: 4),
        ]
        let appended = try store.append(first, to: list, receivedAt: 10)
        #expect(appended.accepted == 5 && appended.duplicates == 1 && appended.cursor == 5 && appended.epoch == epoch)
        let page = try store.page(of: list, after: 0, limit: 100)
        #expect(try Self.decoded(page) == [first[0], first[1], first[2], first[3], first[5]])
        #expect(page.count == 5 && page.cursor == 5 && !page.more && page.historyComplete && page.epoch == epoch)

        // Known operations are skipped, new ones continue the numbering without a gap.
        let again = try store.append(
            [first[1], Self.op(list, "Bread", counter: 9), first[3]], to: list, receivedAt: 11)
        #expect(again.accepted == 1 && again.duplicates == 2 && again.cursor == 6)
        #expect(try store.head(of: list) == (6, epoch))
        #expect(try store.append([], to: list, receivedAt: 12).cursor == 6)

        // Pages: limit, `more`, the cursor to ask after, and past the end.
        let head = try store.page(of: list, after: 2, limit: 3)
        #expect(head.count == 3 && head.cursor == 5 && head.more)
        #expect(try Self.decoded(head).map(\.field) == [.note, .name, .checked])
        let tail = try store.page(of: list, after: 5, limit: 3)
        #expect(tail.count == 1 && tail.cursor == 6 && !tail.more)
        let past = try store.page(of: list, after: 50, limit: 3)
        #expect(past.count == 0 && past.cursor == 6 && !past.more)
        #expect(throws: StoreError.noSuchList) { try store.page(of: .random(), after: 0, limit: 1) }
        #expect(throws: StoreError.noSuchList) { try store.head(of: .random()) }
        #expect(try store.statistics().operations == 6 && store.statistics().lists == 1)
        #expect(try store.statistics().databaseBytes > 0)
    }

    /// A page stops at its byte budget, not only at its count, and the cursor walks the whole log.
    @Test(arguments: backends) func pagesAreCutByBytes(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        let note = String(repeating: "n", count: 4_000)
        let ops = (0..<600).map {
            Self.op(list, "Item \($0)", field: .note, value: .text(note), counter: UInt16($0))
        }
        _ = try store.append(ops, to: list, receivedAt: 1)
        var after: Int64 = 0
        var seen: [BasketCore.Operation] = []
        var pages = 0
        while true {
            let page = try store.page(of: list, after: after, limit: 5_000)
            pages += 1
            #expect(page.encoded.count <= Page.defaultMaxBytes + 4_200)
            #expect(page.count >= 1)
            seen += try Self.decoded(page)
            after = page.cursor
            if !page.more { break }
        }
        #expect(pages == 3 && seen == ops)
        // A budget smaller than one operation still moves: one per page.
        let tiny = try store.page(of: list, after: 0, limit: 5_000, maxBytes: 10)
        #expect(tiny.count == 1 && tiny.cursor == 1 && tiny.more)
    }

    /// Several writers (threads, each with its own store handle as a server instance has) push
    /// overlapping batches to one list at once: every operation lands once, numbered 1…N.
    @Test(arguments: backends) func concurrentWritersNumberWithoutGapsOrRepeats(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let setup = try storage.open()
        defer { setup.close() }
        let owner = try setup.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try setup.createList(list, owner: owner)
        let writers = 6
        let batches = 30
        let perBatch = 20
        let handles = try (0..<2).map { _ in try storage.open() }
        defer { for handle in handles { handle.close() } }
        let accepted = Locked(0)
        let failures = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            let store = handles[writer % handles.count]
            for batch in 0..<batches {
                // Writers pair up on the same operations, so half of all pushes are repeats.
                let ops = (0..<perBatch).map {
                    Self.op(
                        list, "w\(writer / 2)-b\(batch)-\($0)", counter: UInt16($0), replica: UInt64(writer / 2 + 1))
                }
                do {
                    let result = try store.append(ops, to: list, receivedAt: 1)
                    accepted.withLock { $0 += result.accepted }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let unique = writers / 2 * batches * perBatch
        #expect(accepted.withLock { $0 } == unique)
        let page = try setup.page(of: list, after: 0, limit: 10_000)
        #expect(page.count == unique && page.cursor == Int64(unique))
        let ops = try Self.decoded(page)
        #expect(Set(ops.map { "\($0.item)-\($0.version)" }).count == unique)
        // Gap-free: page after every tenth cursor starts right after it.
        for after in stride(from: 0, to: unique, by: 97) {
            let next = try setup.page(of: list, after: Int64(after), limit: 1)
            #expect(next.cursor == Int64(after + 1))
        }
    }

    @Test(arguments: backends) func compactionDropsSupersededOperationsOnly(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let owner = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try store.createList(list, owner: owner)
        let old = [
            Self.op(list, "Milk", field: .checked, value: .bool(true), ms: 1_000),
            Self.op(list, "Milk", field: .checked, value: .bool(false), ms: 2_000),
            Self.op(list, "Eggs", ms: 1_000),
        ]
        _ = try store.append(old, to: list, receivedAt: 100)
        let recent = [Self.op(list, "Milk", field: .checked, value: .bool(true), ms: 3_000)]
        _ = try store.append(recent, to: list, receivedAt: 500)
        #expect(try store.statistics().operations == 4)
        // Seq 1 and 2 are superseded and old enough; seq 4 wins; Eggs has no rival.
        #expect(try store.compact(receivedBefore: 200) == 2)
        #expect(try store.statistics().operations == 2)
        let page = try store.page(of: list, after: 0, limit: 10)
        #expect(try Self.decoded(page) == [old[2], recent[0]])
        #expect(!page.historyComplete)
        #expect(try store.page(of: list, after: 2, limit: 10).historyComplete)
        #expect(try store.compact(receivedBefore: 200) == 0)
        #expect(try store.head(of: list).cursor == 4)
    }

    @Test(arguments: backends) func renewedEpochsDiffer(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let owner = try store.createAccount(name: "alice", passwordHash: "a").id
        let lists = (0..<3).map { _ in ListID.random() }
        let before = try lists.map { try store.createList($0, owner: owner).epoch }
        #expect(try store.renewEpochs() == 3)
        let after = try lists.map { try store.head(of: $0).epoch }
        #expect(after.count == 3 && Set(after).count == 3)
        #expect(Set(after).isDisjoint(with: before))
        #expect(after.allSatisfy { $0.count == 16 })
    }

    /// Eight instances start at once on a new store: all migrate it (one does the work) and work.
    @Test(arguments: backends) func instancesStartingAtOnceMigrateOnce(_ backend: Backend) throws {
        for _ in 0..<3 {
            let storage = try TestStore(backend)
            let (stores, failures) = storage.openAtOnce(8)
            #expect(failures == [])
            #expect(stores.count == 8)
            for (index, store) in stores.enumerated() {
                _ = try store.createAccount(name: "user\(index)", passwordHash: "x")
            }
            #expect(try stores.first?.statistics().accounts == 8)
            for store in stores { store.close() }
        }
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
        try storage.execute(
            sqlite: "ALTER TABLE lists DROP COLUMN dropped; PRAGMA user_version = 1",
            postgres: "ALTER TABLE lists DROP COLUMN dropped; UPDATE basket_schema SET version = 1")
        let (stores, failures) = storage.openAtOnce(4)
        defer { for store in stores { store.close() } }
        #expect(failures == [])
        #expect(try stores.first?.statistics().operations == 2)
        #expect(try stores.first?.page(of: list, after: 0, limit: 10).count == 2)
        #expect(try storage.schemaVersion() == 2)
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

    /// A store exported from each backend and imported into each: the same rows, the same log.
    @Test(arguments: backends, backends) func aStoreMovesBetweenBackends(_ from: Backend, _ to: Backend) throws {
        let folder = TemporaryDirectory("move")
        let sourceStorage = try TestStore(from)
        let source = try sourceStorage.open()
        defer { source.close() }
        let alice = try source.createAccount(name: "alice", passwordHash: "pbkdf2$1$aa$bb")
        let bob = try source.createAccount(name: "bob", passwordHash: "pbkdf2$1$cc$dd")
        try source.saveToken(hash: "token", account: alice.id, createdAt: 5)
        let list = ListID.random()
        _ = try source.createList(list, owner: alice.id)
        try source.saveInvite(code: "inv", list: list, role: .editor, createdBy: alice.id, expiresAt: 99)
        _ = try source.redeemInvite(code: "inv", account: bob.id, now: 1)
        let ops =
            (0..<500).map { Self.op(list, "Item \($0)", counter: UInt16($0)) } + [
                Self.op(list, "Item 1", field: .checked, value: .bool(true), counter: 600),
                Self.op(list, "Item 2", field: .note, value: .null, counter: 601),
                Self.op(list, "Øl \"7\" \\", field: .note, value: .text("{a,b}"), counter: 602),
            ]
        _ = try source.append(ops, to: list, receivedAt: 77)
        // A rename of Item 0 supersedes its first name; compaction drops that one (seq 1).
        _ = try source.append(
            [Self.op(list, "Item 0", value: .text("Item zero"), ms: 1_764_400_000_001)], to: list, receivedAt: 78)
        #expect(try source.compact(receivedBefore: 78) == 1)
        #expect(try source.statistics().operations == 503)
        let dump = folder.file("dump.jsonl")
        let counts = try source.export(to: dump)
        #expect(counts == ["accounts": 2, "tokens": 1, "lists": 1, "members": 2, "invites": 1, "ops": 503])

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
