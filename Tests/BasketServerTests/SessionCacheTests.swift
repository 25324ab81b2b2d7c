import BasketCore
import Testing

@testable import BasketServer

/// The session cache alone: bounded, aged, and never resurrecting a session forgotten while the
/// store was being read.
struct SessionCacheTests {
    static func account(_ id: Int64) -> AccountRecord { AccountRecord(id: id, name: "a\(id)", passwordHash: "-") }
    static let token = TokenRecord(id: "t", device: "phone", created: 0, lastUsed: 0)

    @Test func holdsAtMostItsCapacity() {
        let cache = SessionCache(capacity: 100, seconds: 60)
        for i in 0..<1_000 {
            let (_, generation) = cache.lookup("h\(i)", now: 0)
            cache.insert(
                "h\(i)", account: Self.account(Int64(i)), token: Self.token, ifUnchangedSince: generation, now: 0)
        }
        #expect(cache.count == 100)
        #expect(cache.lookup("h999", now: 1).hit?.account.id == 999)  // the newest is there
    }

    @Test func anEntryOlderThanItsAgeIsReadAgain() {
        let cache = SessionCache(capacity: 10, seconds: 30)
        cache.insert("h", account: Self.account(1), token: Self.token, ifUnchangedSince: 0, now: 1_000)
        #expect(cache.lookup("h", now: 30_999).hit != nil)
        #expect(cache.lookup("h", now: 31_000).hit == nil)
        #expect(cache.count == 0)
    }

    @Test func forgettingAnAccountDropsItsSessionsOnly() {
        let cache = SessionCache(capacity: 10, seconds: 30)
        cache.insert("a1", account: Self.account(1), token: Self.token, ifUnchangedSince: 0, now: 0)
        cache.insert("a2", account: Self.account(1), token: Self.token, ifUnchangedSince: 0, now: 0)
        cache.insert("b", account: Self.account(2), token: Self.token, ifUnchangedSince: 0, now: 0)
        cache.forget(account: 1)
        #expect(cache.lookup("a1", now: 1).hit == nil && cache.lookup("a2", now: 1).hit == nil)
        #expect(cache.lookup("b", now: 1).hit?.account.id == 2)
        cache.forgetAll()
        #expect(cache.count == 0)
    }

    @Test func aSessionReadBeforeARevocationIsNotCachedAfterIt() {
        let cache = SessionCache(capacity: 10, seconds: 30)
        let (miss, generation) = cache.lookup("h", now: 0)
        #expect(miss == nil)
        // The store was read (the token still there); meanwhile another request revoked it.
        cache.forget(account: 1)
        cache.insert("h", account: Self.account(1), token: Self.token, ifUnchangedSince: generation, now: 0)
        #expect(cache.lookup("h", now: 1).hit == nil)
    }

    @Test func aTouchUpdatesTheCachedLastUse() {
        let cache = SessionCache(capacity: 10, seconds: 30)
        cache.insert("h", account: Self.account(1), token: Self.token, ifUnchangedSince: 0, now: 0)
        cache.touched("h", at: 42)
        #expect(cache.lookup("h", now: 1).hit?.token.lastUsed == 42)
    }

    @Test func capacityZeroCachesNothing() {
        let cache = SessionCache(capacity: 0, seconds: 30)
        cache.insert("h", account: Self.account(1), token: Self.token, ifUnchangedSince: 0, now: 0)
        #expect(cache.count == 0)
    }
}

/// Token hashes come from libcrypto: the same digests as the client's SHA-256, in hex.
struct TokenHashTests {
    @Test func tokenHashesAreSHA256InHex() {
        #expect(Passwords.tokenHash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Passwords.tokenHash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        for text in ["token", "é🙂", String(repeating: "x", count: 1_000)] {
            #expect(Passwords.tokenHash(text) == Hex.encode(SHA256.hash(Array(text.utf8))))
        }
    }
}

/// Lists' heads in memory (SQLite): never older than the last write this process made.
struct ListHeadsTests {
    static let head = ListHead(no: 1, cursor: 10, epoch: "e", compactedThrough: 0)

    @Test func aPushAdvancesAKnownHeadAndAnOlderReadCannotReplaceIt() {
        let heads = ListHeads(capacity: 10, milliseconds: 60_000)
        let list = ListID.random()
        let (missed, generation) = heads.lookup(list, account: 7, now: 0)
        #expect(missed == nil)
        heads.insert(list, head: Self.head, account: 7, role: .editor, ifUnchangedSince: generation, now: 0)
        #expect(heads.lookup(list, account: 7, now: 1).found?.0.cursor == 10)
        #expect(heads.lookup(list, account: 8, now: 1).found == nil)  // another member: not known yet
        // A read of the store began (cursor 10), then a push committed 11…12.
        let (_, before) = heads.lookup(list, account: 8, now: 1)
        heads.advanced(list, to: 12)
        heads.insert(list, head: Self.head, account: 8, role: .viewer, ifUnchangedSince: before, now: 1)
        #expect(heads.lookup(list, account: 7, now: 2).found?.0.cursor == 12)
        #expect(heads.lookup(list, account: 8, now: 2).found == nil)
    }

    @Test func changedMembersAreReadAgainAndOldEntriesExpire() {
        let heads = ListHeads(capacity: 10, milliseconds: 2_000)
        let list = ListID.random()
        heads.insert(list, head: Self.head, account: 7, role: .owner, ifUnchangedSince: 0, now: 0)
        #expect(heads.lookup(list, account: 7, now: 1_999).found?.1 == .owner)
        #expect(heads.lookup(list, account: 7, now: 2_000).found == nil)
        heads.insert(list, head: Self.head, account: 7, role: .owner, ifUnchangedSince: 0, now: 3_000)
        heads.invalidate(list)
        #expect(heads.lookup(list, account: 7, now: 3_001).found == nil)
    }

    @Test func holdsAtMostItsCapacity() {
        let heads = ListHeads(capacity: 50, milliseconds: 60_000)
        for _ in 0..<500 {
            let list = ListID.random()
            heads.insert(list, head: Self.head, account: 1, role: .owner, ifUnchangedSince: 0, now: 0)
        }
        #expect(heads.count == 50)
    }
}
