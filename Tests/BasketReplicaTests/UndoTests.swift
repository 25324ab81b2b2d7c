import BasketCore
import Foundation
import TestSupport
import Testing

@testable import BasketReplica

/// Undo writes back what a command replaced, as new writes: each kind of command, walking back
/// several, the journal's bounds.
struct UndoTests {
    let fixture = Fixture()

    /// What the list shows: "name checked quantity" (a removed item stays a removed row once
    /// it existed, so removed rows are not compared).
    func state(_ replica: Replica, _ list: ListID) throws -> [String] {
        try replica.items(in: list).map { "\($0.name) \($0.isChecked ? "x" : "-") \($0.quantity ?? "")" }.sorted()
    }

    @Test func eachCommandIsUndoneAndRepeatedUndoWalksBack() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        try replica.add([Replica.NewItem(name: "Milk", quantity: "1 l")], to: list.id)
        let milk = try #require(try replica.items(in: list.id).first).id
        var states = [try state(replica, list.id)]
        func step(_ body: () throws -> Void) throws {
            fixture.clock.advance(by: 5)
            try body()
            states.append(try state(replica, list.id))
        }
        try step { _ = try replica.check(milk, in: list.id) }
        try step { _ = try replica.set(.quantity, to: "2 l", of: milk, in: list.id) }
        try step { _ = try replica.remove(milk, in: list.id) }
        try step { _ = try replica.add(["Bread", "Eggs"], to: list.id) }
        let bread = try #require(try replica.items(in: list.id).first { $0.name == "Bread" }).id
        try step { _ = try replica.rename(bread, to: "Sourdough", in: list.id) }
        try step { try replica.renameList(list.id, to: "Groceries") }
        #expect(states.count == 7)

        // Back through every state, newest first; each undo is a new write in the outbox.
        for expected in states.dropLast().reversed() {
            fixture.clock.advance(by: 5)
            let pending = try replica.pendingCount()
            let undone = try #require(try replica.undo())
            #expect(undone.list == list.id && !undone.writes.isEmpty)
            #expect(try replica.pendingCount() == pending + undone.writes.count)
            let now = try state(replica, list.id)
            #expect(now == expected, "\(now) after an undo, not \(expected)")
        }
        #expect(try replica.lists().map(\.title) == ["Family"])
        // The first command made the list and Milk: undoing it removes Milk; then nothing is left.
        fixture.clock.advance(by: 5)
        #expect(try replica.undo() != nil)
        #expect(try replica.items(in: list.id).isEmpty)
        #expect(try replica.undo() == nil || replica.undo() == nil)
        #expect(try !replica.canUndo())
    }

    /// A removed item comes back as it was: checked, with its quantity.
    @Test func aRemovalUndoneBringsTheItemBackAsItWas() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        try replica.add([Replica.NewItem(name: "Flour", quantity: "500 g")], to: list.id)
        let flour = try #require(try replica.items(in: list.id).first).id
        fixture.clock.advance(by: 5)
        _ = try replica.check(flour, in: list.id)
        fixture.clock.advance(by: 5)
        _ = try replica.remove(flour, in: list.id)
        fixture.clock.advance(by: 5)
        try replica.undo()
        let back = try #require(try replica.items(in: list.id).first)
        #expect(back.name == "Flour" && back.isChecked && back.quantity == "500 g" && !back.isDeleted)
    }

    @Test func theJournalKeepsFiftyStepsAndACommandTooLargeIsABarrier() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        for i in 0..<60 {
            fixture.clock.advance(by: 1)
            try replica.add(["Item \(i)"], to: list.id)
        }
        var undone = 0
        while try replica.undo() != nil { undone += 1 }
        #expect(undone == Replica.undoDepth)
        #expect(try replica.items(in: list.id).count == 10)

        try replica.add(["Tea"], to: list.id)
        try replica.add((0..<2_000).map { "Bulk \($0)" }, to: list.id)  // 6,000 writes
        #expect(throws: ReplicaError.cannotUndo("the last change wrote 6000 values, more than undo keeps")) {
            _ = try replica.undo()
        }
        #expect(try replica.undo() == nil)  // the journal ends at the barrier: Tea stays
        #expect(try replica.items(in: list.id).contains { $0.name == "Tea" })
    }

    @Test func aViewerCannotUndoEither() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        try replica.add(["Milk"], to: list.id)
        try replica.saveSyncState(SyncState(list: list.id, isRegistered: true, role: .viewer))
        #expect(throws: ReplicaError.readOnly(list: list.id, role: .viewer)) { try replica.undo() }
        #expect(try replica.canUndo())
    }
}
