import BasketCore
import BasketServer
import Foundation
import HTTPServer
import PlatformCrypto
import Testing

/// Every route × every kind of caller (no token, a bad token, a revoked token, a signed-in
/// stranger, a viewer, an editor, the owner) gets the answer docs/api.md gives it.
struct AuthorizationMatrixTests {
    enum Caller: String, CaseIterable {
        case none, bad, revoked, stranger, viewer, editor, owner
    }

    /// A browser's subscription (a fresh key pair, as `pushManager.subscribe` makes) to no list.
    static func subscription(_ name: String) throws -> [String: Any] {
        [
            "endpoint": "https://push.example.net/\(name)",
            "keys": [
                "p256dh": Base64URL.encode(try P256Key.generate().publicKeyBytes),
                "auth": Base64URL.encode((0..<16).map { UInt8($0) }),
            ],
            "lists": [String](),
        ]
    }

    @Test func everyRouteAnswersEveryKindOfCallerAsDocumented() async throws {
        // The owner makes an invite for each caller of three routes: more than the 20 a member may have out.
        let harness = try Harness {
            $0.maxInvitesPerMember = 100
            $0.failedLoginsPerAddress = 1_000
        }
        var tokens: [Caller: String] = [:]
        for caller in [Caller.revoked, .stranger, .viewer, .editor, .owner] {
            tokens[caller] = try await harness.signUp(caller.rawValue)
        }
        tokens[.bad] = "not-a-token"
        let owner = tokens[.owner]!
        let list = try await harness.newList(owner)
        try await harness.join(list, owner: owner, member: tokens[.viewer]!, role: "viewer")
        try await harness.join(list, owner: owner, member: tokens[.editor]!, role: "editor")
        try await harness.join(list, owner: owner, member: tokens[.revoked]!, role: "editor")
        try #require(try await harness.call("DELETE", "/v1/tokens/current", token: tokens[.revoked]).status == 204)
        let target = try await harness.signUp("target")
        try await harness.join(list, owner: owner, member: target, role: "editor")
        let promoted = try await harness.signUp("promoted")
        try await harness.join(list, owner: owner, member: promoted, role: "viewer")
        // An encrypted list with the same members, for the keys sealed to them.
        let sealed = ListID.random()
        _ = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": sealed.description, "encrypted": true])
        try await harness.join(sealed, owner: owner, member: tokens[.viewer]!, role: "viewer")
        try await harness.join(sealed, owner: owner, member: tokens[.editor]!, role: "editor")
        // A plain list with the same members, for the owner to encrypt.
        let converted = try await harness.newList(owner)
        try await harness.join(converted, owner: owner, member: tokens[.viewer]!, role: "viewer")
        try await harness.join(converted, owner: owner, member: tokens[.editor]!, role: "editor")
        // Each signed-in caller's key pair (made by the case below), sent again with the same public key.
        let publicKeys = Dictionary(uniqueKeysWithValues: Caller.allCases.map { ($0, AccountKeysTests.key()) })
        // A second list with the same members, for the owner to delete.
        let doomed = try await harness.newList(owner)
        try await harness.join(doomed, owner: owner, member: tokens[.viewer]!, role: "viewer")
        try await harness.join(doomed, owner: owner, member: tokens[.editor]!, role: "editor")
        // Each caller pushes an item named after it: what is stored afterwards shows whose push went in.
        let encoded = { (caller: Caller) in
            // Each caller's device has a replica id of its own: a replica id belongs to the first account that pushes it.
            String(
                decoding: OperationCodec.encode(
                    harness.operations(list, names: [caller.rawValue], replica: Harness.replica(caller.rawValue))),
                as: UTF8.self)
        }
        var accounts = 0

        struct Case {
            var route: String
            var expected: [Caller: Int]
            var call: (Caller, String?) async throws -> Harness.Answer
        }
        let signedIn = { (status: Int) -> [Caller: Int] in
            [.none: 401, .bad: 401, .revoked: 401, .stranger: status, .viewer: status, .editor: status, .owner: status]
        }
        let anyone = { (status: Int) -> [Caller: Int] in
            Dictionary(uniqueKeysWithValues: Caller.allCases.map { ($0, status) })
        }
        let member = { (viewer: Int, editor: Int, owner: Int) -> [Caller: Int] in
            [.none: 401, .bad: 401, .revoked: 401, .stranger: 404, .viewer: viewer, .editor: editor, .owner: owner]
        }
        let cases: [Case] = [
            Case(route: "GET /healthz", expected: anyone(200)) { _, token in
                try await harness.call("GET", "/healthz", token: token)
            },
            Case(route: "GET /metrics", expected: anyone(200)) { _, token in
                try await harness.call("GET", "/metrics", token: token)
            },
            Case(route: "GET /v1/time", expected: anyone(200)) { _, token in
                try await harness.call("GET", "/v1/time", token: token)
            },
            Case(route: "POST /v1/accounts", expected: anyone(201)) { _, token in
                accounts += 1
                return try await harness.call(
                    "POST", "/v1/accounts", token: token, json: ["name": "new\(accounts)", "password": "password-1"])
            },
            Case(route: "POST /v1/tokens", expected: anyone(201)) { _, token in
                try await harness.call(
                    "POST", "/v1/tokens", token: token, json: ["name": "owner", "password": "owner-password"])
            },
            Case(route: "GET /v1/account", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/account", token: token)
            },
            // Keys of encrypted lists: each signed-in account keeps a key pair of its own, reads it
            // back, and leaves its envelope of the encrypted list where it is a member.
            Case(route: "PUT /v1/account/keys", expected: signedIn(200)) { caller, token in
                try await harness.call(
                    "PUT", "/v1/account/keys", token: token,
                    json: AccountKeysTests.setup(
                        caller.rawValue, publicKey: publicKeys[caller]!, secret: AccountKeysTests.key()))
            },
            Case(route: "GET /v1/account/keys", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/account/keys", token: token)
            },
            // No token is needed, and none helps: a wrong code is refused whoever asks.
            Case(route: "POST /v1/account/recovery", expected: anyone(401)) { caller, token in
                try await harness.call(
                    "POST", "/v1/account/recovery", token: token,
                    json: ["name": caller.rawValue, "recoverySecret": AccountKeysTests.key()])
            },
            Case(route: "PUT /v1/lists/{id}/envelopes", expected: member(204, 204, 204)) { caller, token in
                try await harness.call(
                    "PUT", "/v1/lists/\(sealed)/envelopes", token: token,
                    json: ["envelopes": [["account": caller.rawValue, "envelope": AccountKeysTests.envelope()]]])
            },
            Case(route: "GET /v1/lists/{id}/envelope", expected: member(200, 200, 200)) { _, token in
                try await harness.call("GET", "/v1/lists/\(sealed)/envelope", token: token)
            },
            // Snapshots: any member reads one (none yet: 204); only an owner's device leaves one.
            Case(route: "GET /v1/lists/{id}/snapshot", expected: member(204, 204, 204)) { _, token in
                try await harness.call("GET", "/v1/lists/\(sealed)/snapshot", token: token)
            },
            Case(route: "PUT /v1/lists/{id}/snapshot", expected: member(403, 403, 204)) { _, token in
                try await harness.call(
                    "PUT", "/v1/lists/\(sealed)/snapshot", token: token,
                    json: ["cursor": 0, "snapshot": "n1.0." + Base64URL.encode([UInt8](repeating: 7, count: 64))])
            },
            // Encrypting a plain list: owners only, with keys for every member.
            Case(route: "POST /v1/lists/{id}/encryption", expected: member(403, 403, 200)) { _, token in
                try await harness.call(
                    "POST", "/v1/lists/\(converted)/encryption", token: token,
                    json: [
                        "cursor": 0, "snapshot": "n1.0." + Base64URL.encode([UInt8](repeating: 7, count: 64)),
                        "envelopes": [Caller.owner, .viewer, .editor].map {
                            ["account": $0.rawValue, "envelope": AccountKeysTests.envelope()]
                        },
                    ])
            },
            Case(route: "POST /v1/lists", expected: signedIn(201)) { _, token in
                try await harness.call("POST", "/v1/lists", token: token, json: ["id": ListID.random().description])
            },
            Case(route: "GET /v1/lists", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/lists", token: token)
            },
            Case(route: "GET /v1/lists/{id}/members", expected: member(200, 200, 200)) { _, token in
                try await harness.call("GET", "/v1/lists/\(list)/members", token: token)
            },
            Case(route: "POST /v1/lists/{id}/invites", expected: member(403, 201, 201)) { _, token in
                try await harness.call("POST", "/v1/lists/\(list)/invites", token: token, json: ["role": "viewer"])
            },
            Case(route: "GET /v1/lists/{id}/ops", expected: member(200, 200, 200)) { _, token in
                try await harness.call("GET", "/v1/lists/\(list)/ops", token: token)
            },
            Case(route: "POST /v1/lists/{id}/ops", expected: member(403, 200, 200)) { caller, token in
                try await harness.call("POST", "/v1/lists/\(list)/ops", token: token, json: ["ops": encoded(caller)])
            },
            // Removing another member is the owner's right (the owner comes last: the target goes once).
            Case(route: "DELETE /v1/lists/{id}/members/{account}", expected: member(403, 403, 204)) { _, token in
                try await harness.call("DELETE", "/v1/lists/\(list)/members/target", token: token)
            },
            // Roles are the owner's to give.
            Case(route: "PUT /v1/lists/{id}/members/{account}", expected: member(403, 403, 200)) { _, token in
                try await harness.call(
                    "PUT", "/v1/lists/\(list)/members/promoted", token: token, json: ["role": "editor"])
            },
            // Deleting a list too (its members get 403, everyone else cannot tell it exists).
            Case(route: "DELETE /v1/lists/{id}", expected: member(403, 403, 204)) { _, token in
                try await harness.call("DELETE", "/v1/lists/\(doomed)", token: token)
            },
            // Any signed-in account may redeem a code (that is what it is for); members keep their list.
            Case(route: "POST /v1/invites", expected: signedIn(200)) { _, token in
                let invite = try await harness.call(
                    "POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": "viewer"])
                let code = invite.json["code"] as? String ?? "none"
                return try await harness.call("POST", "/v1/invites", token: token, json: ["code": code])
            },
            // Any signed-in account may ask what a code is for before joining with it.
            Case(route: "POST /v1/invites/preview", expected: signedIn(200)) { _, token in
                let invite = try await harness.call(
                    "POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": "viewer", "title": "Family"])
                let code = invite.json["code"] as? String ?? "none"
                return try await harness.call("POST", "/v1/invites/preview", token: token, json: ["code": code])
            },
            // An owner sees every invite, an editor its own; a viewer none. (The stranger has just
            // joined as a viewer with the code above.)
            Case(
                route: "GET /v1/lists/{id}/invites",
                expected: [
                    .none: 401, .bad: 401, .revoked: 401, .stranger: 403, .viewer: 403, .editor: 200, .owner: 200,
                ]
            ) { _, token in
                try await harness.call("GET", "/v1/lists/\(list)/invites", token: token)
            },
            // An owner's invite: withdrawn by the owner; to others it is not theirs to see (404).
            Case(
                route: "DELETE /v1/lists/{id}/invites/{invite}",
                expected: [
                    .none: 401, .bad: 401, .revoked: 401, .stranger: 404, .viewer: 404, .editor: 404, .owner: 204,
                ]
            ) { _, token in
                let invite = try await harness.call(
                    "POST", "/v1/lists/\(list)/invites", token: owner, json: ["role": "viewer"])
                let id = invite.json["id"] as? String ?? "none"
                return try await harness.call("DELETE", "/v1/lists/\(list)/invites/\(id)", token: token)
            },
            // Who is shopping: members see it; owners and editors go (the stranger is a viewer by now).
            Case(route: "GET /v1/lists/{id}/shopping", expected: member(200, 200, 200).merging([.stranger: 200]) { $1 })
            {
                _, token in try await harness.call("GET", "/v1/lists/\(list)/shopping", token: token)
            },
            Case(route: "PUT /v1/lists/{id}/shopping", expected: member(403, 200, 200).merging([.stranger: 403]) { $1 })
            {
                _, token in
                try await harness.call("PUT", "/v1/lists/\(list)/shopping", token: token, json: ["shop": "Lidl"])
            },
            Case(
                route: "DELETE /v1/lists/{id}/shopping",
                expected: member(200, 200, 200).merging([.stranger: 200]) { $1 }
            ) { _, token in
                try await harness.call("DELETE", "/v1/lists/\(list)/shopping?bought=1", token: token)
            },
            // Add-only keys: owners and editors make them; each caller tries to revoke one of the owner's.
            Case(route: "POST /v1/lists/{id}/keys", expected: member(403, 201, 201).merging([.stranger: 403]) { $1 }) {
                _, token in
                try await harness.call("POST", "/v1/lists/\(list)/keys", token: token, json: ["name": "Speaker"])
            },
            Case(route: "GET /v1/lists/{id}/keys", expected: member(200, 200, 200).merging([.stranger: 200]) { $1 }) {
                _, token in try await harness.call("GET", "/v1/lists/\(list)/keys", token: token)
            },
            Case(
                route: "DELETE /v1/lists/{id}/keys/{key}",
                expected: member(404, 404, 204).merging([.stranger: 404]) { $1 }
            ) { _, token in
                let made = try await harness.call(
                    "POST", "/v1/lists/\(list)/keys", token: owner, json: ["name": "Gone"])
                return try await harness.call(
                    "DELETE", "/v1/lists/\(list)/keys/\(made.json["id"] as? String ?? "none")", token: token)
            },
            // The inbox takes an add-only key, never a token: every caller here is refused.
            Case(route: "POST /v1/lists/{id}/inbox", expected: anyone(401)) { _, token in
                try await harness.call("POST", "/v1/lists/\(list)/inbox", token: token, json: ["text": "milk"])
            },
            Case(route: "GET /v1/lists/{id}/inbox", expected: member(200, 200, 200).merging([.stranger: 200]) { $1 }) {
                _, token in try await harness.call("GET", "/v1/lists/\(list)/inbox", token: token)
            },
            // Each caller tries to take a text a key just put there; viewers may not file.
            Case(
                route: "DELETE /v1/lists/{id}/inbox/{entry}",
                expected: member(403, 200, 200).merging([.stranger: 403]) { $1 }
            ) { _, token in
                let key = try await harness.call("POST", "/v1/lists/\(list)/keys", token: owner, json: ["name": "Feed"])
                _ = try await harness.call(
                    "POST", "/v1/lists/\(list)/inbox", token: key.json["key"] as? String, json: ["text": "milk"])
                let waiting = try await harness.call("GET", "/v1/lists/\(list)/inbox", token: owner)
                let id = ((waiting.json["entries"] as? [[String: Any]])?.first?["id"] as? String) ?? "none"
                _ = try await harness.call(
                    "DELETE", "/v1/lists/\(list)/keys/\(key.json["id"] as? String ?? "none")", token: owner)
                let taken = try await harness.call("DELETE", "/v1/lists/\(list)/inbox/\(id)", token: token)
                // A refused caller leaves the text: the owner takes it, so the next caller finds one of its own.
                if taken.status != 200 {
                    _ = try await harness.call("DELETE", "/v1/lists/\(list)/inbox/\(id)", token: owner)
                }
                return taken
            },
            // Web Push: any signed-in device, for itself (no list here: nothing is ever posted).
            Case(route: "GET /v1/push/key", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/push/key", token: token)
            },
            Case(route: "POST /v1/push/subscriptions", expected: signedIn(201)) { caller, token in
                try await harness.call(
                    "POST", "/v1/push/subscriptions", token: token, json: try Self.subscription(caller.rawValue))
            },
            Case(route: "GET /v1/push/subscriptions", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/push/subscriptions", token: token)
            },
            // Each signed-in caller ends a subscription of its own made for this; nobody else's.
            Case(route: "DELETE /v1/push/subscriptions/{id}", expected: signedIn(204)) { caller, token in
                let made = try await harness.call(
                    "POST", "/v1/push/subscriptions", token: token, json: try Self.subscription("end-\(caller)"))
                return try await harness.call(
                    "DELETE", "/v1/push/subscriptions/\(made.json["id"] as? String ?? "none")", token: token)
            },
            Case(route: "GET /v1/tokens", expected: signedIn(200)) { _, token in
                try await harness.call("GET", "/v1/tokens", token: token)
            },
            // Each signed-in caller signs out a device of its own made for this.
            Case(route: "DELETE /v1/tokens/{id}", expected: signedIn(204)) { caller, token in
                var id = "none"
                if [.stranger, .viewer, .editor, .owner].contains(caller) {
                    let login = try await harness.call(
                        "POST", "/v1/tokens",
                        json: ["name": caller.rawValue, "password": "\(caller.rawValue)-password"])
                    id = login.json["id"] as? String ?? "none"
                }
                return try await harness.call("DELETE", "/v1/tokens/\(id)", token: token)
            },
            // The password "changed" to itself (later cases sign in with it); other devices signed out.
            Case(route: "POST /v1/account/password", expected: signedIn(200)) { caller, token in
                try await harness.call(
                    "POST", "/v1/account/password", token: token,
                    json: [
                        "password": "\(caller.rawValue)-password", "newPassword": "\(caller.rawValue)-password",
                        "wrappedKey": AccountKeysTests.wrapped(),
                    ])
            },
            // Nobody deletes an account without its password (a signed-in caller's wrong one is
            // invalid_credentials, 401): the deletion itself is AccountTests'.
            Case(route: "DELETE /v1/account", expected: anyone(401)) { caller, token in
                try await harness.call("DELETE", "/v1/account", token: token, json: ["password": "not it"])
            },
            // Revoking signs out: each signed-in caller revokes a token of its own made for this.
            Case(route: "DELETE /v1/tokens/current", expected: signedIn(204)) { caller, token in
                var own = token
                if [.stranger, .viewer, .editor, .owner].contains(caller) {
                    let login = try await harness.call(
                        "POST", "/v1/tokens",
                        json: ["name": caller.rawValue, "password": "\(caller.rawValue)-password"])
                    own = login.json["token"] as? String
                }
                return try await harness.call("DELETE", "/v1/tokens/current", token: own)
            },
            // Sign out everywhere: last, since it ends every token of the caller.
            Case(route: "DELETE /v1/tokens", expected: signedIn(200)) { _, token in
                try await harness.call("DELETE", "/v1/tokens", token: token)
            },
        ]
        // The table covers every route the server serves.
        let served = Set(harness.service.router().routes.map { "\($0.method) \($0.pattern)" })
        #expect(Set(cases.map(\.route)) == served)
        #expect(served.count == 46)  // docs/reliability.md's count

        for entry in cases {
            for caller in Caller.allCases {
                let answer = try await entry.call(caller, tokens[caller])
                let expected = entry.expected[caller]!
                #expect(
                    answer.status == expected,
                    "\(entry.route) as \(caller): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                if answer.status >= 400 {
                    #expect(answer.error != nil, "\(entry.route) as \(caller): an error without a code")
                }
            }
        }
        // Only the editor's and the owner's pushes are stored: the viewer's (and the strangers') left nothing.
        let stored = try OperationCodec.decode(harness.store.page(of: list, after: 0, limit: 100).encoded)
        #expect(Set(stored.compactMap(\.value.textValue)) == ["editor", "owner"])
        #expect(try harness.store.statistics().operations == 2)
        // The owner's calls took effect: a new editor, a list gone for everyone.
        let members = try harness.store.members(of: list)
        #expect(members.first { $0.account == "promoted" }?.role == .editor)
        #expect(throws: StoreError.noSuchList) { try harness.store.head(of: doomed) }
        // (Every token above was signed out by the last cases: the editor signs in again.)
        let editor = try await harness.call(
            "POST", "/v1/tokens", json: ["name": "editor", "password": "editor-password"])
        let fresh = try #require(editor.json["token"] as? String)
        #expect(try await harness.call("GET", "/v1/lists/\(doomed)/ops", token: fresh).status == 404)
        let lists = try await harness.call("GET", "/v1/lists", token: fresh)
        #expect(lists.status == 200 && String(decoding: lists.body, as: UTF8.self).contains(list.description))
        #expect(!String(decoding: lists.body, as: UTF8.self).contains(doomed.description))
    }
}
