import BasketCore
import Foundation
import Postgres
import SQLite
import Synchronization
import TestServers
import TestSupport
import Testing

@testable import BasketServer

/// The `Store` contract, run unchanged on every backend this run has (SQLite always, PostgreSQL
/// when BASKET_TEST_POSTGRES is set): accounts, lists, members, invites, the log's numbering and
/// idempotence under concurrent writers (one handle per "server instance"), compaction,
/// migrations at concurrent start, and moving a store between backends.
struct StoreTests {
    static let backends = Backend.available
    static let inviteLimits = InviteLimits(perList: 100, perMember: 20)

    /// `account` joins `list` as an editor with a single-use invite `owner` made.
    static func join(_ account: Int64, to list: ListID, invitedBy owner: Int64, in store: any Store) throws {
        try store.saveInvite(
            hash: "h", id: "i", list: list, role: .editor, createdBy: owner, createdAt: 1, expiresAt: 1_000, uses: 1,
            limits: inviteLimits, title: nil)
        _ = try store.redeemInvite(hash: "h", account: account, now: 5, maxMembers: 50)
    }

    /// The cases above run on PostgreSQL only when a database is configured; without one this
    /// test reports the missing database as a skip (which Scripts/test.sh refuses) instead of
    /// the PostgreSQL cases silently not existing.
    @Test(.enabled(if: TestPostgres.url != nil, Comment(rawValue: TestPostgres.unavailable)))
    func theContractAlsoRunsOnPostgreSQL() {
        #expect(Self.backends == [.sqlite, .postgres])
    }

    static func op(
        _ list: ListID, _ name: String, field: Field = .name, value: Value? = nil, ms: UInt64 = 1_764_400_000_000,
        counter: UInt16 = 0, replica: UInt64 = 7
    ) -> Op {
        Op(
            list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: field,
            value: value ?? .text(name),
            version: Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: counter), replica: ReplicaID(rawValue: replica)))
    }

    static func decoded(_ page: LogPage) throws -> [Op] { try OperationCodec.decode(page.encoded) }

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
        try store.saveToken(hash: "t1", id: "id1", account: alice.id, device: "phone", createdAt: 1)
        try store.saveToken(hash: "t2", id: "id2", account: bob.id, device: "laptop", createdAt: 2)
        #expect(try store.account(forTokenHash: "t1") == alice)
        try store.revokeToken(hash: "t1")
        #expect(try store.account(forTokenHash: "t1") == nil)
        #expect(try store.account(forTokenHash: "t2") == bob)
        #expect(try store.statistics().accounts == 2)
    }

    /// Tokens have a public id, a device name, a creation and a last use; they are listed per
    /// account and revoked one by one, or all but one.
    @Test(arguments: backends) func tokensHaveALifecycle(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let alice = try store.createAccount(name: "alice", passwordHash: "a")
        let bob = try store.createAccount(name: "bob", passwordHash: "b")
        try store.saveToken(hash: "h1", id: "a1", account: alice.id, device: "phone", createdAt: 10)
        try store.saveToken(hash: "h2", id: "a2", account: alice.id, device: "laptop", createdAt: 20)
        try store.saveToken(hash: "h3", id: "a3", account: alice.id, device: "tablet", createdAt: 30)
        try store.saveToken(hash: "hb", id: "b1", account: bob.id, device: "bob's", createdAt: 40)
        let (account, info) = try #require(try store.session(forTokenHash: "h2"))
        #expect(account == alice && info == TokenRecord(id: "a2", device: "laptop", created: 20, lastUsed: 20))
        try store.touchToken(hash: "h2", at: 99)
        #expect(try store.session(forTokenHash: "h2")?.1.lastUsed == 99)
        #expect(try store.tokens(of: alice.id).map(\.device) == ["phone", "laptop", "tablet"])
        // Another account's id revokes nothing.
        #expect(try !store.revokeToken(id: "b1", of: alice.id))
        #expect(try store.revokeToken(id: "a1", of: alice.id))
        #expect(try store.session(forTokenHash: "h1") == nil)
        #expect(try store.revokeTokens(of: alice.id, keeping: "h3") == 1)
        #expect(try store.tokens(of: alice.id).map(\.id) == ["a3"])
        #expect(try store.revokeTokens(of: alice.id, keeping: nil) == 1)
        #expect(try store.tokens(of: alice.id).isEmpty)
        #expect(try store.session(forTokenHash: "hb")?.0 == bob)
    }

    /// Signup invites: used once per account made, only before they expire; a name taken uses none.
    @Test(arguments: backends) func signupInvitesAreUsedUp(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        try store.saveSignupInvite(hash: "s", createdAt: 0, expiresAt: 100, uses: 2)
        #expect(throws: StoreError.noSuchInvite) {
            try store.createAccount(name: "x", passwordHash: "p", signupInvite: "nope", now: 1)
        }
        _ = try store.createAccount(name: "a", passwordHash: "p", signupInvite: "s", now: 1)
        #expect(throws: StoreError.accountExists) {
            try store.createAccount(name: "a", passwordHash: "p", signupInvite: "s", now: 1)
        }
        _ = try store.createAccount(name: "b", passwordHash: "p", signupInvite: "s", now: 2)
        #expect(throws: StoreError.noSuchInvite) {
            try store.createAccount(name: "c", passwordHash: "p", signupInvite: "s", now: 3)
        }
        try store.saveSignupInvite(hash: "late", createdAt: 0, expiresAt: 100, uses: 5)
        #expect(throws: StoreError.noSuchInvite) {
            try store.createAccount(name: "d", passwordHash: "p", signupInvite: "late", now: 100)
        }
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
    /// push of a new operation with it is refused whole, a duplicate is not; operations stamped
    /// before the list's epoch began (a restore) may be relayed by any member. The list quota
    /// counts the lists an account made while they exist.
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
        // After a restore (new epochs), what was stamped before may come from anyone; later not.
        #expect(try store.renewEpochs() == 1)
        #expect(try push([Self.op(list, "Bread", ms: now - 1_000, replica: 1)], by: bob).accepted == 1)
        #expect(throws: StoreError.replicaTaken) {
            try push([Self.op(list, "Eggs", ms: HybridClock.wallClockMilliseconds() + 10_000, replica: 1)], by: bob)
        }
        #expect(
            try Self.decoded(store.page(of: list, after: 0, limit: 10)).map(\.value) == [
                .text("Milk"), .text("Tea"), .text("Salt"), .text("Bread"),
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
        #expect(applied == (backend == .postgres ? 3..<5 : 5..<7))
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
            sqlite: "PRAGMA user_version = 9", postgres: "UPDATE basket_schema SET version = 9")
        #expect(throws: StoreError.newerSchema(found: 9, supported: Self.latest(backend))) { _ = try storage.open() }
        #expect(try storage.schemaVersion() == 9)
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
    /// the identity index, its 6 keeps a row per push, as PostgreSQL's 4 does.
    static func latest(_ backend: Backend) -> Int { backend == .postgres ? 5 : 7 }

    /// What PostgreSQL's schema 5 and SQLite's 7 added (lists' makers and epoch starts, replica
    /// owners), taken away again.
    static let undoReplicaOwners = """
        DROP TABLE replicas; ALTER TABLE lists DROP COLUMN created_by; ALTER TABLE lists DROP COLUMN epoch_started;
        ALTER TABLE invites DROP COLUMN title;

        """

    /// The log taken back to a row per operation: PostgreSQL's schema 5 to 3 (``undoReplicaOwners``,
    /// ``undoPostgresSchema4``), SQLite's 7 to 5 (the records read here, into `ops` as schema 5 had
    /// it). The caller sets the version.
    static func undoPushes(_ storage: TestStore) throws {
        try storage.execute(sqlite: undoReplicaOwners, postgres: undoReplicaOwners)
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
                "accounts": 2, "tokens": 1, "lists": 1, "members": 2, "invites": 1, "invite_uses": 1,
                "signup_invites": 1, "replicas": 1, "ops": 503,
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
