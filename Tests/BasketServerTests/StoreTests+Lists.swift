import BasketCore
import Foundation
import Postgres
import SQLite
import Synchronization
import TestServers
import TestSupport
import Testing

@testable import BasketServer

// The store contract: lists, members, invites, replica ids.
extension StoreTests {
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
        func invite(_ hash: String, _ role: Role, expires: Int64 = 1_000, uses: Int = 1, by: Int64 = alice) throws {
            try store.saveInvite(
                hash: hash, id: "id-\(hash)", list: list, role: role, createdBy: by, createdAt: 1, expiresAt: expires,
                uses: uses, limits: Self.inviteLimits, title: nil)
        }
        #expect(throws: StoreError.noSuchList) {
            try store.saveInvite(
                hash: "x", id: "x", list: .random(), role: .editor, createdBy: alice, createdAt: 1, expiresAt: 10,
                uses: 1, limits: Self.inviteLimits, title: nil)
        }

        try invite("edit", .editor)
        try invite("view", .viewer, uses: 3)
        try invite("old", .owner, expires: 100)
        func redeem(_ hash: String, _ account: Int64, max: Int = 50) throws -> MembershipRecord {
            try store.redeemInvite(hash: hash, account: account, now: 500, maxMembers: max)
        }
        #expect(try store.invites(of: list, now: 500).map(\.id) == ["id-edit", "id-view"])
        #expect(throws: StoreError.noSuchInvite) { try redeem("old", bob) }
        #expect(throws: StoreError.noSuchInvite) { try redeem("nope", bob) }
        let joined = try redeem("edit", bob)
        #expect(joined.list == list && joined.role == .editor && joined.epoch == created.epoch)
        // Single use: gone once used.
        #expect(try store.invites(of: list, now: 500).map(\.id) == ["id-view"])
        #expect(throws: StoreError.noSuchInvite) { try redeem("edit", carol) }
        // A member's role is never changed by an invite, and a member uses none: the same code
        // again is harmless for a member who used it (another of its devices).
        #expect(try redeem("view", bob).role == .editor)
        #expect(try redeem("view", bob).role == .editor)
        #expect(try store.invites(of: list, now: 500).first?.usesLeft == 3)
        // The list is full at two members for carol: refused, and the invite keeps its use.
        #expect(throws: StoreError.tooManyMembers) { try redeem("view", carol, max: 2) }
        #expect(try redeem("view", carol).role == .viewer)
        #expect(
            try store.members(of: list).map { "\($0.account):\($0.role)" } == [
                "alice:owner", "bob:editor", "carol:viewer",
            ])
        // Invites are listed with their maker, withdrawn by id, and go with a maker who is removed.
        try invite("by-bob", .editor, uses: 5, by: bob)
        let listed = try store.invites(of: list, now: 500)
        #expect(listed.map(\.createdBy) == ["bob", "alice"] && listed.map(\.usesLeft) == [5, 2])
        #expect(try store.revokeInvite(id: "id-view", of: list)?.role == .viewer)
        #expect(try store.revokeInvite(id: "id-view", of: list) == nil)
        let dan = try store.createAccount(name: "dan", passwordHash: "d").id
        #expect(throws: StoreError.noSuchInvite) { try redeem("view", dan) }
        try store.removeMember(bob, from: list)
        #expect(try store.invites(of: list, now: 500).isEmpty)
        // A removed member cannot come back with a code it used.
        try invite("again", .editor, uses: 5)
        _ = try redeem("again", bob)
        try store.removeMember(bob, from: list)
        #expect(throws: StoreError.noSuchInvite) { try redeem("again", bob) }
        #expect(try redeem("again", dan).role == .editor)
        try store.removeMember(dan, from: list)
        try invite("bob-back", .editor)
        _ = try redeem("bob-back", bob)
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

    @Test(arguments: backends) func rolesChangeAndListsAreDeleted(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        let carol = try store.createAccount(name: "carol", passwordHash: "c").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        try store.saveInvite(
            hash: "h", id: "i", list: list, role: .editor, createdBy: alice, createdAt: 1, expiresAt: 1_000, uses: 2,
            limits: Self.inviteLimits, title: nil)
        _ = try store.redeemInvite(hash: "h", account: bob, now: 5, maxMembers: 50)
        try store.saveInvite(
            hash: "b", id: "by-bob", list: list, role: .editor, createdBy: bob, createdAt: 1, expiresAt: 1_000, uses: 1,
            limits: Self.inviteLimits, title: nil)

        // The only owner cannot step down; with a second owner either may.
        #expect(throws: StoreError.lastOwner) { try store.setRole(.editor, of: alice, in: list) }
        #expect(throws: StoreError.noSuchMember) { try store.setRole(.viewer, of: carol, in: list) }
        #expect(throws: StoreError.noSuchList) { try store.setRole(.viewer, of: bob, in: .random()) }
        try store.setRole(.owner, of: bob, in: list)
        try store.setRole(.editor, of: alice, in: list)
        #expect(try store.members(of: list).map { "\($0.account):\($0.role)" } == ["alice:editor", "bob:owner"])
        // A member made a viewer may no longer invite: its invites go.
        try store.setRole(.viewer, of: alice, in: list)
        #expect(try store.invites(of: list, now: 5).map(\.id) == ["by-bob"])
        #expect(throws: StoreError.lastOwner) { try store.setRole(.viewer, of: bob, in: list) }

        // Deleting takes the log, the members and the invites; another list is untouched.
        let other = ListID.random()
        _ = try store.createList(other, owner: bob)
        _ = try store.append([Self.op(list, "Milk"), Self.op(list, "Tea", counter: 1)], to: list, receivedAt: 10)
        _ = try store.append([Self.op(other, "Jam")], to: other, receivedAt: 10)
        // A page for a member is read with the membership check; anyone else finds no such list.
        #expect(try store.page(of: list, after: 0, limit: 10, maxBytes: 1 << 20, member: alice).count == 2)
        #expect(try store.page(of: list, after: 1, limit: 10, maxBytes: 1 << 20, member: bob).count == 1)
        #expect(throws: StoreError.noSuchList) {
            try store.page(of: list, after: 0, limit: 10, maxBytes: 1 << 20, member: carol)
        }
        #expect(throws: StoreError.noSuchList) {
            try store.page(of: .random(), after: 0, limit: 10, maxBytes: 1 << 20, member: alice)
        }
        #expect(try store.deleteList(list))
        #expect(try !store.deleteList(list))
        #expect(try store.role(of: bob, in: list) == nil)
        #expect(try store.memberships(of: alice).isEmpty)
        #expect(try store.memberships(of: bob).map(\.list) == [other])
        #expect(try store.statistics().operations == 1)
        #expect(throws: StoreError.noSuchList) { try store.head(of: list) }
        // The id is free again: a client may register it anew (say, a member's copy pushed again).
        #expect(try store.createList(list, owner: carol).cursor == 0)
    }

    /// Roles change only through ``Store/setRole(_:of:in:)``: an owner demoted to editor keeps
    /// no owner invite and cannot take the list back with one it made before; an invite is stored
    /// only while its maker may make it, and working invites are capped per list and per member.
    @Test(arguments: backends) func invitesNeverChangeARoleAndFollowTheirMaker(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let mallory = try store.createAccount(name: "mallory", passwordHash: "m").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        func invite(
            _ hash: String, _ role: Role, by: Int64, at now: Int64 = 1, limits: InviteLimits = Self.inviteLimits
        )
            throws
        {
            try store.saveInvite(
                hash: hash, id: "id-\(hash)", list: list, role: role, createdBy: by, createdAt: now,
                expiresAt: now + 1_000, uses: 5, limits: limits, title: nil)
        }
        try invite("join", .owner, by: alice)
        #expect(try store.redeemInvite(hash: "join", account: mallory, now: 2, maxMembers: 50).role == .owner)
        // Mallory, an owner, makes owner and editor invites for later, then is made an editor.
        try invite("m-owner", .owner, by: mallory)
        try invite("m-editor", .editor, by: mallory)
        try store.setRole(.editor, of: mallory, in: list)
        #expect(try store.invites(of: list, now: 2).map(\.id).sorted() == ["id-join", "id-m-editor"])
        // The owner invite is gone; the one Alice made does not raise a member either.
        #expect(throws: StoreError.noSuchInvite) {
            try store.redeemInvite(hash: "m-owner", account: mallory, now: 3, maxMembers: 50)
        }
        #expect(try store.redeemInvite(hash: "join", account: mallory, now: 3, maxMembers: 50).role == .editor)
        #expect(try store.role(of: mallory, in: list) == .editor)
        #expect(try store.invites(of: list, now: 3).first { $0.id == "id-join" }?.usesLeft == 4)
        // An editor cannot store an owner invite; a viewer none; a non-member none.
        #expect(throws: StoreError.noSuchMember) { try invite("x1", .owner, by: mallory) }
        try store.setRole(.viewer, of: mallory, in: list)
        #expect(try store.invites(of: list, now: 3).map(\.id) == ["id-join"])
        #expect(throws: StoreError.noSuchMember) { try invite("x2", .viewer, by: mallory) }
        try store.removeMember(mallory, from: list)
        #expect(throws: StoreError.noSuchMember) { try invite("x3", .viewer, by: mallory) }
        #expect(throws: StoreError.noSuchList) {
            try store.saveInvite(
                hash: "x4", id: "x4", list: .random(), role: .viewer, createdBy: alice, createdAt: 1, expiresAt: 9,
                uses: 1, limits: Self.inviteLimits, title: nil)
        }
        // Caps: per member, then per list; expired invites count against neither.
        let tight = InviteLimits(perList: 3, perMember: 2)
        try invite("a2", .editor, by: alice, limits: tight)
        #expect(throws: StoreError.tooManyInvites) { try invite("a3", .editor, by: alice, limits: tight) }
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        try invite("bob", .editor, by: alice, limits: InviteLimits(perList: 100, perMember: 100))
        _ = try store.redeemInvite(hash: "bob", account: bob, now: 4, maxMembers: 50)
        #expect(throws: StoreError.tooManyInvites) { try invite("b1", .viewer, by: bob, limits: tight) }
        try invite("b1", .viewer, by: bob, at: 5_000, limits: tight)  // every earlier one has expired
        #expect(try store.invites(of: list, now: 5_000).map(\.id) == ["id-b1"])
    }

    /// A replica id belongs to the first account that pushes it to a list; another account's
    /// push of a new operation with it is refused whole, a duplicate is not, also for operations
    /// stamped before the list's epoch began (a restore): nobody writes under another's id by
    /// stamping in the past. The list quota counts the lists an account made while they exist.
    @Test(arguments: backends) func replicaIdsBelongToTheirFirstPusherAndMadeListsCount(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        try Self.join(bob, to: list, invitedBy: alice, in: store)
        func push(_ ops: [Op], by account: Int64) throws -> AppendResult {
            try store.append(ops, to: list, receivedAt: 1, limits: .none, pusher: account)
        }
        let now = HybridClock.wallClockMilliseconds()
        let milk = Self.op(list, "Milk", ms: now, replica: 1)
        #expect(try push([milk], by: alice).accepted == 1)
        #expect(throws: StoreError.replicaTaken) {
            try push(
                [Self.op(list, "Tea", ms: now + 1, replica: 2), Self.op(list, "Jam", ms: now + 1, replica: 1)], by: bob)
        }
        #expect(try push([milk, Self.op(list, "Tea", ms: now + 2, replica: 2)], by: bob).duplicates == 1)
        // Each member's replica ids, as a history names who wrote (ids with the top bit set too).
        let high = ReplicaID(rawValue: 0xFCDF_935E_EF1E_B5BE)
        #expect(try push([Self.op(list, "Salt", ms: now + 2, replica: high.rawValue)], by: bob).accepted == 1)
        #expect(
            try store.members(of: list).map { "\($0.account):\($0.replicas.map(\.description))" } == [
                "alice:[\"0000000000000001\"]", "bob:[\"0000000000000002\", \"fcdf935eef1eb5be\"]",
            ])
        #expect(throws: StoreError.replicaTaken) {
            try push([Self.op(list, "Cake", ms: now + 3, replica: 2)], by: alice)
        }
        // After a restore (new epochs): Alice's id stays hers, whatever the timestamp says. Under an
        // id the restored store does not know, a write stamped before the restore is relayed
        // without taking the id: its device takes it when it pushes again.
        #expect(try store.renewEpochs() == 1)
        #expect(throws: StoreError.replicaTaken) {
            try push([Self.op(list, "Bread", ms: now - 1_000, replica: 1)], by: bob)
        }
        #expect(try push([Self.op(list, "Bread", ms: now - 1_000, replica: 1)], by: alice).accepted == 1)
        #expect(try push([Self.op(list, "Eggs", ms: now - 1_000, replica: 9)], by: bob).accepted == 1)
        #expect(
            try push([Self.op(list, "Jam", ms: HybridClock.wallClockMilliseconds() + 1, replica: 9)], by: alice)
                .accepted == 1)
        #expect(throws: StoreError.replicaTaken) {
            try push([Self.op(list, "Ham", ms: now - 3_000, replica: 9)], by: bob)
        }
        #expect(
            try Self.decoded(store.page(of: list, after: 0, limit: 10)).map(\.value) == [
                .text("Milk"), .text("Tea"), .text("Salt"), .text("Bread"), .text("Eggs"), .text("Jam"),
            ])

        // Lists made count while they exist, left or not.
        #expect(try store.listCount(of: alice) == 1 && store.listCount(of: bob) == 1)
        let second = ListID.random()
        _ = try store.createList(second, owner: bob)
        try store.setRole(.owner, of: bob, in: list)
        try store.removeMember(alice, from: list)
        #expect(try store.listCount(of: alice) == 1)  // made it, left it: it still counts
        #expect(try store.listCount(of: bob) == 2)
        #expect(try store.deleteList(list))
        #expect(try store.listCount(of: alice) == 0 && store.listCount(of: bob) == 1)
    }

    /// What a pull and a membership check read is never older than the last write: the SQLite
    /// store answers them from memory, and must see each push, role change and removal at once.
    @Test(arguments: backends) func readsFollowEveryWriteAtOnce(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a").id
        let bob = try store.createAccount(name: "bob", passwordHash: "b").id
        let list = ListID.random()
        _ = try store.createList(list, owner: alice)
        try Self.join(bob, to: list, invitedBy: alice, in: store)
        func pull(_ account: Int64, after: Int64) throws -> LogPage {
            try store.page(of: list, after: after, limit: 100, maxBytes: 1 << 20, member: account)
        }
        for round in 1...3 {
            // Both ask (and so are known), then a push: the next empty-looking pull has it.
            #expect(try pull(bob, after: Int64(round - 1)).cursor == Int64(round - 1))
            #expect(try store.role(of: bob, in: list) == .editor)
            _ = try store.append([Self.op(list, "Item \(round)", counter: UInt16(round))], to: list, receivedAt: 10)
            let page = try pull(bob, after: Int64(round - 1))
            #expect(page.count == 1 && page.cursor == Int64(round))
            #expect(try pull(alice, after: Int64(round)).cursor == Int64(round))
            #expect(try store.memberships(of: bob).map(\.cursor) == [Int64(round)])
        }
        // A list made, and one deleted: each account's lists follow.
        let other = ListID.random()
        _ = try store.createList(other, owner: bob)
        #expect(try store.memberships(of: bob).map(\.list) == [list, other])
        #expect(try store.deleteList(other))
        #expect(try store.memberships(of: bob).map(\.list) == [list])
        try store.setRole(.viewer, of: bob, in: list)
        #expect(try store.role(of: bob, in: list) == .viewer)
        #expect(try store.memberships(of: bob).map(\.role) == [.viewer])
        try store.removeMember(bob, from: list)
        #expect(try store.role(of: bob, in: list) == nil)
        #expect(try store.memberships(of: bob).isEmpty)
        #expect(try store.memberships(of: alice).map(\.list) == [list])
        #expect(throws: StoreError.noSuchList) { try pull(bob, after: 3) }
        #expect(try store.deleteList(list))
        #expect(try store.role(of: alice, in: list) == nil)
        #expect(try store.memberships(of: alice).isEmpty)
        #expect(throws: StoreError.noSuchList) { try pull(alice, after: 3) }
        // The same id registered anew starts from nothing.
        _ = try store.createList(list, owner: bob)
        #expect(try pull(bob, after: 0).cursor == 0)
        #expect(throws: StoreError.noSuchList) { try pull(alice, after: 0) }
        #expect(try store.memberships(of: bob).map(\.cursor) == [0])
        #expect(try store.memberships(of: alice).isEmpty)
    }
}
