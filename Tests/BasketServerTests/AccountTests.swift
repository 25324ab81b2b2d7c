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
