import BasketCore
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@testable import BasketServer

@Suite(.serialized)
struct ServiceLifecycleTests {
    @Test func tokensExpireWhenIdleAndWhenOld() async throws {
        let harness = try Harness {
            $0.tokenIdleSeconds = 3_600 * 10
            $0.tokenLifetimeSeconds = 3_600 * 30
        }
        let token = try await harness.signUp("alice")
        // Used every 9 hours: never idle for 10, so it lives until its 30 hours are up.
        for _ in 0..<3 {
            harness.clock.advance(by: 9 * 3_600_000)
            #expect(try await harness.call("GET", "/v1/account", token: token).status == 200)
        }
        harness.clock.advance(by: 3 * 3_600_000 + 1)
        let old = try await harness.call("GET", "/v1/account", token: token)
        #expect(old.status == 401 && old.error == "token_expired")
        // An idle one: 10 hours without use.
        let idle = try await harness.call(
            "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password", "device": "tablet"])
        let idleToken = try #require(idle.json["token"] as? String)
        harness.clock.advance(by: 10 * 3_600_000 + 1)
        let expired = try await harness.call("GET", "/v1/lists", token: idleToken)
        #expect(expired.status == 401 && expired.error == "token_expired")
        // Gone from the devices list too.
        let fresh = try await harness.call("POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        let devices = try await harness.call("GET", "/v1/tokens", token: fresh.json["token"] as? String)
        #expect((devices.json["tokens"] as? [[String: Any]])?.count == 1)
    }

    @Test func devicesAreListedAndSignedOutOneByOneOrAllAtOnce() async throws {
        let harness = try Harness()
        let phone = try await harness.signUp("alice")
        func login(_ device: String) async throws -> (token: String, id: String) {
            harness.clock.advance(by: 1_000)
            let answer = try await harness.call(
                "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password", "device": device])
            return (answer.json["token"] as! String, answer.json["id"] as! String)
        }
        let laptop = try await login("laptop")
        let tablet = try await login("tablet")
        let bob = try await harness.signUp("bob")
        let listed = try await harness.call("GET", "/v1/tokens", token: laptop.token)
        let rows = try #require(listed.json["tokens"] as? [[String: Any]])
        #expect(rows.map { $0["device"] as? String } == ["unnamed device", "laptop", "tablet"])
        #expect(rows.map { $0["current"] as? Bool } == [false, true, false])
        #expect(!String(decoding: listed.body, as: UTF8.self).contains(phone))  // never a token
        // Every token is in use (so in the server's session cache) before it is revoked.
        for token in [phone, tablet.token, laptop.token, bob] {
            #expect(try await harness.call("GET", "/v1/account", token: token).status == 200)
        }
        // Bob cannot sign out Alice's tablet; Alice can, from her laptop.
        #expect(try await harness.call("DELETE", "/v1/tokens/\(tablet.id)", token: bob).status == 404)
        #expect(try await harness.call("DELETE", "/v1/tokens/\(tablet.id)", token: laptop.token).status == 204)
        #expect(try await harness.call("GET", "/v1/account", token: tablet.token).status == 401)
        #expect(try await harness.call("GET", "/v1/account", token: phone).status == 200)
        // Sign out everywhere: every token of the account, this one included; Bob's stays.
        let everywhere = try await harness.call("DELETE", "/v1/tokens", token: laptop.token)
        #expect(everywhere.status == 200 && everywhere.json["revoked"] as? Int == 2)
        #expect(try await harness.call("GET", "/v1/account", token: phone).status == 401)
        #expect(try await harness.call("GET", "/v1/account", token: laptop.token).status == 401)
        #expect(try await harness.call("GET", "/v1/account", token: bob).status == 200)
    }

    @Test func aNewPasswordSignsOutEveryOtherDevice() async throws {
        let harness = try Harness()
        let phone = try await harness.signUp("alice")
        let laptop = try await harness.call(
            "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        let laptopToken = try #require(laptop.json["token"] as? String)
        #expect(try await harness.call("GET", "/v1/account", token: laptopToken).status == 200)  // cached now
        let wrong = try await harness.call(
            "POST", "/v1/account/password", token: phone,
            json: ["password": "not-it-at-all", "newPassword": "new-secret-1"])
        #expect(wrong.status == 401 && wrong.error == "invalid_credentials")
        let weak = try await harness.call(
            "POST", "/v1/account/password", token: phone, json: ["password": "alice-password", "newPassword": "short"])
        #expect(weak.status == 400 && weak.error == "weak_password")
        let changed = try await harness.call(
            "POST", "/v1/account/password", token: phone,
            json: ["password": "alice-password", "newPassword": "new-secret-1"])
        #expect(changed.status == 200 && changed.json["revoked"] as? Int == 1)
        #expect(try await harness.call("GET", "/v1/account", token: phone).status == 200)
        #expect(try await harness.call("GET", "/v1/account", token: laptopToken).status == 401)
        // The device that changed it checks the new password, not a cached copy of the old one.
        let again = try await harness.call(
            "POST", "/v1/account/password", token: phone,
            json: ["password": "alice-password", "newPassword": "new-secret-2"])
        #expect(again.status == 401 && again.error == "invalid_credentials")
        let old = try await harness.call("POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        #expect(old.status == 401)
        let new = try await harness.call("POST", "/v1/tokens", json: ["name": "alice", "password": "new-secret-1"])
        #expect(new.status == 201)
    }

    @Test func invitesAreSingleUseListedWithdrawnAndNeverInAURL() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("owner")
        let editor = try await harness.signUp("editor")
        let carol = try await harness.signUp("carol")
        let dave = try await harness.signUp("dave")
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: editor, role: "editor")
        func invite(_ token: String, _ body: [String: Any] = [:]) async throws -> Harness.Answer {
            try await harness.call("POST", "/v1/lists/\(list)/invites", token: token, json: body)
        }
        func redeem(_ code: String, _ token: String) async throws -> Int {
            try await harness.call("POST", "/v1/invites", token: token, json: ["code": code]).status
        }
        // Single use by default: the second person is refused.
        let single = try await invite(owner)
        let code = try #require(single.json["code"] as? String)
        #expect(single.json["usesLeft"] as? Int == 1)
        #expect(try await redeem(code.lowercased().replacingOccurrences(of: "-", with: " "), carol) == 200)  // as typed
        #expect(try await redeem(code, dave) == 404)
        // The old route with the code in the URL is gone.
        #expect(try await harness.call("POST", "/v1/invites/\(code)", token: dave).status == 404)
        // Several uses, an expiry, bounds.
        let three = try await invite(owner, ["uses": 3, "expiresIn": 120, "role": "viewer"])
        #expect(three.status == 201 && three.json["usesLeft"] as? Int == 3)
        for bad: [String: Any] in [
            ["uses": 0], ["uses": 101], ["expiresIn": 30], ["expiresIn": 40 * 86_400], ["uses": "2"],
        ] {
            let refused = try await invite(owner, bad)
            #expect(refused.status == 400 && refused.error == "invalid_parameter", "\(bad)")
        }
        // Listed: the owner sees both makers' invites, an editor its own (the viewer's 403 is in the matrix).
        let byEditor = try await invite(editor, ["role": "viewer"])
        let all = try await harness.call("GET", "/v1/lists/\(list)/invites", token: owner)
        #expect((all.json["invites"] as? [[String: Any]])?.count == 2)
        #expect(!String(decoding: all.body, as: UTF8.self).contains(three.json["code"] as! String))
        let own = try await harness.call("GET", "/v1/lists/\(list)/invites", token: editor)
        #expect((own.json["invites"] as? [[String: Any]])?.map { $0["createdBy"] as? String } == ["editor"])
        let carols = try await harness.call("GET", "/v1/lists/\(list)/invites", token: carol)  // an editor, no invites
        #expect(carols.status == 200 && (carols.json["invites"] as? [Any])?.isEmpty == true)
        // Withdrawn by the owner: the code stops working.
        let threeID = try #require(three.json["id"] as? String)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/invites/\(threeID)", token: editor).status == 404)
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/invites/\(threeID)", token: owner).status == 204)
        #expect(try await redeem(three.json["code"] as! String, dave) == 404)
        // Expired: 120 s later.
        let brief = try await invite(owner, ["expiresIn": 120])
        harness.clock.advance(by: 121_000)
        #expect(try await redeem(brief.json["code"] as! String, dave) == 404)
        // The editor's invite goes when the editor is removed.
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/editor", token: owner).status == 204)
        #expect(try await redeem(byEditor.json["code"] as! String, dave) == 404)
    }

    /// A removed member's parked long-poll is answered at once, and the code it joined with does
    /// not bring it back, even with uses left.
    /// A device signed out (its token revoked) has its parked long-poll answered 401 at once;
    /// the same account's other device keeps waiting, and gets the next push.
    @Test func aRevokedTokensLongPollIsAnsweredAtOnce() async throws {
        let harness = try Harness()
        let phone = try await harness.signUp("alice")
        let laptop = try #require(
            try await harness.call("POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
                .json["token"] as? String)
        let list = try await harness.newList(phone)
        async let phonePoll = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=25", token: phone)
        async let laptopPoll = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=25", token: laptop)
        for _ in 0..<500 where harness.service.watcherCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 2)
        let started = Date()
        #expect(try await harness.call("DELETE", "/v1/tokens/current", token: phone).status == 204)
        let signedOut = try await phonePoll
        #expect(signedOut.status == 401 && Date().timeIntervalSince(started) < 5)
        #expect(harness.service.watcherCount == 1)
        #expect(
            try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: laptop).status == 200)
        let news = try await laptopPoll
        #expect(news.status == 200 && news.json["count"] as? Int == 1)
    }

    /// A signed-in account may ask what a code is for before joining: the list, its title as the
    /// inviter's device gave it, the role and who made it. Unknown codes answer 404 and count
    /// against the address, so asking is no way to guess codes.
    @Test func anInviteIsPreviewedBeforeJoining() async throws {
        let harness = try Harness { $0.failedLoginsPerAddress = 5 }
        let owner = try await harness.signUp("owner")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(owner)
        let made = try await harness.call(
            "POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": "viewer", "title": "  Family  shop "])
        let code = try #require(made.json["code"] as? String)
        let preview = try await harness.call("POST", "/v1/invites/preview", token: bob, json: ["code": code])
        #expect(preview.status == 200)
        #expect(
            preview.json["list"] as? String == list.description && preview.json["title"] as? String == "Family shop")
        #expect(preview.json["role"] as? String == "viewer" && preview.json["createdBy"] as? String == "owner")
        #expect(preview.json["member"] as? Bool == false)
        // Previewing uses nothing: Bob joins with the code after.
        #expect(try await harness.call("POST", "/v1/invites", token: bob, json: ["code": code]).status == 200)
        let again = try await harness.call("POST", "/v1/invites/preview", token: owner, json: ["code": code])
        #expect(again.status == 404)  // single use: gone
        let bad = try await harness.call(
            "POST", "/v1/lists/\(list)/invites", token: owner, json: ["title": "Fam\u{202E}ily"])
        #expect(bad.status == 400 && bad.error == "control_character")
        let blank = try await harness.call("POST", "/v1/lists/\(list)/invites", token: owner, json: ["title": "   "])
        #expect(blank.status == 400 && blank.error == "invalid_title")
        // Guessing: unknown codes count with the address's signups (two here) and failures; past five, 429.
        var statuses: [Int] = []
        for guess in 0..<7 {
            statuses.append(
                try await harness.call(
                    "POST", "/v1/invites/preview", token: bob, json: ["code": "AAAA-BBBB-CCCC-000\(guess)"]
                ).status)
        }
        #expect(statuses.first == 404 && statuses.last == 429, "\(statuses)")
    }

    @Test func aRemovedMemberIsDismissedAndCannotRejoinWithItsCode() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("owner")
        let bob = try await harness.signUp("bob")
        let carol = try await harness.signUp("carol")
        let list = try await harness.newList(owner)
        let invite = try await harness.call(
            "POST", "/v1/lists/\(list)/invites", token: owner, json: ["uses": 5])
        let code = try #require(invite.json["code"] as? String)
        #expect(try await harness.call("POST", "/v1/invites", token: bob, json: ["code": code]).status == 200)
        async let parked = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=25", token: bob)
        for _ in 0..<500 where harness.service.watcherCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 1)
        let started = Date()
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/bob", token: owner).status == 204)
        let answer = try await parked
        #expect(answer.status == 404 && Date().timeIntervalSince(started) < 5)
        #expect(harness.service.watcherCount == 0)
        let again = try await harness.call("POST", "/v1/invites", token: bob, json: ["code": code])
        #expect(again.status == 404)
        #expect(try await harness.call("GET", "/v1/lists/\(list)/ops", token: bob).status == 404)
        // Withdrawn with the removal (it would let Bob back in as a new account): Carol needs a new one.
        #expect(try await harness.call("POST", "/v1/invites", token: carol, json: ["code": code]).status == 404)
    }

    @Test func signupCanBeByInviteOnlyAndQuotasHold() async throws {
        let harness = try Harness {
            $0.signup = .inviteOnly
            $0.maxListsPerAccount = 2
            $0.maxMembersPerList = 2
        }
        let none = try await harness.call("POST", "/v1/accounts", json: ["name": "mallory", "password": "long-enough"])
        #expect(none.status == 403 && none.error == "invite_required")
        let wrong = try await harness.call(
            "POST", "/v1/accounts", json: ["name": "mallory", "password": "long-enough", "invite": "AAAA-BBBB"])
        #expect(wrong.status == 403 && wrong.error == "invalid_invite")
        let code = "ABCD-EFGH-JKMN-PQRS"
        try harness.store.saveSignupInvite(
            hash: Passwords.codeHash(code), createdAt: 0, expiresAt: Int64(harness.clock.milliseconds) + 60_000, uses: 3
        )
        for name in ["alice", "bob", "carol"] {
            let made = try await harness.call(
                "POST", "/v1/accounts", json: ["name": name, "password": "\(name)-password", "invite": code])
            #expect(made.status == 201, "\(name)")
        }
        let used = try await harness.call(
            "POST", "/v1/accounts", json: ["name": "dave", "password": "dave-password", "invite": code])
        #expect(used.status == 403 && used.error == "invalid_invite")
        func login(_ name: String) async throws -> String {
            try await harness.call("POST", "/v1/tokens", json: ["name": name, "password": "\(name)-password"])
                .json["token"] as! String
        }
        let alice = try await login("alice")
        let bob = try await login("bob")
        let carol = try await login("carol")
        let first = try await harness.newList(alice)
        _ = try await harness.newList(alice)
        let third = try await harness.call("POST", "/v1/lists", token: alice, json: ["id": ListID.random().description])
        #expect(third.status == 403 && third.error == "too_many_lists")
        let invite = try await harness.call("POST", "/v1/lists/\(first)/invites", token: alice, json: ["uses": 5])
        let listCode = invite.json["code"] as! String
        #expect(try await harness.call("POST", "/v1/invites", token: bob, json: ["code": listCode]).status == 200)
        let full = try await harness.call("POST", "/v1/invites", token: carol, json: ["code": listCode])
        #expect(full.status == 403 && full.error == "too_many_members")
    }
}
