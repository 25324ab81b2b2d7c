import BasketCore
import Foundation
import SQLite
import TestSupport
import Testing

@testable import BasketReplica

/// A replica on a real file in a temporary directory, with a clock the test moves.
struct Fixture {
    let directory = TemporaryDirectory("replica-test")
    let clock = ManualClock()

    func open(_ name: String = "a") throws -> Replica {
        var configuration = Replica.Configuration()
        configuration.synchronous = .normal
        let clock = self.clock
        configuration.wallClock = { clock.milliseconds }
        return try Replica(path: directory.file("\(name).sqlite"), configuration: configuration)
    }
}

struct ReplicaTests {
    @Test func addingTheSameKeyNeverDuplicates() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let first = try replica.add(["Milk", "milk ", "MILK"], to: list)
        #expect(first.map(\.outcome) == [.added, .alreadyOnList, .alreadyOnList])
        #expect(try replica.items(in: list).map(\.name) == ["Milk"])
    }

    @Test func addingAnExistingNameUnchecksOrRestoresIt() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        try replica.check(milk, in: list)
        #expect(try replica.add(["milk"], to: list)[0].outcome == .unchecked)
        #expect(try replica.item(milk, in: list)?.isChecked == false)
        try replica.check(milk, in: list)
        try replica.remove(milk, in: list)
        #expect(try replica.items(in: list).isEmpty)
        let back = try replica.add(["milk"], to: list)[0]
        #expect(back.outcome == .restored)
        let item = try #require(try replica.item(milk, in: list))
        #expect(!item.isDeleted && !item.isChecked && item.name == "milk")
        #expect(try replica.items(in: list, filter: .all).count == 1)
    }

    @Test func invalidNamesWriteNothing() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let before = try replica.operations()
        #expect(throws: ReplicaError.invalidName(.empty)) { try replica.add(["Milk", "  "], to: list) }
        #expect(throws: ReplicaError.invalidName(.tooLong(501))) {
            try replica.add([String(repeating: "x", count: 501)], to: list)
        }
        #expect(try replica.operations() == before)
    }

    @Test func renameWithinTheKeyChangesOnlyTheName() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["milk"], to: list)[0].item.id
        let renamed = try replica.rename(milk, to: "Milk", in: list)
        #expect(renamed.id == milk)
        #expect(try replica.items(in: list).map(\.name) == ["Milk"])
    }

    @Test func renameToAnotherKeyMovesTheItemWithItsFields() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        try replica.set(.quantity, to: "2 l", of: milk, in: list)
        try replica.set(.note, to: "organic", of: milk, in: list)
        try replica.check(milk, in: list)
        let oat = try replica.rename(milk, to: "Oat milk", in: list)
        #expect(oat.id == ItemID(list: list, key: "oat milk"))
        let items = try replica.items(in: list, filter: .all)
        let moved = try #require(items.first { $0.id == oat.id })
        #expect(moved.name == "Oat milk" && moved.quantity == "2 l" && moved.note == "organic" && moved.isChecked)
        #expect(items.first { $0.id == milk }?.isDeleted == true)

        try replica.add(["Bread"], to: list)
        #expect(throws: ReplicaError.nameTaken(existing: "Bread")) { try replica.rename(oat.id, to: "bread", in: list) }
    }

    @Test func historyShowsEveryWriteAndWhyTheWinnerWon() throws {
        let fixture = Fixture()
        let a = try fixture.open("a")
        let b = try fixture.open("b")
        let list = try a.createList(title: "Groceries").id
        let milk = try a.add(["Milk"], to: list)[0].item.id
        try b.merge(a.operations())
        fixture.clock.advance(by: 10)
        try a.check(milk, in: list)
        fixture.clock.advance(by: 10)
        try b.uncheck(milk, in: list)
        try a.merge(b.operations())
        let checked = try a.history(of: milk, in: list).filter { $0.operation.field == .checked }
        #expect(checked.count == 3)
        #expect(checked.filter(\.isWinner).map(\.operation.value) == [.bool(false)])
        #expect(checked.last?.isWinner == true)
        #expect(checked.first?.reason.contains("superseded") == true)
        #expect(try a.item(milk, in: list)?.isChecked == false)
    }

    @Test func mergeIsIdempotentAndOrderIndependent() throws {
        let fixture = Fixture()
        let source = try fixture.open("source")
        let list = try source.createList(title: "Groceries").id
        let ids = try source.add(["Milk", "Bread", "Eggs", "Øl"], to: list).map(\.item.id)
        for (i, id) in ids.enumerated() {
            fixture.clock.advance(by: 1)
            if i % 2 == 0 { try source.toggle(id, in: list) } else { try source.remove(id, in: list) }
        }
        try source.rename(ids[0], to: "Whole milk", in: list)
        let ops = try source.operations()
        var rng = SeededGenerator(seed: 3)
        let target = try fixture.open("target")
        let first = try target.merge(ops.shuffled(using: &rng))
        #expect(first.new == ops.count && first.duplicates == 0)
        let again = try target.merge(ops.shuffled(using: &rng) + ops)
        #expect(again.new == 0 && again.duplicates == 2 * ops.count)
        #expect(try target.items(in: list, filter: .all) == source.items(in: list, filter: .all))
        #expect(try target.operations() == ops)
        // Nothing of the other replica's reaches this one's outbox.
        #expect(try target.pendingOperations().isEmpty)
    }

    @Test func aBadBatchOrAClockSkewChangesNothing() throws {
        let fixture = Fixture()
        let source = try fixture.open("source")
        let list = try source.createList(title: "Groceries").id
        try source.add(["Milk"], to: list)
        let good = try source.operations()
        let target = try fixture.open("target")
        var bad = good
        bad.append(Op(list: list, item: .list, field: .checked, value: .bool(true), version: good[0].version))
        #expect(throws: ReplicaError.self) { try target.merge(bad) }
        #expect(try target.operations().isEmpty)

        var future = good
        future[0].version.timestamp = HybridTimestamp(
            milliseconds: fixture.clock.milliseconds + 10 * 60_000, counter: 0)
        do {
            try target.merge(future)
            Issue.record("a timestamp 10 minutes ahead was accepted")
        } catch ReplicaError.clockSkew(let skew) {
            #expect(skew.offsetMilliseconds == 10 * 60_000)
        }
        #expect(try target.operations().isEmpty)
        #expect(try target.clock().last == .zero)
    }

    @Test func receivedTimestampsAdvanceTheLocalClock() throws {
        let fixture = Fixture()
        let a = try fixture.open("a")
        let list = try a.createList(title: "Groceries").id
        let milk = try a.add(["Milk"], to: list)[0].item.id
        fixture.clock.advance(by: 120_000)  // a is two minutes ahead when it writes
        try a.check(milk, in: list)
        fixture.clock.set(fixture.clock.milliseconds - 120_000)
        let b = try fixture.open("b")
        try b.merge(a.operations())
        // b's clock is behind, yet its later uncheck must win over a's check.
        try b.uncheck(milk, in: list)
        try a.merge(b.operations())
        #expect(try a.item(milk, in: list)?.isChecked == false)
        #expect(try b.item(milk, in: list)?.isChecked == false)
    }

    @Test func stateSurvivesReopening() throws {
        let fixture = Fixture()
        var replica: Replica? = try fixture.open()
        let id = replica!.replicaID
        let list = try replica!.createList(title: "Groceries").id
        try replica!.add(["Milk"], to: list)
        let clock = try replica!.clock()
        replica = nil
        let reopened = try fixture.open()
        #expect(reopened.replicaID == id)
        #expect(try reopened.clock() == clock)
        #expect(try reopened.items(in: list).map(\.name) == ["Milk"])
        #expect(try reopened.lists().map(\.title) == ["Groceries"])
    }

    @Test func localWritesWaitInTheOutboxUntilAcknowledged() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        try replica.add(["Milk"], to: list)
        let pending = try replica.pendingOperations()
        #expect(pending.map(\.operation.field) == [.title, .name, .checked, .deleted])
        #expect(Set(pending.map(\.operation)) == Set(try replica.operations()))
        try replica.acknowledge(through: pending[1].sequence)
        #expect(try replica.pendingOperations().map(\.operation.field) == [.checked, .deleted])
    }

    @Test func theOutboxKeepsEachWriteAsItIsSent() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        try replica.add(["Milk\tand\\tea"], to: list)
        let pending = try replica.pendingOperations()
        let batch = try #require(try replica.pendingBatch(in: list, limit: 3))
        // The lines as stored, under the list's header: the bytes the encoder makes of the writes.
        #expect(batch.text == OperationText(Array(pending.prefix(3).map(\.operation))))
        #expect(batch.count == 3 && batch.lastSequence == pending[2].sequence)
        #expect(try replica.pendingBatch(in: ListID.random(), limit: 10) == nil)
    }

    @Test func anOutboxOfBinaryRecordsIsMigratedToLines() throws {
        let fixture = Fixture()
        let path = fixture.directory.file("a.sqlite")
        let list = ListID.random()
        let item = ItemID(list: list, key: "milk")
        let version = Version(
            timestamp: HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 2), replica: ReplicaID(rawValue: 7))
        do {
            // A file as schema 6 left it: one write waiting, as a binary record.
            let db = try Connection(path: path)
            for migration in Schema.migrations.prefix(Schema.outboxLinesMigration) { try db.execute(migration) }
            try db.setUserVersion(Schema.outboxLinesMigration)
            var record: [UInt8] = []
            Records.append(field: .name, register: Register(value: .text("Milk"), version: version), to: &record)
            try db.run(
                "INSERT INTO outbox(list, item, record) VALUES (?, ?, ?)", .blob(list.raw.bytes), .blob(item.raw.bytes),
                .blob(record))
        }
        let written = Op(list: list, item: item, field: .name, value: .text("Milk"), version: version)
        // `basket doctor` salvages such a file without migrating it.
        #expect(ReplicaFile.salvage(from: path).pending == [written])
        let replica = try fixture.open()
        #expect(ReplicaFile.salvage(from: path).pending == [written])
        #expect(try replica.pendingOperations().map(\.operation) == [written])
        #expect(try replica.pendingBatch(in: list, limit: 10)?.text == OperationText([written]))
        let db = try Connection(path: path)
        #expect(
            try db.query("PRAGMA table_info(outbox)", map: { $0.string(1) ?? "" }) == ["seq", "list", "item", "line"])
    }

    @Test func aNewerSchemaIsRefused() throws {
        let fixture = Fixture()
        _ = try fixture.open()
        let db = try Connection(path: fixture.directory.file("a.sqlite"))
        try db.setUserVersion(Replica.schemaVersion + 1)
        #expect(throws: ReplicaError.newerSchema(found: Replica.schemaVersion + 1, supported: Replica.schemaVersion)) {
            try fixture.open()
        }
    }

    @Test func changesAreStreamedToObservers() async throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let stream = replica.updates()
        let list = try replica.createList(title: "Groceries").id
        let milk = try replica.add(["Milk"], to: list)[0].item.id
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.origin == .local && first?.lists == [list])
        let second = await iterator.next()
        #expect(second?.items == [milk])

        let other = try fixture.open("b")
        let otherStream = other.updates()
        try other.merge(replica.operations())
        var otherIterator = otherStream.makeAsyncIterator()
        let remote = await otherIterator.next()
        #expect(remote?.origin == .remote && remote?.items == [milk])
    }

    @Test func listsAreCreatedRenamedAndCounted() throws {
        let fixture = Fixture()
        let replica = try fixture.open()
        let list = try replica.createList(title: "Groceries").id
        #expect(throws: ReplicaError.listExists("groceries")) { try replica.createList(title: "groceries") }
        try replica.add(["Milk", "Bread"], to: list)
        try replica.check(ItemID(list: list, key: "bread"), in: list)
        try replica.renameList(list, to: "Weekly shop")
        let info = try #require(try replica.lists().first)
        #expect(info.title == "Weekly shop" && info.itemCount == 2 && info.uncheckedCount == 1)
    }
}
