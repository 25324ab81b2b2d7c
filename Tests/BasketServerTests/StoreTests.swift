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

}
