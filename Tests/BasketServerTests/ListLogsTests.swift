import BasketCore
import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import BasketServer

/// What the SQLite writer knows of lists' logs, alone: operations are told apart by their whole
/// identity even when every hash collides, a push not kept leaves nothing behind, and the lists
/// kept stay within the capacity.
struct ListLogsTests {
    typealias Identity = ListLogs.Identity

    static func identity(_ n: Int, item: Int = 0) -> Identity {
        Identity(
            item: ItemID(raw: ID128(high: 1, low: UInt64(item))), field: 0, timestamp: Int64(n), replica: 9)
    }

    /// A log in memory standing for the store's rows: sequence number → identity (and value).
    final class Rows {
        var rows: [Int64: Identity] = [:]
        var values: [Int64: Value] = [:]
        var last: Int64 = 0
        func stored(_ seq: Int64) -> ListLogs.Stored? {
            rows[seq].map { ListLogs.Stored(identity: $0, value: values[seq] ?? .null) }
        }
    }

    /// Keys that are all the same.
    static func colliding(_ identity: Identity) -> ListLogs.Hashed { .init(identity, key: 7, itemKey: 7) }

    static func logs(capacity: Int = 1_000, collide: Bool) -> ListLogs {
        if collide { return ListLogs(capacity: capacity, hashing: { identity in Self.colliding(identity) }) }
        return ListLogs(capacity: capacity)
    }

    /// Admits `identities` into list `no` as a push would, storing the new ones after `rows`'s
    /// last; with `collide`, every operation and item has the same keys. The log is put back as
    /// kept unless `keep` is false (the store rolled the push back: the caller drops its rows).
    static func push(
        _ identities: [Identity], _ logs: inout ListLogs, _ rows: Rows, list no: Int64 = 1, collide: Bool = false,
        keep: Bool = true
    ) -> (accepted: Int, newItems: Int) {
        var push = logs.open(no, expected: rows.rows.count) { visit in
            for (seq, identity) in rows.rows.sorted(by: { $0.key < $1.key }) { visit(seq, identity) }
        }
        var accepted = 0
        for identity in identities {
            let seq = rows.last + 1
            let hashed = collide ? Self.colliding(identity) : ListLogs.Hashed(identity)
            if push.admit(hashed, value: .null, at: seq, stored: rows.stored) == .new {
                rows.rows[seq] = identity
                rows.last = seq
                accepted += 1
            }
        }
        logs.close(push, kept: keep)
        return (accepted, push.newItems)
    }

    @Test(arguments: [false, true]) func duplicatesAreFoundAndNewOperationsKept(collide: Bool) {
        var logs = Self.logs(collide: collide)
        let rows = Rows()
        let first = (0..<50).map { Self.identity($0, item: $0 % 5) }
        #expect(Self.push(first, &logs, rows, collide: collide) == (50, 5))
        #expect(Self.push(first, &logs, rows, collide: collide) == (0, 0))
        // Half known, half new, and one new operation twice in the same push; no new item.
        let mixed = (25..<75).map { Self.identity($0, item: $0 % 5) } + [Self.identity(74, item: 4)]
        #expect(Self.push(mixed, &logs, rows, collide: collide) == (25, 0))
        #expect(logs.count == 75 + 5)
    }

    /// The same identity with another value is a conflict, not a duplicate: in the stored log
    /// and earlier in the same push, however the keys collide; a push with one is refused whole.
    @Test(arguments: [false, true]) func anIdentityStoredWithAnotherValueIsAConflict(collide: Bool) throws {
        func op(_ name: String, _ n: Int) -> Op {
            Op(
                list: ListID(raw: ID128(high: 0, low: 1)), item: ItemID(raw: ID128(high: 1, low: 1)), field: .name,
                value: .text(name),
                version: Version(
                    timestamp: HybridTimestamp(rawValue: UInt64(n)), replica: ReplicaID(rawValue: 9 ^ (1 << 63))))
        }
        var logs = Self.logs(collide: collide)
        let milk = ListLogs.Identity(op("Milk", 1))
        let rows = Rows()
        var push = logs.open(1, expected: 0) { _ in }
        let hashed = collide ? Self.colliding(milk) : ListLogs.Hashed(milk)
        #expect(push.admit(hashed, value: .text("Milk"), at: 1, stored: rows.stored) == .new)
        rows.rows[1] = milk
        rows.values[1] = .text("Milk")
        rows.last = 1
        logs.close(push, kept: true)
        push = logs.open(1, expected: 1) { _ in }
        #expect(push.admit(hashed, value: .text("Milk"), at: 2, stored: rows.stored) == .duplicate)
        #expect(push.admit(hashed, value: .text("Forged"), at: 2, stored: rows.stored) == .conflict)
        logs.close(push, kept: false)
        // Through the batch admission: refused whole, naming how many.
        let ops = [op("Tea", 5), op("Forged", 1), op("Jam", 6)]
        var batch = logs.open(1, expected: 1) { _ in }
        let keys = ops.map { collide ? Self.colliding(ListLogs.Identity($0)) : ListLogs.Hashed(ListLogs.Identity($0)) }
        #expect(ListLogs.Identity(ops[1]) == milk)
        #expect(throws: StoreError.identityConflict(1)) { try batch.admit(ops, keys, after: 1, stored: rows.stored) }
        logs.close(batch, kept: false)
        // Within one push: the second of two values for one identity is the conflict.
        var own = logs.open(1, expected: 1) { _ in }
        #expect(throws: StoreError.identityConflict(1)) {
            try own.admit([op("Tea", 5), op("Coffee", 5)], [keys[0], keys[0]], after: 1, stored: rows.stored)
        }
        logs.close(own, kept: false)
        #expect(logs.count == 2)
    }

    @Test(arguments: [false, true]) func aLogReadAgainKnowsItsOperations(collide: Bool) {
        let rows = Rows()
        var before = Self.logs(collide: collide)
        _ = Self.push((0..<20).map { Self.identity($0, item: $0 % 3) }, &before, rows, collide: collide)
        var after = Self.logs(collide: collide)
        #expect(Self.push((0..<20).map { Self.identity($0, item: $0 % 3) }, &after, rows, collide: collide) == (0, 0))
        #expect(Self.push([Self.identity(20, item: 3)], &after, rows, collide: collide) == (1, 1))
        #expect(after.count == 21 + 4)
    }

    @Test(arguments: [false, true]) func aPushNotKeptLeavesNothing(collide: Bool) {
        var logs = Self.logs(collide: collide)
        let rows = Rows()
        _ = Self.push((0..<10).map { Self.identity($0) }, &logs, rows, collide: collide)
        let saved = rows.rows
        let refused = (10..<20).map { Self.identity($0, item: $0) }
        #expect(Self.push(refused, &logs, rows, collide: collide, keep: false) == (10, 10))
        // The store rolled the push back: its rows are gone, and so are its entries.
        rows.rows = saved
        rows.last = 10
        #expect(logs.count == 10 + 1)
        #expect(Self.push(refused, &logs, rows, collide: collide) == (10, 10))
        #expect(logs.count == 20 + 11)
    }

    /// Compaction dropped the row an entry named: the operation is new again (as with an index),
    /// and a push of it that is not kept leaves the entry naming the old row.
    @Test(arguments: [false, true]) func anEntryWhoseRowIsGoneIsNew(collide: Bool) {
        var logs = Self.logs(collide: collide)
        let rows = Rows()
        _ = Self.push([Self.identity(1), Self.identity(2)], &logs, rows, collide: collide)
        rows.rows[1] = nil
        #expect(Self.push([Self.identity(1)], &logs, rows, collide: collide, keep: false) == (1, 0))
        rows.rows[3] = nil
        rows.last = 2
        #expect(logs.count == 2 + 1)
        #expect(Self.push([Self.identity(1), Self.identity(2)], &logs, rows, collide: collide) == (1, 0))
        #expect(rows.rows[3] == Self.identity(1))
        #expect(Self.push([Self.identity(1)], &logs, rows, collide: collide) == (0, 0))
        #expect(logs.count == 2 + 1)
    }

    @Test func listsPushedToLeastRecentlyAreForgottenFirst() {
        var logs = ListLogs(capacity: 100)
        var lists: [Int64: Rows] = [:]
        for no in Int64(1)...3 {
            lists[no] = Rows()
            _ = Self.push((0..<30).map { Self.identity($0, item: $0) }, &logs, lists[no]!, list: no)
        }
        _ = Self.push([], &logs, lists[1]!, list: 1)  // list 1 used again: list 2 is the oldest
        #expect(logs.count == 180)
        logs.trim()  // down to nine tenths of 100: lists 2 and 3 go
        #expect(logs.count == 60)
        // List 2 is read again from its rows, and still knows them.
        #expect(Self.push((0..<30).map { Self.identity($0, item: $0) }, &logs, lists[2]!, list: 2).accepted == 0)
        // A list larger than the capacity is kept whole while it is the one pushed to.
        let large = Rows()
        _ = Self.push((0..<200).map { Self.identity($0) }, &logs, large, list: 9)
        logs.trim()
        #expect(logs.count == 201)
        #expect(Self.push((0..<200).map { Self.identity($0) }, &logs, large, list: 9).accepted == 0)
    }
}

/// The hash table alone, against a plain array of entries: keys that share slots, wrap around the
/// end of the table and are removed from the middle of their runs.
struct KeyTableTests {
    @Test func agreesWithAListOfEntriesUnderRandomChanges() {
        var table = KeyTable(filler: -1)
        var reference: [(key: UInt64, value: Int)] = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        for step in 0..<20_000 {
            // Few keys, some of them 0 (stored as 1) and some with the table's top slots.
            let keys: [UInt64] = [0, 1, 7, 15, 16, 31, 1 << 40 | 7, UInt64.max]
            let key = keys[next(8)]
            let stored = max(key, 1)  // the table keeps 0 as 1 (values tell entries apart)
            let value = next(6)
            switch next(3) {
            case 0 where reference.count < 300:
                table.insert(key, value)
                reference.append((stored, value))
            case 1:
                let removed = table.remove(key) { $0 == value }
                let index = reference.firstIndex { $0.key == stored && $0.value == value }
                #expect(removed == (index != nil), "step \(step)")
                if let index { reference.remove(at: index) }
            default:
                let found = table.first(key) { $0 == value }
                #expect((found?.value == value) == reference.contains { $0.key == stored && $0.value == value })
            }
            #expect(table.count == reference.count)
        }
        for (key, value) in reference { #expect(table.first(key) { $0 == value } != nil) }
    }
}

/// The SQLite store's writer thread.
struct SQLiteWriterTests {
    /// SQLite's writer thread ends a second after the last push, and the next push starts another;
    /// pushes that arrive together are all answered.
    @Test func theSQLiteWriterThreadEndsWhenIdleAndStartsAgain() throws {
        let directory = TemporaryDirectory("writer")
        let store = try SQLiteStore(path: directory.file("store.sqlite"))
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        #expect(try store.append([StoreTests.op(list, "Milk", ms: 1_000)], to: list, receivedAt: 1).cursor == 1)
        #expect(store.queue.withLock { $0.writerRunning })
        let deadline = Date().addingTimeInterval(5)
        while store.queue.withLock({ $0.writerRunning }) && Date() < deadline { usleep(50_000) }
        #expect(!store.queue.withLock { $0.writerRunning })
        let cursors = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let result = try? store.append(
                [StoreTests.op(list, "Item \(index)", ms: 2_000 + UInt64(index))], to: list, receivedAt: 2)
            cursors.withLock { $0.append(result?.cursor ?? -1) }
        }
        #expect(cursors.withLock { $0.sorted() } != [] && cursors.withLock { $0.allSatisfy { $0 > 1 } })
        #expect(try store.head(of: list).cursor == 9)
    }

    /// `close()` ends the writer thread and closes every connection before it returns (the WAL
    /// checkpointed into the file), refuses what comes later as a 503 would, and leaves the file
    /// to be replaced: a push to the store restored in its place is kept, as the simulation's
    /// server data losses need (a store released instead closed on its writer's thread, later).
    @Test func aClosedStoreStopsNowAndItsFileCanBeReplaced() throws {
        let directory = TemporaryDirectory("close")
        let path = directory.file("store.sqlite")
        let first = try SQLiteStore(path: path, fsyncEveryCommit: false)
        let alice = try first.createAccount(name: "alice", passwordHash: "a").id
        let list = ListID.random()
        _ = try first.createList(list, owner: alice)
        try first.backup(to: directory.file("backup.sqlite"))
        _ = try first.append([StoreTests.op(list, "Milk", ms: 1_000)], to: list, receivedAt: 1)
        #expect(first.queue.withLock { $0.writerRunning })
        first.close()
        #expect(!first.queue.withLock { $0.writerRunning })
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(throws: StoreError.unavailable) {
            try first.append([StoreTests.op(list, "Bread", ms: 2_000)], to: list, receivedAt: 2)
        }
        #expect(throws: StoreError.unavailable) { try first.head(of: list) }

        #expect(try SQLiteStore.restore(from: directory.file("backup.sqlite"), into: path) == 1)
        let second = try SQLiteStore(path: path, fsyncEveryCommit: false)
        #expect(try second.head(of: list).cursor == 0)
        _ = try second.append([StoreTests.op(list, "Bread", ms: 2_000)], to: list, receivedAt: 2)
        second.close()
        let third = try SQLiteStore(path: path, fsyncEveryCommit: false)
        defer { third.close() }
        #expect(try third.head(of: list).cursor == 1)
    }
}
