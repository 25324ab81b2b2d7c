import BasketCore
import Foundation
import TestServers
import TestSupport
import Testing

@testable import BasketServer

/// The Web Push and shopping parts of the `Store` contract, on every backend: subscriptions end
/// with their token, with removal from a list and with the list; a list's slot is taken once per
/// interval whoever asks; a status lasts until done or expired and ends with membership.
extension StoreTests {
    static func subscription(_ id: String, account: Int64, token: String, lists: [ListID]) -> PushSubscriptionRecord {
        PushSubscriptionRecord(
            id: id, account: account, tokenHash: token, endpoint: "https://push.example.net/\(id)", p256dh: "p",
            auth: "a", kinds: .all, lists: lists, created: 10)
    }

    @Test(arguments: backends) func pushSubscriptionsEndWithTheirTokenMembershipOrList(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let anna = try store.createAccount(name: "anna", passwordHash: "x")
        let bob = try store.createAccount(name: "bob", passwordHash: "x")
        try store.saveToken(hash: "anna-phone", id: "t1", account: anna.id, device: "phone", createdAt: 1)
        try store.saveToken(hash: "bob-phone", id: "t2", account: bob.id, device: "phone", createdAt: 1)
        let family = ListID(raw: ID128(high: 1, low: 1))
        let other = ListID(raw: ID128(high: 2, low: 2))
        _ = try store.createList(family, owner: anna.id)
        _ = try store.createList(other, owner: anna.id)
        try Self.join(bob.id, to: family, invitedBy: anna.id, in: store)

        // Bob asks for both lists: he is a member of one.
        let bobs = try store.savePushSubscription(
            Self.subscription("b", account: bob.id, token: "bob-phone", lists: [family, other]), maxPerAccount: 20)
        #expect(bobs.lists == [family])
        _ = try store.savePushSubscription(
            Self.subscription("a", account: anna.id, token: "anna-phone", lists: [family, other]), maxPerAccount: 20)
        func targets(_ list: ListID) throws -> [String] {
            try store.pushTargets(of: list, tokensUsedSince: 0, madeSince: 0, limit: 10).map(\.id)
        }
        #expect(try targets(family) == ["a", "b"])
        #expect(try targets(other) == ["a"])
        // An expired token's subscription hears nothing (used before the cut-off).
        #expect(try store.pushTargets(of: family, tokensUsedSince: 2, madeSince: 0, limit: 10).isEmpty)

        // Removal from the list ends that list for Bob's subscription.
        _ = try store.removeMember(bob.id, from: family, withdrawingInvitesItUsed: false)
        #expect(try targets(family) == ["a"])
        #expect(try store.pushSubscriptions(of: bob.id).map(\.lists) == [[]])
        // Signing out ends Anna's.
        try store.revokeToken(hash: "anna-phone")
        #expect(try targets(family).isEmpty && store.pushSubscriptions(of: anna.id).isEmpty)
        // The same endpoint again replaces; an account keeps its newest few.
        try store.saveToken(hash: "anna-tablet", id: "t3", account: anna.id, device: "tablet", createdAt: 1)
        for index in 0..<4 {
            var again = Self.subscription("a\(index)", account: anna.id, token: "anna-tablet", lists: [family])
            again.created = 100 + Int64(index)
            if index == 3 { again.endpoint = "https://push.example.net/a2" }
            _ = try store.savePushSubscription(again, maxPerAccount: 2)
        }
        #expect(try store.pushSubscriptions(of: anna.id).map(\.id) == ["a1", "a3"])
        #expect(try store.deletePushSubscription(id: "a1", account: bob.id) == false)
        #expect(try store.deletePushSubscription(id: "a1", account: anna.id))
        try store.deletePushSubscription(endpoint: "https://push.example.net/a2")
        #expect(try store.pushSubscriptions(of: anna.id).isEmpty)
    }

    @Test(arguments: backends) func aListsPushSlotIsTakenOncePerInterval(_ backend: Backend) throws {
        let storage = try TestStore(backend)
        let first = try storage.open()
        let second = try storage.open()
        defer {
            first.close()
            second.close()
        }
        let anna = try first.createAccount(name: "anna", passwordHash: "x")
        let list = ListID(raw: ID128(high: 3, low: 3))
        _ = try first.createList(list, owner: anna.id)
        #expect(try first.claimPushSlot(list: list, now: 1_000, interval: 60_000) == nil)
        #expect(try second.claimPushSlot(list: list, now: 2_000, interval: 60_000) == 61_000)
        #expect(try first.claimPushSlot(list: list, now: 60_999, interval: 60_000) == 61_000)
        #expect(try second.claimPushSlot(list: list, now: 61_000, interval: 60_000) == nil)
        // The key pair: the first stored is the one every instance uses, until rotated.
        let key = StoredPushKey(privateKey: [1], publicKey: [2], created: 1)
        #expect(try first.pushKey(orSave: key) == key)
        #expect(try second.pushKey(orSave: StoredPushKey(privateKey: [3], publicKey: [4], created: 2)) == key)
        let fresh = StoredPushKey(privateKey: [5], publicKey: [6], created: 3)
        #expect(try second.rotatePushKey(fresh) == 0)
        #expect(try first.pushKey(orSave: key) == fresh)
    }

    @Test(arguments: backends) func aShoppingStatusLastsUntilDoneOrExpiredAndEndsWithMembership(_ backend: Backend)
        throws
    {
        let storage = try TestStore(backend)
        let store = try storage.open()
        defer { store.close() }
        let olga = try store.createAccount(name: "olga", passwordHash: "x")
        let anna = try store.createAccount(name: "anna", passwordHash: "x")
        let list = ListID(raw: ID128(high: 4, low: 4))
        _ = try store.createList(list, owner: olga.id)
        try Self.join(anna.id, to: list, invitedBy: olga.id, in: store)
        try store.startShopping(list: list, account: olga.id, shop: "Lidl", now: 1_000, until: 11_000)
        try store.startShopping(list: list, account: anna.id, shop: nil, now: 2_000, until: 12_000)
        #expect(try store.shopping(of: list, now: 5_000, endedSince: 0).map(\.who) == ["olga", "anna"])
        // Saying it again keeps the start, takes the new shop and end.
        try store.startShopping(list: list, account: olga.id, shop: "Rewe", now: 3_000, until: 13_000)
        let olgas = try #require(try store.shopping(of: list, now: 5_000, endedSince: 0).first)
        #expect(olgas.since == 1_000 && olgas.shop == "Rewe" && olgas.until == 13_000)
        #expect(try store.stopShopping(list: list, account: olga.id, now: 6_000, bought: 12))
        #expect(try store.stopShopping(list: list, account: olga.id, now: 6_500, bought: 3) == false)
        let statuses = try store.shopping(of: list, now: 7_000, endedSince: 0)
        let done = try #require(statuses.first { $0.who == "olga" })
        #expect(done.ended == 6_000 && done.bought == 12)
        // Expired, and done long ago: gone from the answer.
        #expect(try store.shopping(of: list, now: 12_500, endedSince: 6_500).isEmpty)
        _ = try store.removeMember(anna.id, from: list, withdrawingInvitesItUsed: false)
        #expect(try store.shopping(of: list, now: 5_000, endedSince: 0).map(\.who) == ["olga"])
    }
}
