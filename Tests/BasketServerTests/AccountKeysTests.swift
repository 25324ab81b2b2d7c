import BasketCore
import Foundation
import TestSupport
import Testing

@testable import BasketServer

/// What the server keeps for lists encrypted end to end and can open none of: an account's key
/// pair (made once, wrapped again with each new password), the recovery code's way back from a
/// forgotten password, and members' envelopes of a list's keys, which reach members only.
@Suite(.serialized)
struct AccountKeysTests {
    /// Random bytes in the forms docs/encryption.md gives (the server checks forms, never opens).
    static func key() -> String { Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) }) }
    static func wrapped() -> String { "w1." + Base64URL.encode((0..<60).map { _ in UInt8.random(in: 0...255) }) }
    static func envelope() -> String { "e1." + Base64URL.encode((0..<128).map { _ in UInt8.random(in: 0...255) }) }

    static func setup(_ name: String, publicKey: String, secret: String, wrap: String? = nil) -> [String: Any] {
        [
            "password": "\(name)-password", "publicKey": publicKey, "wrappedKey": wrap ?? wrapped(),
            "recoveryKey": wrapped(), "recoverySecret": secret,
        ]
    }

    @Test func aKeyPairIsMadeOnceAndWrappedAgainWithANewPassword() async throws {
        let harness = try Harness()
        let olga = try await harness.signUp("olga")
        let missing = try await harness.call("GET", "/v1/account/keys", token: olga)
        #expect(missing.status == 404 && missing.error == "not_found")

        let publicKey = Self.key()
        var wrong = Self.setup("olga", publicKey: publicKey, secret: Self.key())
        wrong["password"] = "not-her-password"
        #expect(try await harness.call("PUT", "/v1/account/keys", token: olga, json: wrong).status == 401)
        var malformed = Self.setup("olga", publicKey: publicKey, secret: Self.key())
        malformed["wrappedKey"] = "w1.short"
        #expect(try await harness.call("PUT", "/v1/account/keys", token: olga, json: malformed).error == "invalid_keys")
        #expect(try await harness.call("GET", "/v1/account/keys", token: olga).status == 404)

        let first = Self.wrapped()
        let kept = try await harness.call(
            "PUT", "/v1/account/keys", token: olga,
            json: Self.setup("olga", publicKey: publicKey, secret: Self.key(), wrap: first))
        #expect(kept.status == 200 && kept.json["publicKey"] as? String == publicKey)
        var read = try await harness.call("GET", "/v1/account/keys", token: olga)
        #expect(read.json["publicKey"] as? String == publicKey && read.json["wrappedKey"] as? String == first)
        #expect(read.json["recoveryKey"] == nil)

        // Another key pair is refused; the same public key takes new wraps.
        let other = try await harness.call(
            "PUT", "/v1/account/keys", token: olga, json: Self.setup("olga", publicKey: Self.key(), secret: Self.key()))
        #expect(other.status == 409 && other.error == "keys_exist")
        let second = Self.wrapped()
        #expect(
            try await harness.call(
                "PUT", "/v1/account/keys", token: olga,
                json: Self.setup("olga", publicKey: publicKey, secret: Self.key(), wrap: second)
            ).status == 200)
        read = try await harness.call("GET", "/v1/account/keys", token: olga)
        #expect(read.json["publicKey"] as? String == publicKey && read.json["wrappedKey"] as? String == second)

        // A new password comes with the private key wrapped again, in the same step, or not at all.
        let bare = try await harness.call(
            "POST", "/v1/account/password", token: olga,
            json: ["password": "olga-password", "newPassword": "new-password"])
        #expect(bare.status == 409 && bare.error == "rewrap_required")
        let third = Self.wrapped()
        let changed = try await harness.call(
            "POST", "/v1/account/password", token: olga,
            json: ["password": "olga-password", "newPassword": "new-password", "wrappedKey": third])
        #expect(changed.status == 200)
        read = try await harness.call("GET", "/v1/account/keys", token: olga)
        #expect(read.json["publicKey"] as? String == publicKey && read.json["wrappedKey"] as? String == third)
        let signIn = try await harness.call("POST", "/v1/tokens", json: ["name": "olga", "password": "new-password"])
        #expect(signIn.status == 201)
    }

    @Test func aRecoveryCodeSetsANewPasswordAndKeepsTheKeyPair() async throws {
        let harness = try Harness()
        let olga = try await harness.signUp("olga")
        _ = try await harness.signUp("bob")
        let (publicKey, secret) = (Self.key(), Self.key())
        var setup = Self.setup("olga", publicKey: publicKey, secret: secret)
        let recoveryKey = Self.wrapped()
        setup["recoveryKey"] = recoveryKey
        #expect(try await harness.call("PUT", "/v1/account/keys", token: olga, json: setup).status == 200)

        // A wrong code, an unknown name and an account without keys are the same 401.
        for (name, code) in [("olga", Self.key()), ("nobody", secret), ("bob", secret)] {
            let refused = try await harness.call(
                "POST", "/v1/account/recovery", json: ["name": name, "recoverySecret": code])
            #expect(refused.status == 401 && refused.error == "invalid_credentials")
            #expect(refused.json["message"] as? String == "wrong account name or recovery code")
        }
        let keys = try await harness.call(
            "POST", "/v1/account/recovery", json: ["name": "OLGA", "recoverySecret": secret])
        #expect(keys.status == 200)
        #expect(keys.json["publicKey"] as? String == publicKey && keys.json["recoveryKey"] as? String == recoveryKey)
        #expect(keys.json["wrappedKey"] == nil)
        let half = try await harness.call(
            "POST", "/v1/account/recovery",
            json: ["name": "olga", "recoverySecret": secret, "newPassword": "a-new-password"])
        #expect(half.status == 400 && half.error == "missing_field")

        let wrap = Self.wrapped()
        let reset = try await harness.call(
            "POST", "/v1/account/recovery",
            json: [
                "name": "olga", "recoverySecret": secret, "newPassword": "a-new-password", "wrappedKey": wrap,
                "device": "new phone",
            ])
        #expect(reset.status == 201 && reset.json["account"] as? String == "olga")
        let token = reset.json["token"] as? String ?? ""
        // Every other device is signed out; the old password is gone; the key pair stays.
        #expect(try await harness.call("GET", "/v1/account", token: olga).status == 401)
        #expect(
            try await harness.call("POST", "/v1/tokens", json: ["name": "olga", "password": "olga-password"]).status
                == 401)
        let read = try await harness.call("GET", "/v1/account/keys", token: token)
        #expect(read.json["publicKey"] as? String == publicKey && read.json["wrappedKey"] as? String == wrap)
        #expect(
            try await harness.call("POST", "/v1/tokens", json: ["name": "olga", "password": "a-new-password"]).status
                == 201)
    }

    @Test func envelopesReachMembersOfAnEncryptedListOnly() async throws {
        let harness = try Harness()
        let olga = try await harness.signUp("olga")
        let bob = try await harness.signUp("bob")
        let carol = try await harness.signUp("carol")
        let dave = try await harness.signUp("dave")
        let eve = try await harness.signUp("eve")
        var publicKeys: [String: String] = [:]
        for (name, token) in [("olga", olga), ("bob", bob), ("dave", dave), ("eve", eve)] {
            publicKeys[name] = Self.key()
            let kept = try await harness.call(
                "PUT", "/v1/account/keys", token: token,
                json: Self.setup(name, publicKey: publicKeys[name]!, secret: Self.key()))
            #expect(kept.status == 200)
        }
        let list = ListID.random()
        _ = try await harness.call("POST", "/v1/lists", token: olga, json: ["id": list.description, "encrypted": true])
        let plain = try await harness.newList(olga)
        func deliver(_ envelopes: [(String, String)], to list: ListID, as token: String) async throws -> Harness.Answer
        {
            try await harness.call(
                "PUT", "/v1/lists/\(list)/envelopes", token: token,
                json: ["envelopes": envelopes.map { ["account": $0.0, "envelope": $0.1] }])
        }
        func envelope(of list: ListID, as token: String) async throws -> Harness.Answer {
            try await harness.call("GET", "/v1/lists/\(list)/envelope", token: token)
        }
        let notEncrypted = try await deliver([("olga", Self.envelope())], to: plain, as: olga)
        #expect(notEncrypted.status == 409 && notEncrypted.error == "not_encrypted")
        try await harness.join(list, owner: olga, member: bob, role: "editor")
        try await harness.join(list, owner: olga, member: carol, role: "editor")
        try await harness.join(list, owner: olga, member: dave, role: "viewer")

        // Members see each other's public keys (carol has none yet).
        let members = try await harness.call("GET", "/v1/lists/\(list)/members", token: bob)
        let keys = (members.json["members"] as? [[String: Any]] ?? []).map {
            ($0["account"] as? String ?? "", $0["publicKey"] as? String)
        }
        #expect(keys.count == 4)
        #expect(keys.allSatisfy { $0.1 == publicKeys[$0.0] })

        let (forOlga, forBob) = (Self.envelope(), Self.envelope())
        #expect(try await deliver([("olga", forOlga), ("BOB", forBob)], to: list, as: olga).status == 204)
        #expect(try await envelope(of: list, as: bob).json["envelope"] as? String == forBob)
        #expect(try await envelope(of: list, as: olga).json["envelope"] as? String == forOlga)
        let none = try await envelope(of: list, as: carol)
        #expect(none.status == 200 && none.json["envelope"] == nil)
        // A stranger learns nothing, and leaves nothing.
        #expect(try await envelope(of: list, as: eve).status == 404)
        #expect(try await deliver([("eve", Self.envelope())], to: list, as: eve).status == 404)

        // All or none: an envelope for a member without a key pair, or for a stranger, refuses the lot.
        let noKey = try await deliver([("bob", Self.envelope()), ("carol", Self.envelope())], to: list, as: olga)
        #expect(noKey.status == 400 && noKey.error == "invalid_envelope")
        let stranger = try await deliver([("bob", Self.envelope()), ("eve", Self.envelope())], to: list, as: olga)
        #expect(stranger.status == 403 && stranger.error == "forbidden")
        #expect(try await envelope(of: list, as: bob).json["envelope"] as? String == forBob)
        // A viewer leaves its own envelope only, and so does an editor (outside a rotation).
        #expect(try await deliver([("bob", Self.envelope())], to: list, as: dave).status == 403)
        #expect(try await deliver([("olga", Self.envelope())], to: list, as: bob).status == 403)
        #expect(try await envelope(of: list, as: olga).json["envelope"] as? String == forOlga)
        let forDave = Self.envelope()
        #expect(try await deliver([("dave", forDave)], to: list, as: dave).status == 204)
        #expect(try await envelope(of: list, as: dave).json["envelope"] as? String == forDave)
        // Forms and counts.
        let malformed = try await deliver([("bob", "e1.not-an-envelope")], to: list, as: olga)
        #expect(malformed.status == 400 && malformed.error == "invalid_envelope")
        let huge = try await deliver(
            [("bob", "e1." + String(repeating: "A", count: Wire.KeyForm.maxEnvelopeBytes))], to: list, as: olga)
        #expect(huge.status == 400)
        let many = try await deliver(Array(repeating: ("bob", forBob), count: 101), to: list, as: olga)
        #expect(many.status == 400 && many.error == "invalid_parameter")

        // A member removed takes no envelope back when it returns (after the key's rotation, which
        // the removal made due: KeyRotationTests).
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)/members/bob", token: olga).status == 204)
        #expect(try await envelope(of: list, as: bob).status == 404)
        let rotation = try await harness.call(
            "PUT", "/v1/lists/\(list)/envelopes", token: olga,
            json: [
                "epoch": 1,
                "envelopes": ["olga", "dave"].map { ["account": $0, "envelope": Self.envelope()] },
            ])
        #expect(rotation.status == 204)
        try await harness.join(list, owner: olga, member: bob, role: "editor")
        #expect(try await envelope(of: list, as: bob).json["envelope"] == nil)
    }
}
