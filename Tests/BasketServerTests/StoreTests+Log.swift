import BasketCore
import Foundation
import Postgres
import SQLite
import Synchronization
import TestServers
import TestSupport
import Testing

@testable import BasketServer

// The store contract: the log (numbering, idempotence, pages, quotas, concurrent writers, compaction).
extension StoreTests {
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
        var seen: [Op] = []
        var pages = 0
        while true {
            let page = try store.page(of: list, after: after, limit: 5_000)
            pages += 1
            #expect(page.encoded.count <= LogPage.defaultMaxBytes + 4_200)
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

    /// A list's items and bytes are counted as pushes land; a push that would pass either quota is
    /// refused whole; compaction gives bytes back.
    @Test(arguments: backends) func listQuotasRefuseAPushWhole(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        let limits = ListLimits(maxItems: 3, maxBytes: 1_000)
        let first = [
            Self.op(list, "Milk", ms: 1_000), Self.op(list, "Milk", field: .checked, value: .bool(false), ms: 1_001),
            Self.op(list, "Tea", ms: 1_002),
        ]
        _ = try store.append(first, to: list, receivedAt: 1, limits: limits, pusher: nil)
        #expect(try store.usage(of: list) == (2, (4 + 64) + 64 + (3 + 64)))
        // Duplicates and new writes to known items add no item.
        _ = try store.append(
            first + [Self.op(list, "Tea", value: .text("Green tea"), ms: 1_003)], to: list,
            receivedAt: 2, limits: limits, pusher: nil)
        #expect(try store.usage(of: list).items == 2)
        // Two new items where one fits: refused whole.
        #expect(throws: StoreError.tooManyItems) {
            try store.append(
                [Self.op(list, "Eggs", ms: 1_004), Self.op(list, "Bread", ms: 1_005)], to: list, receivedAt: 3,
                limits: limits, pusher: nil)
        }
        #expect(try store.head(of: list).cursor == 4 && store.usage(of: list).items == 2)
        _ = try store.append([Self.op(list, "Eggs", ms: 1_006)], to: list, receivedAt: 3, limits: limits, pusher: nil)
        // A note past the bytes left: refused whole.
        let before = try store.usage(of: list).bytes
        #expect(throws: StoreError.listTooLarge) {
            try store.append(
                [Self.op(list, "Eggs", field: .note, value: .text(String(repeating: "n", count: 1_000)), ms: 1_007)],
                to: list, receivedAt: 4, limits: limits, pusher: nil)
        }
        #expect(try store.usage(of: list).bytes == before && store.head(of: list).cursor == 5)
        // Compaction drops Tea's first name (superseded): its bytes come back; its item stays.
        #expect(try store.compact(receivedBefore: 10) == 1)
        #expect(try store.usage(of: list) == (3, before - (3 + 64)))
    }

    /// A list full to its byte quota still takes the writes that shrink it (removals, unchecks,
    /// cleared fields on items it holds), within a reserve of a quarter of the quota; anything
    /// that grows it is refused, and so is a shrinking write once the reserve is used too.
    @Test(arguments: backends) func aFullListTakesTheWritesThatShrinkIt(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let list = ListID.random()
        _ = try store.createList(list, owner: try store.createAccount(name: "alice", passwordHash: "a").id)
        let limits = ListLimits(maxItems: 1_000, maxBytes: 2_000)  // a reserve of 500 bytes
        func push(_ ops: [Op]) throws -> Int {
            try store.append(ops, to: list, receivedAt: 1, limits: limits, pusher: nil).accepted
        }
        // 28 names of 7 bytes (71 each): 1,988 bytes.
        let names = (10..<38).map { "Item \($0)" }
        #expect(try push(names.enumerated().map { Self.op(list, $1, ms: 1_000 + UInt64($0)) }) == 28)
        #expect(try store.usage(of: list).bytes == 1_988)
        #expect(throws: StoreError.listTooLarge) { try push([Self.op(list, "One more", ms: 2_000)]) }
        // Removals, an uncheck and a cleared note of items it holds: taken (64 bytes each).
        let shrinking =
            (0..<5).map { Self.op(list, names[$0], field: .deleted, value: .bool(true), ms: 3_000 + UInt64($0)) } + [
                Self.op(list, names[5], field: .checked, value: .bool(false), ms: 3_010),
                Self.op(list, names[6], field: .note, value: .null, ms: 3_011),
            ]
        #expect(try push(shrinking) == 7)
        #expect(try store.usage(of: list).bytes == 1_988 + 7 * 64)
        // Checking an item grows nothing a person sees, but it is not a removal: refused; so is a
        // removal of an item the list never held (a new item).
        #expect(throws: StoreError.listTooLarge) {
            try push([Self.op(list, names[7], field: .checked, value: .bool(true), ms: 3_020)])
        }
        #expect(throws: StoreError.listTooLarge) {
            try push([Self.op(list, "Never here", field: .deleted, value: .bool(true), ms: 3_021)])
        }
        // The reserve runs out: 2,436 + 64 = 2,500 fits, the next does not.
        #expect(try push([Self.op(list, names[8], field: .deleted, value: .bool(true), ms: 3_030)]) == 1)
        #expect(throws: StoreError.listTooLarge) {
            try push([Self.op(list, names[9], field: .deleted, value: .bool(true), ms: 3_031)])
        }
    }

    /// Compaction drops a removed item whole (every operation of it) once all of them are past
    /// the retention: its bytes and its place among the list's items come back, and a pull from
    /// the start no longer carries it. A removed item with a recent operation stays.
    @Test(arguments: backends) func compactionDropsItemsRemovedPastTheRetentionWhole(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let list = ListID.random()
        _ = try store.createList(list, owner: try store.createAccount(name: "alice", passwordHash: "a").id)
        let limits = ListLimits(maxItems: 3, maxBytes: 1 << 20)
        func push(_ ops: [Op], at received: Int64) throws -> Int {
            try store.append(ops, to: list, receivedAt: received, limits: limits, pusher: nil).accepted
        }
        #expect(
            try push(["Milk", "Junk", "Spam"].enumerated().map { Self.op(list, $1, ms: 1_000 + UInt64($0)) }, at: 1)
                == 3)
        #expect(try push([Self.op(list, "Junk", field: .note, value: .text("x"), ms: 1_100)], at: 2) == 1)
        #expect(try push([Self.op(list, "Junk", field: .deleted, value: .bool(true), ms: 1_200)], at: 3) == 1)
        #expect(try push([Self.op(list, "Spam", field: .deleted, value: .bool(true), ms: 1_201)], at: 20) == 1)
        // The list holds three items: a fourth is refused.
        #expect(throws: StoreError.tooManyItems) { try push([Self.op(list, "Bread", ms: 1_300)], at: 21) }
        let before = try store.usage(of: list)
        _ = try store.compact(receivedBefore: 10)
        // Junk went whole (name, note, deleted: 68 + 65 + 64 bytes); Spam's removal is recent.
        #expect(try store.usage(of: list) == (2, before.bytes - 68 - 65 - 64))
        let names = try Self.decoded(store.page(of: list, after: 0, limit: 100)).compactMap(\.value.textValue)
        #expect(names.sorted() == ["Milk", "Spam"])
        #expect(try push([Self.op(list, "Bread", ms: 1_400)], at: 22) == 1)
    }

    /// An account binds at most `maxReplicasPerMember` replica ids to a list and the list holds at
    /// most `maxReplicasPerList`: a push that would bind more is refused whole; ids already bound
    /// push as before; the members answer names each member's ids in order.
    @Test(arguments: backends) func replicaIdsPerMemberAndPerListAreCapped(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        let limits = ListLimits(maxItems: 1_000, maxBytes: 1 << 20, maxReplicasPerMember: 3, maxReplicasPerList: 5)
        func push(_ pusher: Int64, replicas: [UInt64], ms: UInt64) throws -> AppendResult {
            try store.append(
                replicas.map { Self.op(list, "Item \($0)", ms: ms, replica: $0) }, to: list, receivedAt: 1,
                limits: limits, pusher: pusher)
        }
        #expect(try push(alice, replicas: [30, 10, 20], ms: 1_000).accepted == 3)
        #expect(throws: StoreError.tooManyReplicas) { try push(alice, replicas: [10, 40], ms: 1_001) }
        #expect(try store.head(of: list).cursor == 3)
        #expect(try push(alice, replicas: [10, 20, 30], ms: 1_002).accepted == 3)
        #expect(try push(bob, replicas: [50, 60], ms: 1_003).accepted == 2)
        // Bob has two of his three, but the list is at its five.
        #expect(throws: StoreError.tooManyReplicas) { try push(bob, replicas: [70], ms: 1_004) }
        #expect(try store.members(of: list).first?.replicas.map(\.rawValue) == [10, 20, 30])
    }

    /// The items a list has held are known again after a restart (SQLite reads them from the log),
    /// and pushes committed together do not count one new item twice.
    @Test(arguments: backends) func itemQuotasHoldAcrossRestartsAndConcurrentPushes(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let list = ListID.random()
        let limits = ListLimits(maxItems: 40, maxBytes: 1 << 20)
        do {
            let store = try storage.open()
            defer { store.close() }
            let alice = try store.createAccount(name: "alice", passwordHash: "a").id
            _ = try store.createList(list, owner: alice)
            _ = try store.append(
                (0..<10).map { Self.op(list, "Item \($0)", ms: 1_000 + UInt64($0)) }, to: list, receivedAt: 1,
                limits: limits, pusher: nil)
        }
        let store = try storage.open()
        defer { store.close() }
        // Known items again (a new value each), and 30 new ones pushed by eight threads at once,
        // each new item by two of them.
        _ = try store.append(
            (0..<10).map { Self.op(list, "Item \($0)", value: .text("again \($0)"), ms: 2_000 + UInt64($0)) },
            to: list, receivedAt: 2, limits: limits, pusher: nil)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            let ops = (0..<30).filter { $0 % 4 == thread % 4 }.map {
                Self.op(list, "New \($0)", ms: 3_000 + UInt64($0), replica: UInt64(100 + thread))
            }
            do { _ = try store.append(ops, to: list, receivedAt: 3, limits: limits, pusher: nil) } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try store.usage(of: list).items == 40)
        #expect(throws: StoreError.tooManyItems) {
            try store.append(
                [Self.op(list, "One too many", ms: 4_000)], to: list, receivedAt: 4, limits: limits, pusher: nil)
        }
        #expect(try store.usage(of: list).items == 40)
    }

    /// A push is idempotent whatever the store remembers: across a restart, after a push that was
    /// refused (its new operations were not kept, so they are new next time), with a replica's
    /// high-bit id, and after compaction dropped an operation (pushed again, it is new again).
    @Test(arguments: backends) func duplicatesAreRecognisedAcrossRestartsRefusalsAndCompaction(_ backend: Backend)
        throws
    {
        let storage = try TestStore(backend)
        let list = ListID.random()
        let first = (0..<20).map { Self.op(list, "Item \($0 % 7)", ms: 1_000 + UInt64($0)) }
        do {
            let store = try storage.open()
            defer { store.close() }
            let alice = try store.createAccount(name: "alice", passwordHash: "a").id
            _ = try store.createList(list, owner: alice)
            #expect(try store.append(first, to: list, receivedAt: 1).accepted == 20)
        }
        let store = try storage.open()
        defer { store.close() }
        let again = try store.append(first + first.prefix(3), to: list, receivedAt: 2)
        #expect(again.accepted == 0 && again.duplicates == 23 && again.cursor == 20)
        // A push past the item quota is refused; what it held is new when pushed within it.
        let refused = (0..<5).map { Self.op(list, "New \($0)", ms: 2_000 + UInt64($0), replica: 1 << 63 | 5) }
        #expect(throws: StoreError.tooManyItems) {
            try store.append(
                first.suffix(2) + refused, to: list, receivedAt: 3, limits: ListLimits(maxItems: 8, maxBytes: 1 << 20),
                pusher: nil)
        }
        // One of them twice in the push: the second is a duplicate of the first.
        let kept = try store.append(refused + [refused[1]] + first.suffix(2), to: list, receivedAt: 3)
        #expect(kept.accepted == 5 && kept.duplicates == 3 && kept.cursor == 25)
        #expect(try store.usage(of: list).items == 12)
        // A newer value of "Item 0" makes its first operation superseded, and compaction drops it.
        let newer = Self.op(list, "Item 0", value: .text("Item 0, newer"), ms: 5_000)
        #expect(try store.append([newer], to: list, receivedAt: 4).accepted == 1)
        #expect(try store.compact(receivedBefore: 2) > 0)
        let afterCompaction = try store.append([first[0], newer, refused[0]], to: list, receivedAt: 5)
        #expect(afterCompaction.accepted == 1 && afterCompaction.duplicates == 2 && afterCompaction.cursor == 27)
        #expect(try Self.decoded(store.page(of: list, after: 26, limit: 10)) == [first[0]])
    }

    /// Two instances push to one list in turn: each knows the list's log only as far as it last
    /// pushed, catches up with what the other pushed, and finds duplicates of either's operations,
    /// also after the other compacted some away (an operation dropped is new again).
    @Test(arguments: backends) func instancesTakingTurnsRecogniseEachOthersOperations(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let one = try storage.open()
        defer { one.close() }
        let two = try storage.open()
        defer { two.close() }
        let list = ListID.random()
        _ = try one.createList(list, owner: try one.createAccount(name: "alice", passwordHash: "a").id)
        let a = (0..<30).map { Self.op(list, "A \($0)", ms: 1_000 + UInt64($0)) }
        let b = (0..<30).map { Self.op(list, "B \($0)", ms: 2_000 + UInt64($0)) }
        #expect(try one.append(a, to: list, receivedAt: 1).accepted == 30)
        // `two` has not read the list: it reads it whole.
        #expect(try two.append(a.shuffled(), to: list, receivedAt: 2).duplicates == 30)
        #expect(try two.append(b, to: list, receivedAt: 2).accepted == 30)
        // `one` last saw 30 operations; it catches up with `two`'s.
        let both = try one.append((a + b).shuffled(), to: list, receivedAt: 3)
        #expect(both.accepted == 0 && both.duplicates == 60 && both.cursor == 60)
        // A newer "A 0" supersedes the first, which `two` compacts away; `one` still lists it.
        let newer = Self.op(list, "A 0", value: .text("A 0, newer"), ms: 9_000)
        #expect(try two.append([newer], to: list, receivedAt: 4).cursor == 61)
        #expect(try two.compact(receivedBefore: 2) == 1)
        let again = try one.append([a[0], a[1], newer, b[0]], to: list, receivedAt: 5)
        #expect(again.accepted == 1 && again.duplicates == 3 && again.cursor == 62)
        #expect(try two.append([a[0]], to: list, receivedAt: 6).duplicates == 1)
        #expect(try Self.decoded(one.page(of: list, after: 61, limit: 10)) == [a[0]])
        #expect(try one.usage(of: list).items == 60)
        #expect(try storage.operationCount() == 61)
    }

    /// On PostgreSQL a push this instance's log can decide alone (it knows the list's head, no
    /// operation may repeat a stored one, the pusher owns every replica) is one statement; any
    /// doubt goes the locked way: the list's first push here, a push repeating an operation,
    /// another instance having pushed meanwhile, a quota. Each way numbers the same.
    @Test func aPushTheLogCanDecideIsOneStatementOnPostgreSQL() throws {
        guard StoreTests.backends.contains(.postgres) else { return }
        let storage = try TestStore(.postgres)
        let one = try storage.open()
        defer { one.close() }
        let two = try storage.open()
        defer { two.close() }
        let postgres = try #require(one as? PostgresStore)
        // Written in one statement, written locked, tried in one statement and found moved on.
        func ways() -> [Int] { postgres.pushesByWay.withLock { [$0.oneStatement, $0.locked, $0.missed] } }
        let owner = try one.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try one.createList(list, owner: owner)
        let ops = (0..<8).map { Self.op(list, "Item \($0)", ms: 1_000 + UInt64($0)) }
        func push(_ store: any Store, _ batch: [Op], limits: ListLimits = .none) throws -> AppendResult {
            try store.append(batch, to: list, receivedAt: 1, limits: limits, pusher: owner)
        }
        #expect(try push(one, [ops[0]]).cursor == 1)
        #expect(ways() == [0, 1, 0])  // the list's number and head not known yet
        #expect(try push(one, [ops[1], ops[2]]).cursor == 3)
        #expect(ways() == [1, 1, 0])
        let again = try push(one, [ops[2], ops[3]])  // one repeats a stored operation
        #expect(again.accepted == 1 && again.duplicates == 1 && again.cursor == 4)
        #expect(ways() == [1, 2, 0])
        #expect(try push(two, [ops[4]]).cursor == 5)  // another instance moves the head
        let behind = try push(one, [ops[5]])
        #expect(behind.accepted == 1 && behind.cursor == 6)
        #expect(ways() == [1, 3, 1])  // tried in one statement, found the head moved, then locked
        // Over the item quota: the statement writes nothing, the locked way refuses it whole.
        #expect(throws: StoreError.tooManyItems) {
            try push(one, [ops[6]], limits: ListLimits(maxItems: 6, maxBytes: 1 << 20))
        }
        #expect(try push(one, [ops[6]]).cursor == 7)
        #expect(ways() == [2, 4, 2])
        let page = try Self.decoded(one.page(of: list, after: 0, limit: 100))
        #expect(page == Array(ops[0..<7]))
        #expect(try one.usage(of: list).items == 7)
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
}
