import BasketCore
import Foundation
import TestSupport
import Testing

@testable import BasketReplica

/// What a device does with changes the server will not take: writes refused before they are
/// made once the role is known, and waiting writes dropped with every register recomputed.
struct RefusedChangesTests {
    let fixture = Fixture()

    @Test func aViewersWriteIsRefusedBeforeAnythingIsWritten() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        try replica.add(["Milk"], to: list.id)
        try replica.saveSyncState(SyncState(list: list.id, isRegistered: true, role: .viewer))
        let (pending, operations) = (try replica.pendingCount(), try replica.operations(in: list.id))
        #expect(throws: ReplicaError.readOnly(list: list.id, role: .viewer)) { try replica.add(["Tea"], to: list.id) }
        let milk = try #require(try replica.items(in: list.id).first)
        #expect(throws: ReplicaError.readOnly(list: list.id, role: .viewer)) { try replica.check(milk.id, in: list.id) }
        #expect(try replica.pendingCount() == pending && replica.operations(in: list.id) == operations)
        // An editor again (the server said so at the next sync): writes go through.
        try replica.saveSyncState(SyncState(list: list.id, isRegistered: true, role: .editor))
        try replica.add(["Tea"], to: list.id)
        // A list no longer shared with this account is read-only whatever the role was.
        try replica.markNoLongerMember(list.id)
        #expect(throws: ReplicaError.noLongerMember(list.id)) { try replica.add(["Jam"], to: list.id) }
        #expect(try replica.items(in: list.id).map(\.name) == ["Milk", "Tea"])
    }

    @Test func discardingPutsEveryTouchedRegisterBackToTheOtherWrites() throws {
        let replica = try fixture.open()
        let list = try replica.createList(title: "Family")
        try replica.add(["Milk", "Bread"], to: list.id)
        try replica.acknowledge(through: .max)  // what the server has
        let synced = try replica.items(in: list.id, filter: .all)
        let history = try replica.history(of: synced[0].id, in: list.id)

        // Refused later: Milk checked with a quantity, Bread removed, Chocolate added, a new title.
        fixture.clock.advance(by: 10)
        _ = try replica.check(synced.first { $0.name == "Milk" }!.id, in: list.id)
        _ = try replica.set(.quantity, to: "2 l", of: synced.first { $0.name == "Milk" }!.id, in: list.id)
        _ = try replica.remove(synced.first { $0.name == "Bread" }!.id, in: list.id)
        try replica.add(["Chocolate"], to: list.id)
        try replica.renameList(list.id, to: "Mine")
        #expect(try replica.pendingCount(in: list.id) == 7)

        let dropped = try replica.discardPending(in: list.id)
        #expect(dropped.count == 7)
        #expect(try replica.pendingCount() == 0)
        #expect(try replica.items(in: list.id, filter: .all) == synced)
        #expect(try replica.history(of: synced[0].id, in: list.id) == history)
        #expect(try replica.lists().map(\.title) == ["Family"])
        // The item that existed only through refused writes is gone, history and all.
        #expect(try replica.items(in: list.id, filter: .all).allSatisfy { $0.name != "Chocolate" })
        #expect(try replica.discardPending(in: list.id).isEmpty)
    }

    @Test func removingAListTakesEverythingOfItAndNothingElse() throws {
        let replica = try fixture.open()
        let family = try replica.createList(title: "Family")
        let work = try replica.createList(title: "Work")
        try replica.add(["Milk"], to: family.id)
        try replica.add(["Pens"], to: work.id)
        try replica.saveSyncState(SyncState(list: family.id, isRegistered: true, role: .owner))
        try replica.removeList(family.id)
        #expect(try replica.lists().map(\.title) == ["Work"])
        #expect(try replica.pendingCount(in: family.id) == 0)
        #expect(try replica.syncStates().isEmpty)
        #expect(try replica.items(in: work.id).map(\.name) == ["Pens"])
        #expect(throws: ReplicaError.noSuchList(family.id.description)) { try replica.removeList(family.id) }
    }
}
