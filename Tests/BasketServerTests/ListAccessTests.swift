import BasketCore
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@testable import BasketServer

/// Tokens and invites with a lifecycle: expiry, devices, passwords, single use, withdrawal.
@Suite(.serialized)
struct ListAccessTests {
    /// Every list route × (no token, bad token, revoked token, other user, viewer, editor, owner).
    @Test func everyListRouteChecksTokensAndMembership() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("owner")
        let editor = try await harness.signUp("editor")
        let viewer = try await harness.signUp("viewer")
        let stranger = try await harness.signUp("stranger")
        let revoked = try await harness.signUp("revoked")
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: editor, role: "editor")
        try await harness.join(list, owner: owner, member: viewer, role: "viewer")
        try await harness.join(list, owner: owner, member: revoked, role: "editor")
        try #require(try await harness.call("DELETE", "/v1/tokens/current", token: revoked).status == 204)

        // Each caller pushes an item of its own: what is stored afterwards shows whose push went in.
        let encoded = { (name: String) in
            String(
                decoding: OperationCodec.encode(
                    harness.operations(list, names: [name], replica: Harness.replica(name))),
                as: UTF8.self)
        }
        struct Route {
            var method: String
            var path: String
            var body: (String) -> [String: Any]?
            /// Expected status for viewer, editor, owner.
            var member: [Int]
        }
        let routes = [
            Route(method: "GET", path: "/v1/lists/\(list)/ops", body: { _ in nil }, member: [200, 200, 200]),
            Route(
                method: "POST", path: "/v1/lists/\(list)/ops", body: { ["ops": encoded($0)] }, member: [403, 200, 200]),
            Route(method: "GET", path: "/v1/lists/\(list)/members", body: { _ in nil }, member: [200, 200, 200]),
            Route(
                method: "POST", path: "/v1/lists/\(list)/invites", body: { _ in ["role": "viewer"] },
                member: [403, 201, 201]),
        ]
        for route in routes {
            let noToken = try await harness.call(route.method, route.path, json: route.body("none"))
            #expect(noToken.status == 401 && noToken.error == "unauthorized", "\(route.method) \(route.path)")
            let badToken = try await harness.call(route.method, route.path, token: "nonsense", json: route.body("bad"))
            #expect(badToken.status == 401, "\(route.method) \(route.path)")
            let revokedToken = try await harness.call(
                route.method, route.path, token: revoked, json: route.body("revoked"))
            #expect(revokedToken.status == 401, "\(route.method) \(route.path)")
            let other = try await harness.call(route.method, route.path, token: stranger, json: route.body("stranger"))
            #expect(other.status == 404 && other.error == "not_found", "\(route.method) \(route.path)")
            for (index, (token, expected)) in zip([viewer, editor, owner], route.member).enumerated() {
                let name = ["viewer", "editor", "owner"][index]
                let answer = try await harness.call(route.method, route.path, token: token, json: route.body(name))
                #expect(
                    answer.status == expected,
                    "\(route.method) \(route.path): \(String(decoding: answer.body, as: UTF8.self))")
            }
        }
        // Only the editor's and the owner's pushes are stored: the viewer's left nothing.
        let stored = try OperationCodec.decode(harness.store.page(of: list, after: 0, limit: 100).encoded)
        #expect(Set(stored.compactMap(\.value.textValue)) == ["editor", "owner"])
        // Editors cannot invite owners.
        let escalate = try await harness.call(
            "POST", "/v1/lists/\(list)/invites", token: editor, json: ["role": "owner"])
        #expect(escalate.status == 403)
    }

    @Test func membersLeaveAndAreRemoved() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("owner")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: bob, role: "editor")
        let members = try await harness.call("GET", "/v1/lists/\(list)/members", token: bob)
        #expect((members.json["members"] as? [[String: Any]])?.count == 2)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/owner", token: bob).status == 403)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/owner", token: owner).status == 409)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/bob", token: bob).status == 204)
        #expect(try await harness.call("GET", "/v1/lists/\(list)/ops", token: bob).status == 404)
        let lists = try await harness.call("GET", "/v1/lists", token: bob)
        #expect((lists.json["lists"] as? [Any])?.isEmpty == true)
    }

    /// Archiving is an owner's write: an editor's push carrying `archived` is refused whole.
    @Test func onlyAnOwnersPushMayArchiveTheList() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("owner")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: bob, role: "editor")
        func archive(_ archived: Bool, replica: UInt64) -> Op {
            Op(
                list: list, item: .list, field: .archived, value: .bool(archived),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: harness.clock.milliseconds, counter: 0),
                    replica: ReplicaID(rawValue: replica)))
        }
        let items = harness.operations(list, names: ["Milk"])
        let refused = try await harness.push(items + [archive(true, replica: 9)], to: list, token: bob)
        #expect(refused.status == 403 && refused.error == "owner_only")
        #expect(try harness.store.statistics().operations == 0)
        #expect(try await harness.push(items, to: list, token: bob).status == 200)
        let archived = try await harness.push([archive(true, replica: 8)], to: list, token: owner)
        #expect(archived.status == 200 && archived.json["accepted"] as? Int == 1)
    }

    @Test func listsAreCreatedOnceAndInvitesExpire() async throws {
        let harness = try Harness { $0.inviteSeconds = 60 }
        let owner = try await harness.signUp("owner")
        let other = try await harness.signUp("other")
        let list = try await harness.newList(owner)
        #expect(try await harness.call("POST", "/v1/lists", token: owner, json: ["id": list.description]).status == 200)
        let taken = try await harness.call("POST", "/v1/lists", token: other, json: ["id": list.description])
        #expect(taken.status == 409 && taken.error == "list_exists")
        let badID = try await harness.call("POST", "/v1/lists", token: owner, json: ["id": "xyz"])
        #expect(badID.status == 400)
        let invite = try await harness.call("POST", "/v1/lists/\(list)/invites", token: owner, json: [:])
        let code = invite.json["code"] as! String
        harness.clock.advance(by: 61_000)
        #expect(try await harness.call("POST", "/v1/invites", token: other, json: ["code": code]).status == 404)
    }

    /// One account's bodies share one part of the body budget whatever addresses they come from
    /// (eight addresses of one free account filled the whole 256 MiB): past it that account's
    /// pushes are answered 503 busy, another account's are taken.
    @Test func oneAccountsBodiesHoldAtMostItsShareFromAnyAddress() async throws {
        let harness = try Harness { _ in
        } listen: {
            $0.maxBufferedBodyBytesPerShare = 100_000
            $0.bodyGraceSeconds = 300
        }
        let alice = try await harness.signUp("alice")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(alice)
        let slow = Loopback.connect(port: harness.http.port, from: "127.0.0.5")
        defer { close(slow) }
        let head =
            "POST /v1/lists/\(list)/ops HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(alice)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n"
        let held = Array(head.utf8) + Array(repeating: UInt8(ascii: " "), count: 90_000)
        #expect(send(slow, held, held.count, 0) == held.count)
        for _ in 0..<200 where harness.http.bufferedBodies < 90_000 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(harness.http.bufferedBodies == 90_000)
        let padding = [UInt8](repeating: UInt8(ascii: " "), count: 20_000)
        func push(_ token: String, from address: String) throws -> Int {
            try RawHTTP.request(
                port: harness.http.port, from: address, "POST", "/v1/lists/\(list)/ops",
                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                body: Array(#"{"ops":"basket-ops 1\n"}"#.utf8) + padding
            ).status
        }
        #expect(try push(alice, from: "127.0.0.6") == 503)
        // Bob is no member of the list: his push is read (404), not refused for the budget.
        #expect(try push(bob, from: "127.0.0.6") == 404)
    }

    /// Asking whether names are taken counts against the address like any signup: after the
    /// address's allowance, 429 instead of "taken" or "free" (3,000 checks a second answered
    /// before). Another address still signs up.
    @Test func probingWhichNamesAreTakenIsThrottledPerAddress() async throws {
        let harness = try Harness { $0.failedLoginsPerAddress = 5 }
        _ = try await harness.signUp("alice")
        var answers: [Int] = []
        for _ in 0..<8 {
            let probe = try RawHTTP.request(
                port: harness.http.port, from: "127.0.0.7", "POST", "/v1/accounts",
                json: ["name": "alice", "password": "some password"])
            answers.append(probe.status)
        }
        #expect(answers.prefix(4).allSatisfy { $0 == 409 }, "\(answers)")
        #expect(answers.suffix(3).allSatisfy { $0 == 429 }, "\(answers)")
        let other = try RawHTTP.request(
            port: harness.http.port, from: "127.0.0.8", "POST", "/v1/accounts",
            json: ["name": "carol", "password": "carol-password"])
        #expect(other.status == 201)
    }

    /// A member an owner removes cannot come back as a new account with the multi-use code it
    /// joined with: the code is withdrawn. One who leaves by itself leaves the code working for
    /// the others it was meant for.
    @Test func aRemovedMemberCannotRejoinAsANewAccountWithItsCode() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("olga")
        let list = try await harness.newList(owner)
        func invite() async throws -> String {
            let made = try await harness.call(
                "POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": "editor", "uses": 5])
            return try #require(made.json["code"] as? String)
        }
        func redeem(_ code: String, _ token: String) async throws -> Int {
            try await harness.call("POST", "/v1/invites", token: token, json: ["code": code]).status
        }
        let family = try await invite()
        let mallory = try await harness.signUp("mallory")
        #expect(try await redeem(family, mallory) == 200)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/mallory", token: owner).status == 204)
        let again = try await harness.signUp("mallory2")
        #expect(try await redeem(family, again) == 404)
        // Leaving by oneself: the code stays for the others.
        let other = try await invite()
        let bob = try await harness.signUp("bob")
        #expect(try await redeem(other, bob) == 200)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/bob", token: bob).status == 204)
        let carol = try await harness.signUp("carol")
        #expect(try await redeem(other, carol) == 200)
    }

    /// A server whose lists hold 10 items, and a list of olga's that `editor` joined as an editor:
    /// (harness, olga's token, the editor's token, the list).
    static func listOfTen(editor: String) async throws -> (Harness, String, String, ListID) {
        let harness = try Harness { $0.maxItemsPerList = 10 }
        let owner = try await harness.signUp("olga")
        let member = try await harness.signUp(editor)
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: member, role: "editor")
        return (harness, owner, member, list)
    }

    /// A member who is not an owner adds at most half of a list's items: past it, 403
    /// member_share_full, while its removals still go through and the owner keeps adding.
    @Test func aMemberWhoIsNotAnOwnerFillsAtMostHalfOfAList() async throws {
        let (harness, owner, mallory, list) = try await Self.listOfTen(editor: "mallory")
        let junk = (0..<6).map { "Junk \($0)" }
        let first = try await harness.push(
            harness.operations(list, names: Array(junk.prefix(5)), replica: 66), to: list, token: mallory)
        #expect(first.status == 200 && first.json["accepted"] as? Int == 5)
        let more = try await harness.push(
            harness.operations(list, names: [junk[5]], offset: 10, replica: 66), to: list, token: mallory)
        #expect(more.status == 403 && more.error == "member_share_full", "\(more.status) \(more.json)")
        // Her removals are taken (they add no item).
        let removal = harness.operations(list, names: [junk[0]], offset: 20, replica: 66).map {
            Op(list: $0.list, item: $0.item, field: .deleted, value: .bool(true), version: $0.version)
        }
        #expect(try await harness.push(removal, to: list, token: mallory).status == 200)
        // The owner fills the rest.
        let owners = try await harness.push(
            harness.operations(list, names: (0..<5).map { "Mine \($0)" }, offset: 30, replica: 67), to: list,
            token: owner)
        #expect(owners.status == 200 && owners.json["accepted"] as? Int == 5)
    }

    /// A member's share is what it holds, not what it ever added: once compaction drops the items
    /// it removed (past the retention), it may add as many again. An editor who adds the week's
    /// shopping and clears it for years never runs out.
    @Test func compactionGivesAMemberItsShareBack() async throws {
        let (harness, _, bob, list) = try await Self.listOfTen(editor: "bob")
        let week = harness.operations(list, names: (0..<5).map { "Week one \($0)" }, replica: 66)
        #expect(try await harness.push(week, to: list, token: bob).status == 200)
        let next = harness.operations(list, names: ["Week two 0"], offset: 10, replica: 66)
        #expect(try await harness.push(next, to: list, token: bob).error == "member_share_full")
        let cleared = harness.operations(list, names: (0..<5).map { "Week one \($0)" }, offset: 5, replica: 66).map {
            Op(list: $0.list, item: $0.item, field: .deleted, value: .bool(true), version: $0.version)
        }
        #expect(try await harness.push(cleared, to: list, token: bob).status == 200)
        harness.clock.advance(by: 10_000)
        _ = try harness.store.compact(receivedBefore: Int64(harness.clock.milliseconds))
        let again = harness.operations(list, names: (0..<5).map { "Week two \($0)" }, offset: 20, replica: 66)
        let answer = try await harness.push(again, to: list, token: bob)
        #expect(answer.status == 200 && answer.json["accepted"] as? Int == again.count, "\(answer.json)")
    }

    /// An account deletes itself with its password: the list it alone had is gone, the shared
    /// list it was the last owner of passes to an editor (before a viewer), the list it was an
    /// editor of keeps its owner; every token stops working, its parked long-poll is answered,
    /// the name can be taken again, and a wrong password deletes nothing.
    @Test func anAccountDeletesItselfAndItsListsGoAsTheDocsSay() async throws {
        let harness = try Harness()
        let alice = try await harness.signUp("alice")
        let bob = try await harness.signUp("bob")
        let carol = try await harness.signUp("carol")
        let own = try await harness.newList(alice)
        let shared = try await harness.newList(alice)
        try await harness.join(shared, owner: alice, member: carol, role: "viewer")
        try await harness.join(shared, owner: alice, member: bob, role: "editor")
        let bobs = try await harness.newList(bob)
        try await harness.join(bobs, owner: bob, member: alice, role: "editor")
        let wrong = try await harness.call(
            "DELETE", "/v1/account", token: alice, json: ["password": "not the password"])
        #expect(wrong.status == 401 && wrong.error == "invalid_credentials")
        #expect(try await harness.call("GET", "/v1/account", token: alice).status == 200)
        async let parked = harness.call("GET", "/v1/lists/\(own)/ops?after=0&wait=25", token: alice)
        for _ in 0..<500 where harness.service.watcherCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let deleted = try await harness.call(
            "DELETE", "/v1/account", token: alice, json: ["password": "alice-password"])
        #expect(deleted.status == 200, "\(deleted.json)")
        #expect(deleted.json["deleted"] as? Int == 1 && deleted.json["handedOver"] as? Int == 1)
        #expect(deleted.json["left"] as? Int == 1)
        #expect(try await parked.status == 404)
        #expect(try await harness.call("GET", "/v1/account", token: alice).status == 401)
        #expect(try await harness.call("GET", "/v1/lists/\(own)/ops?after=0", token: bob).status == 404)
        let members = try await harness.call("GET", "/v1/lists/\(shared)/members", token: bob)
        let roles = (members.json["members"] as? [[String: Any]] ?? []).map {
            "\($0["account"] as? String ?? ""):\($0["role"] as? String ?? "")"
        }
        #expect(roles.sorted() == ["bob:owner", "carol:viewer"], "\(roles)")
        let bobsMembers = try await harness.call("GET", "/v1/lists/\(bobs)/members", token: bob)
        #expect((bobsMembers.json["members"] as? [[String: Any]])?.count == 1)
        // The name is free again; the new account is someone else.
        _ = try await harness.signUp("alice")
    }
}
