import BasketCore
import Testing

@testable import BasketServer

/// The session cache alone: bounded, aged, and never resurrecting a session forgotten while the
/// store was being read.
struct SessionCacheTests {
    static func account(_ id: Int64) -> Account { Account(id: id, name: "a\(id)", passwordHash: "-") }
    static let token = TokenInfo(id: "t", device: "phone", created: 0, lastUsed: 0)

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
