import BasketCore
import Foundation
import TestSupport
import Testing

@testable import BasketServer

/// Lists encrypted end to end, as a server sees them: it takes sealed values only (what it can
/// check without a key), says which lists are encrypted, keeps the flag through a dump, and
/// refuses plain lists when told to.
@Suite(.serialized)
struct EncryptedListTests {
    /// `ops` with every value replaced by sealed-looking text of a padded size (the server checks
    /// the form; the bytes are the members' business).
    static func sealed(_ ops: [Op], epoch: UInt32 = 0) -> [Op] {
        ops.map { op in
            var copy = op
            let payload = (0..<(Sealed.overhead + Sealed.paddedLength(8))).map { _ in UInt8.random(in: 0...255) }
            copy.value = .text(Sealed.text(epoch: epoch, payload: payload))
            return copy
        }
    }

    @Test func anEncryptedListTakesSealedValuesAndNothingElse() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("olga")
        let list = ListID.random()
        let made = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": list.description, "encrypted": true])
        #expect(made.status == 201 && made.json["encrypted"] as? Bool == true)
        let plain = try await harness.newList(owner)
        let lists = try await harness.call("GET", "/v1/lists", token: owner)
        let flags = (lists.json["lists"] as? [[String: Any]] ?? []).map {
            ($0["id"] as? String, $0["encrypted"] as? Bool)
        }
        #expect(flags.contains { $0.0 == list.description && $0.1 == true })
        #expect(flags.contains { $0.0 == plain.description && $0.1 == nil })

        // Plain values, flags included, are refused and change nothing (409: a device that pushes
        // them holds the list as plain, and changes its copy); sealed ones are kept.
        let names = harness.operations(list, names: ["Milk", "Bread"])
        let refused = try await harness.push(names, to: list, token: owner)
        #expect(refused.status == 409 && refused.error == "list_encrypted")
        #expect((refused.json["message"] as? String ?? "").contains("seals its writes"))
        var checked = names[0]
        checked.field = .checked
        checked.value = .bool(true)
        #expect(try await harness.push([checked], to: list, token: owner).error == "list_encrypted")
        // Neither plain nor sealed: not an operation encoding at all.
        let garbled = try await harness.call(
            "POST", "/v1/lists/\(list)/ops", token: owner, json: ["ops": "not operations"])
        #expect(garbled.status == 400 && garbled.error == "invalid_ops")
        let sealed = Self.sealed(names + [checked])
        let pushed = try await harness.push(sealed, to: list, token: owner)
        #expect(pushed.status == 200 && pushed.json["accepted"] as? Int == 3)
        let pulled = try harness.pulled(
            try await harness.call("GET", "/v1/lists/\(list)/ops", token: owner), sealed: true)
        #expect(Set(pulled) == Set(sealed))
        // A sealed value over its field's bound, a list field on an item, a sealed value in a plain list.
        var long = sealed[0]
        long.value = .text(Sealed.text(epoch: 0, payload: [UInt8](repeating: 7, count: 6_000)))
        #expect(try await harness.push([long], to: list, token: owner).status == 400)
        var misplaced = Self.sealed(harness.operations(list, names: ["Eggs"]))[0]
        misplaced.field = .title
        #expect(try await harness.push([misplaced], to: list, token: owner).status == 400)
        // A plain list keeps its rules: a sealed flag is no flag there.
        var sealedFlag = Self.sealed(harness.operations(plain, names: ["Eggs"]))[0]
        sealedFlag.field = .checked
        #expect(try await harness.push([sealedFlag], to: plain, token: owner).error == "invalid_ops")
        #expect(
            try harness.pulled(try await harness.call("GET", "/v1/lists/\(list)/ops", token: owner), sealed: true).count
                == 3)
    }

    /// A shopping status's shop name is sealed on an encrypted list (the server relays it as it
    /// came); a plain list's is a shop's name of at most 100 bytes.
    @Test func anEncryptedListsShoppingStatusCarriesItsShopSealed() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("olga")
        let list = ListID.random()
        _ = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": list.description, "encrypted": true])
        let plain = try await harness.newList(owner)
        let clear = try await harness.call("PUT", "/v1/lists/\(list)/shopping", token: owner, json: ["shop": "Lidl"])
        #expect(clear.status == 400 && clear.error == "invalid_title")
        let sealed = Sealed.text(epoch: 0, payload: [UInt8](repeating: 5, count: Sealed.overhead + 128))
        let started = try await harness.call("PUT", "/v1/lists/\(list)/shopping", token: owner, json: ["shop": sealed])
        #expect(started.status == 200)
        let statuses = try await harness.call("GET", "/v1/lists/\(list)/shopping", token: owner)
        #expect((statuses.json["shopping"] as? [[String: Any]])?.first?["shop"] as? String == sealed)
        let long = try await harness.call(
            "PUT", "/v1/lists/\(plain)/shopping", token: owner, json: ["shop": String(repeating: "L", count: 101)])
        #expect(long.status == 400)
        #expect(
            try await harness.call("PUT", "/v1/lists/\(plain)/shopping", token: owner, json: ["shop": "Lidl"]).status
                == 200)
    }

    @Test func anEncryptedListsInviteCarriesItsTitleSealed() async throws {
        let harness = try Harness()
        let owner = try await harness.signUp("olga")
        let bob = try await harness.signUp("bob")
        let list = ListID.random()
        _ = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": list.description, "encrypted": true])
        let clear = try await harness.call("POST", "/v1/lists/\(list)/invites", token: owner, json: ["title": "Ring"])
        #expect(clear.status == 400 && clear.error == "invalid_title")
        let title = Self.sealed(harness.operations(list, names: ["Family"]))[0].value.textValue!
        let invite = try await harness.call("POST", "/v1/lists/\(list)/invites", token: owner, json: ["title": title])
        #expect(invite.status == 201)
        let code = try #require(invite.json["code"] as? String)
        let preview = try await harness.call("POST", "/v1/invites/preview", token: bob, json: ["code": code])
        #expect(preview.json["title"] as? String == title)
        #expect(preview.json["encrypted"] as? Bool == true)
        let joined = try await harness.call("POST", "/v1/invites", token: bob, json: ["code": code])
        #expect(joined.status == 200 && joined.json["encrypted"] as? Bool == true)
    }

    @Test func aServerThatRequiresEncryptionRefusesPlainLists() async throws {
        let harness = try Harness { $0.requireEncryption = true }
        let owner = try await harness.signUp("olga")
        let plain = try await harness.call("POST", "/v1/lists", token: owner, json: ["id": ListID.random().description])
        #expect(plain.status == 403 && plain.error == "encryption_required")
        let explicit = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": ListID.random().description, "encrypted": false])
        #expect(explicit.status == 403)
        let encrypted = try await harness.call(
            "POST", "/v1/lists", token: owner, json: ["id": ListID.random().description, "encrypted": true])
        #expect(encrypted.status == 201)
        #expect((try await harness.call("GET", "/v1/lists", token: owner).json["lists"] as? [Any])?.count == 1)
    }

    @Test(arguments: Backend.available)
    func theFlagSurvivesADumpAndALoad(_ backend: Backend) throws {
        let source = try TestStore(backend)
        let store = try source.open()
        let account = try store.createAccount(name: "olga", passwordHash: "x").id
        let encrypted = ListID.random()
        let plain = ListID.random()
        _ = try store.createList(encrypted, owner: account, encrypted: true)
        _ = try store.createList(plain, owner: account)
        #expect(try store.access(of: account, in: encrypted)?.encrypted == true)
        #expect(try store.access(of: account, in: plain)?.encrypted == false)
        let dump = source.directory.file("dump.jsonl")
        _ = try store.export(to: dump)
        for target in Backend.available {
            let copy = try TestStore(target)
            let loaded = try copy.open()
            _ = try loaded.importDump(from: dump)
            let memberships = try loaded.memberships(of: account)
            #expect(memberships.first { $0.list == encrypted }?.encrypted == true, "\(backend) → \(target)")
            #expect(memberships.first { $0.list == plain }?.encrypted == false, "\(backend) → \(target)")
        }
    }
}
