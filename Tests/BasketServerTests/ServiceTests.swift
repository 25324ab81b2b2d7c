import BasketCore
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@testable import BasketServer

@Suite(.serialized)
struct AccountTests {
    /// Every answer carries the policy headers, errors included: none is a page that may run
    /// anything or be sniffed into another type.
    @Test func everyAnswerCarriesThePolicyHeaders() async throws {
        let harness = try Harness()
        let answers = [
            try await harness.call("GET", "/healthz"),
            try await harness.call("GET", "/no/such/route"),
            try await harness.call("POST", "/v1/accounts", raw: Array("{".utf8)),
            try await harness.call("GET", "/v1/lists"),
            try await harness.call("POST", "/v1/tokens", raw: Array(repeating: 0x20, count: 5_000)),
        ]
        #expect(answers.map(\.status) == [200, 404, 400, 401, 413])
        for answer in answers {
            #expect(answer.headers["x-content-type-options"] == "nosniff", "\(answer.status)")
            #expect(
                answer.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true, "\(answer.status)")
            #expect(answer.headers["x-frame-options"] == "DENY", "\(answer.status)")
        }
    }

    /// Sign-in and signup must state `application/json`: a page on another site can post a body
    /// with no Content-Type, or as text/plain, from its visitor's browser without a preflight
    /// (and lock the visitor's address out with wrong passwords); those are refused.
    @Test func signInsWithoutAJSONContentTypeAreRefused() async throws {
        let harness = try Harness()
        _ = try await harness.signUp("alice")
        let body = Array(#"{"name":"alice","password":"wrong-password"}"#.utf8)
        let bare = try RawHTTP.request(port: harness.http.port, "POST", "/v1/tokens", body: body)
        #expect(bare.status == 415 && bare.error == "unsupported_media_type")
        let plain = try RawHTTP.request(
            port: harness.http.port, "POST", "/v1/tokens", headers: ["Content-Type": "text/plain"], body: body)
        #expect(plain.status == 415)
        let signup = try RawHTTP.request(port: harness.http.port, "POST", "/v1/accounts", body: body)
        #expect(signup.status == 415)
        // None of them counted as a failed sign-in: the right password works at once.
        let right = try await harness.call("POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        #expect(right.status == 201)
    }

    @Test func badAccountRequestsAre400AndStoreNothing() async throws {
        let harness = try Harness()
        let cases: [(String, [UInt8], String)] = [
            ("not JSON", Array("{name".utf8), "invalid_json"),
            ("not an object", Array("[1]".utf8), "invalid_json"),
            ("invalid UTF-8", [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], "invalid_json"),
            ("unknown field", Array(#"{"name":"alice","password":"long-enough","admin":true}"#.utf8), "unknown_field"),
            ("wrong type", Array(#"{"name":42,"password":"long-enough"}"#.utf8), "wrong_type"),
            ("missing field", Array(#"{"name":"alice"}"#.utf8), "missing_field"),
            ("bad name", Array(#"{"name":"a b","password":"long-enough"}"#.utf8), "invalid_name"),
            (
                "name too long",
                Array("{\"name\":\"\(String(repeating: "a", count: 65))\",\"password\":\"long-enough\"}".utf8),
                "too_long"
            ),
            ("weak password", Array(#"{"name":"alice","password":"short"}"#.utf8), "weak_password"),
        ]
        for (label, body, code) in cases {
            let answer = try await harness.call("POST", "/v1/accounts", raw: body)
            #expect(answer.status == 400, "\(label)")
            #expect(answer.error == code, "\(label): \(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.json["message"] is String, "\(label)")
        }
        #expect(try harness.store.statistics().accounts == 0)
        #expect(try await harness.call("GET", "/healthz").status == 200)  // still serving
    }

    @Test func accountsTokensAndRevocation() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let again = try await harness.call(
            "POST", "/v1/accounts", json: ["name": "Alice", "password": "whatever-long"])
        #expect(again.status == 409 && again.error == "account_exists")
        let me = try await harness.call("GET", "/v1/account", token: token)
        #expect(me.status == 200 && me.json["name"] as? String == "alice")
        let wrong = try await harness.call(
            "POST", "/v1/tokens", json: ["name": "alice", "password": "not-the-password"])
        #expect(wrong.status == 401 && wrong.error == "invalid_credentials")
        #expect(try await harness.call("DELETE", "/v1/tokens/current", token: token).status == 204)
        let revoked = try await harness.call("GET", "/v1/account", token: token)
        #expect(revoked.status == 401 && revoked.headers["www-authenticate"] == "Bearer")
    }

    /// Failed sign-ins are limited per client address and per (name, address): the attacker's
    /// address is refused, the owner signs in from another one.
    @Test func failedLoginsAreLimitedPerAddressNotPerName() async throws {
        // Time stands still unless the test moves it: a slow machine cannot let a delay run out.
        let clock = Mutex<UInt64>(1_000_000)
        let harness = try Harness {
            $0.failedLoginsPerAddress = 5
            $0.trustForwardedFor = true
            $0.monotonicClock = { clock.withLock { $0 } }
        }
        _ = try await harness.signUp("alice")
        func login(_ password: String, from address: String, name: String = "alice") async throws -> Harness.Answer {
            try await harness.call(
                "POST", "/v1/tokens", json: ["name": name, "password": password],
                headers: ["X-Forwarded-For": "203.0.113.9, \(address)"])
        }
        for _ in 0..<3 {
            #expect(try await login("wrong-password", from: "192.0.2.1").status == 401)
        }
        // Three failures for alice from this address: the next one from it waits (growing delay)…
        let delayed = try await login("alice-password", from: "192.0.2.1")
        #expect(delayed.status == 429 && delayed.error == "rate_limited" && delayed.headers["retry-after"] == "1")
        // …while alice from elsewhere is not delayed at all.
        #expect(try await login("alice-password", from: "198.51.100.7").status == 201)
        // A second later the delay has run out for the right password from the first address.
        clock.withLock { $0 += 1_001 }
        #expect(try await login("alice-password", from: "192.0.2.1").status == 201)
        // Other names from the attacker's address count against the address: five failures, then 429.
        for name in ["bob", "carol"] {
            #expect(try await login("guess-guess", from: "192.0.2.1", name: name).status == 401)
        }
        let blocked = try await login("guess-guess", from: "192.0.2.1", name: "dave")
        #expect(blocked.status == 429 && blocked.error == "rate_limited")
        #expect((blocked.json["message"] as? String)?.contains("address") == true)
        #expect(try await login("alice-password", from: "198.51.100.7").status == 201)
    }

    @Test func unknownNamesAndStrongerHashes() async throws {
        let harness = try Harness { $0.passwordIterations = 2_000 }
        // An account whose stored hash has fewer iterations than the server's setting…
        let weak = Passwords.hash("alice-password", iterations: 1_000)
        let alice = try harness.store.createAccount(name: "alice", passwordHash: weak)
        #expect(Passwords.iterations(of: weak) == 1_000)
        // …is rehashed at the setting's count by its next successful sign-in.
        let login = try await harness.call(
            "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        #expect(login.status == 201)
        let stored = try #require(try harness.store.account(named: "alice")).passwordHash
        #expect(stored != weak && Passwords.iterations(of: stored) == 2_000 && alice.id > 0)
        #expect(Passwords.verify("alice-password", against: stored))
        // An unknown name is a plain 401, like a wrong password.
        let unknown = try await harness.call("POST", "/v1/tokens", json: ["name": "nobody", "password": "whatever-1"])
        #expect(unknown.status == 401 && unknown.error == "invalid_credentials")
    }

    @Test func signupCanBeClosed() async throws {
        let harness = try Harness { $0.signup = .closed }
        let answer = try await harness.call(
            "POST", "/v1/accounts", json: ["name": "mallory", "password": "long-enough"])
        #expect(answer.status == 403 && answer.error == "signup_closed")
        #expect(try harness.store.statistics().accounts == 0)
    }
}

/// Tokens and invites with a lifecycle: expiry, devices, passwords, single use, withdrawal.
@Suite(.serialized)
struct LifecycleTests {
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
        // Others still join with it.
        #expect(try await harness.call("POST", "/v1/invites", token: carol, json: ["code": code]).status == 200)
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
}

@Suite(.serialized)
struct LogTests {
    @Test func pushIsIdempotentAndSequenceNumbersAreGapFree() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let ops = harness.operations(list, names: ["Milk", "Bread", "Eggs"])
        let first = try await harness.push(ops, to: list, token: token)
        #expect(first.json["accepted"] as? Int == 3 && first.json["cursor"] as? Int == 3)
        let again = try await harness.push(
            ops + harness.operations(list, names: ["Salt"], offset: 5), to: list, token: token)
        #expect(
            again.json["accepted"] as? Int == 1 && again.json["duplicates"] as? Int == 3
                && again.json["cursor"] as? Int == 4)
        let page = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&limit=2", token: token)
        #expect(
            page.json["count"] as? Int == 2 && page.json["cursor"] as? Int == 2 && page.json["more"] as? Bool == true)
        let rest = try await harness.call("GET", "/v1/lists/\(list)/ops?after=2", token: token)
        #expect(try harness.pulled(rest).map(\.value) == [.text("Eggs"), .text("Salt")])
        #expect(rest.json["more"] as? Bool == false)
    }

    /// Pushes past ``BasketService/offloadedPushBytes`` are decoded and stored on the push threads:
    /// answered as small ones are, several at once, bad ones with their 4xx.
    @Test func largePushesAreAnsweredFromThePushThreads() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        var lists: [ListID] = []
        for _ in 0..<6 { lists.append(try await harness.newList(token)) }
        let batches = lists.map { list in harness.operations(list, names: (0..<400).map { "Item number \($0)" }) }
        #expect(OperationCodec.encode(batches[0]).count > BasketService.offloadedPushBytes)
        let answers = try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
            for (list, ops) in zip(lists, batches) {
                group.addTask {
                    let answer = try await harness.push(ops, to: list, token: token)
                    return (answer.status, answer.json["accepted"] as? Int ?? -1, answer.json["cursor"] as? Int ?? -1)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 6 && answers.allSatisfy { $0 == (200, 400, 400) })
        let again = try await harness.push(batches[0], to: lists[0], token: token)
        #expect(again.json["accepted"] as? Int == 0 && again.json["duplicates"] as? Int == 400)
        let page = try await harness.call("GET", "/v1/lists/\(lists[5])/ops?after=0", token: token)
        #expect(try harness.pulled(page) == batches[5])
        let garbage = "basket-ops 1\n" + String(repeating: "not an operation\n", count: 2_000)
        let invalid = try await harness.call("POST", "/v1/lists/\(lists[0])/ops", token: token, json: ["ops": garbage])
        #expect(invalid.status == 400 && invalid.error == "invalid_ops")
        let stranger = try await harness.signUp("mallory")
        let refused = try await harness.push(batches[1], to: lists[1], token: stranger)
        #expect(refused.status == 404)
    }

    @Test func badPushesAre4xxAndStoreNothing() async throws {
        let harness = try Harness { $0.maxBatch = 5 }
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let other = try await harness.newList(token)
        let invalid = try await harness.call(
            "POST", "/v1/lists/\(list)/ops", token: token, json: ["ops": "basket-ops 1\nL zz\n"])
        #expect(invalid.status == 400 && invalid.error == "invalid_ops")
        let tooMany = try await harness.push(
            harness.operations(list, names: (0..<6).map { "Item \($0)" }), to: list, token: token)
        #expect(tooMany.status == 400 && tooMany.error == "batch_too_large")
        let wrongList = try await harness.push(harness.operations(other, names: ["Milk"]), to: list, token: token)
        #expect(wrongList.status == 400 && wrongList.error == "wrong_list")
        let future = try await harness.push(
            harness.operations(list, names: ["Milk"], offset: 6 * 60_000), to: list, token: token)
        #expect(future.status == 400 && future.error == "clock_skew")
        #expect((future.json["serverTime"] as? NSNumber)?.uint64Value == harness.clock.milliseconds)
        #expect((future.json["offsetMilliseconds"] as? NSNumber)?.intValue == 6 * 60_000)
        let extra = try await harness.call(
            "POST", "/v1/lists/\(list)/ops", token: token, json: ["ops": "basket-ops 1\n", "x": 1])
        #expect(extra.status == 400 && extra.error == "unknown_field")
        for query in ["after=-1", "after=abc", "limit=0", "limit=999999", "wait=31", "wait=x"] {
            let answer = try await harness.call("GET", "/v1/lists/\(list)/ops?\(query)", token: token)
            #expect(answer.status == 400 && answer.error == "invalid_parameter", "\(query)")
        }
        #expect(try harness.store.statistics().operations == 0)
    }

    /// One bad operation in a batch refuses the whole batch, and the answer names its line.
    @Test func aPushWithOneBadTextValueIsRefusedWholeNamingTheLine() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let good = harness.operations(list, names: ["Milk", "Bread", "Eggs"])
        func with(_ field: Field, _ text: String) -> [Op] {
            var bad = good[1]
            bad.field = field
            bad.value = .text(text)
            return [good[0], bad, good[2]]
        }
        let flood = "a" + String(repeating: "\u{0301}", count: 1_800_000)  // 3.6 MB, one character
        let cases: [(String, [Op], String)] = [
            ("accent flood", with(.name, flood), "combining marks"),
            ("escape in a note", with(.note, "see \u{1B}]0;owned\u{7}"), "control characters"),
            ("C1 in a category", with(.category, "dairy\u{9B}2J"), "control characters"),
            ("NUL in a quantity", with(.quantity, "2\u{0}"), "control characters"),
            ("oversized note", with(.note, String(repeating: "n", count: 4_097)), "4096 bytes"),
            (
                "oversized title",
                [
                    good[0],
                    Op(
                        list: list, item: .list, field: .title, value: .text(String(repeating: "é", count: 1_100)),
                        version: good[1].version),
                ], "2048 bytes"
            ),
        ]
        for (label, ops, reason) in cases {
            let answer = try await harness.push(ops, to: list, token: token)
            let message = answer.json["message"] as? String ?? ""
            #expect(answer.status == 400 && answer.error == "invalid_ops", "\(label)")
            #expect(message.contains("line 4") && message.contains(reason), "\(label): \(message)")
        }
        #expect(try harness.store.statistics().operations == 0)
        #expect(try await harness.push(good, to: list, token: token).status == 200)
    }

    /// One account can park only so many long-polls; another account is not affected, and a
    /// long-poll answered gives its place back.
    @Test func parkedLongPollsAreCappedPerAccount() async throws {
        let harness = try Harness { $0.maxWatchersPerAccount = 2 }
        let alice = try await harness.signUp("alice")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(alice)
        let bobs = try await harness.newList(bob)
        async let first = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        async let second = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        for _ in 0..<500 where harness.service.watcherCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let third = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        #expect(third.status == 429 && third.error == "too_many_watches" && third.headers["retry-after"] != nil)
        // Without a wait nothing is parked: still answered.
        #expect(try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: alice).status == 200)
        async let bobsWait = harness.call("GET", "/v1/lists/\(bobs)/ops?after=0&wait=20", token: bob)
        for _ in 0..<500 where harness.service.watcherCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 3)
        _ = try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: alice)
        _ = try await harness.push(harness.operations(bobs, names: ["Tea"]), to: bobs, token: bob)
        let answers = try await [first.status, second.status, bobsWait.status]
        #expect(answers == [200, 200, 200])
        async let again = harness.call("GET", "/v1/lists/\(list)/ops?after=1&wait=20", token: alice)
        for _ in 0..<500 where harness.service.watcherCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 1)
        _ = try await harness.push(harness.operations(list, names: ["Bread"]), to: list, token: alice)
        #expect(try await again.status == 200)
    }

    @Test func aLongPollAnswersAsSoonAsSomethingArrivesOrWhenItsWaitRunsOut() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        async let waiting = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: token)
        for _ in 0..<500 where harness.service.watcherCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 1)
        let started = Date()
        _ = try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: token)
        let woken = try await waiting
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try harness.pulled(woken).map(\.value) == [.text("Milk")])
        #expect(woken.json["cursor"] as? Int == 1)

        let empty = try await harness.call("GET", "/v1/lists/\(list)/ops?after=1&wait=1", token: token)
        #expect(empty.status == 200 && empty.json["count"] as? Int == 0 && empty.json["cursor"] as? Int == 1)
        #expect(harness.service.watcherCount == 0)
    }

    @Test func aLongPollWaitsNoLongerThanTheServersMaximum() async throws {
        let harness = try Harness { $0.maxWaitSeconds = 1 }
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let started = Date()
        let answer = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=30", token: token)
        #expect(answer.status == 200 && answer.json["count"] as? Int == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        let tooLong = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=31", token: token)
        #expect(tooLong.status == 400 && tooLong.error == "invalid_parameter")
    }

    @Test func compactionKeepsTheWinnersAndSaysHistoryIsIncomplete() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let milk = ItemID(list: list, key: "milk")
        func op(_ checked: Bool, _ counter: UInt16) -> Op {
            .init(
                list: list, item: milk, field: .checked, value: .bool(checked),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: harness.clock.milliseconds, counter: counter),
                    replica: ReplicaID(rawValue: 3)))
        }
        _ = try await harness.push(
            [op(true, 1), op(false, 2), op(true, 3)] + harness.operations(list, names: ["Milk"]), to: list, token: token
        )
        let dropped = try harness.store.compact(receivedBefore: Int64(harness.clock.milliseconds) + 1)
        #expect(dropped == 2)
        let page = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: token)
        let ops = try harness.pulled(page)
        #expect(ops.filter { $0.field == .checked }.map(\.value) == [.bool(true)])
        #expect(page.json["historyComplete"] as? Bool == false)
        let later = try await harness.call("GET", "/v1/lists/\(list)/ops?after=3", token: token)
        #expect(later.json["historyComplete"] as? Bool == true)
    }

    @Test func metricsCountRequestsAndStoredOperations() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        _ = try await harness.push(harness.operations(list, names: ["Milk", "Bread"]), to: list, token: token)
        let metrics = String(decoding: try await harness.call("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("basket_operations_stored 2"))
        #expect(metrics.contains("basket_watchers 0"))
        #expect(metrics.contains("basket_http_request_duration_seconds_bucket"))
        // Two operations and their two items, known to the store for the next push.
        let backend = harness.store is SQLiteStore ? "sqlite" : "postgres"
        #expect(metrics.contains("basket_\(backend)_log_entries 4"))
        #expect(
            !metrics.contains("basket_\(backend)_log_bytes 0\n") && metrics.contains("basket_\(backend)_log_bytes "))
    }
}
