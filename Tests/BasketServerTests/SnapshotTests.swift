import BasketCore
import BasketServer
import Foundation
import Testing

/// Snapshots of encrypted lists on both stores (docs/api.md, "Snapshots"): who may leave and read
/// one, what the server checks of it without a key, and that the newest stays.
struct SnapshotTests {
    /// A stand-in snapshot under key epoch `epoch` (the server checks its form only).
    static func snapshot(epoch: Int64, fill: UInt8 = 7, bytes: Int = 4_096) -> String {
        "n1.\(epoch)." + Base64URL.encode([UInt8](repeating: fill, count: bytes + 28))
    }

    @Test(arguments: Backend.available)
    func anOwnersSnapshotIsKeptForMembersAndChecked(_ backend: Backend) async throws {
        let family = try await KeyRotationTests.Family(
            try Harness(backend: backend), owners: ["olga"], editors: ["bob"], viewers: ["dave"])
        let harness = family.harness
        let list = family.list
        func put(_ name: String, _ body: [String: Any]) async throws -> Harness.Answer {
            try await harness.call("PUT", "/v1/lists/\(list)/snapshot", token: family.tokens[name]!, json: body)
        }
        func get(_ name: String) async throws -> Harness.Answer {
            try await harness.call("GET", "/v1/lists/\(list)/snapshot", token: family.tokens[name]!)
        }
        #expect(try await get("dave").status == 204)  // none yet
        for n in 0..<3 { #expect(try await family.push("bob", "Item \(n)", epoch: 0).status == 200) }
        let first = Self.snapshot(epoch: 0)
        // Only an owner; within the log (an operation a push); under the newest epoch; in its form.
        #expect(try await put("bob", ["cursor": 3, "snapshot": first]).error == "owner_only")
        let beyond = try await put("olga", ["cursor": 100, "snapshot": first])
        #expect(beyond.status == 400 && beyond.error == "invalid_parameter")
        #expect(try await put("olga", ["cursor": 3, "snapshot": Self.snapshot(epoch: 1)]).error == "stale_key")
        for bad in ["s1.0.AAAA", "n1.0.AA", "n1.00." + first.dropFirst(5), String(first.dropLast()) + "*"] {
            #expect(try await put("olga", ["cursor": 3, "snapshot": bad]).error == "invalid_snapshot", "\(bad)")
        }
        let tooLong = "n1.0." + String(repeating: "A", count: Sealed.maxSnapshotBytes)
        #expect([400, 413].contains(try await put("olga", ["cursor": 3, "snapshot": tooLong]).status))
        // A snapshot holds part of the log: one much larger than the log (three operations) is
        // garbage that would cost the server more than the list's quota allows.
        let bloated = try await put("olga", ["cursor": 3, "snapshot": Self.snapshot(epoch: 0, bytes: 200_000)])
        #expect(bloated.status == 400 && bloated.error == "invalid_snapshot", "\(bloated.json)")
        #expect(try await get("dave").status == 204, "nothing refused was kept")

        #expect(try await put("olga", ["cursor": 2, "snapshot": first]).status == 204)
        let kept = try await get("dave")
        #expect(kept.status == 200)
        #expect(kept.json["cursor"] as? Int == 2 && kept.json["snapshot"] as? String == first)
        #expect((kept.json["epoch"] as? String)?.isEmpty == false && (kept.json["made"] as? Int ?? 0) > 0)
        // An older one changes nothing; a newer one replaces it.
        #expect(try await put("olga", ["cursor": 1, "snapshot": Self.snapshot(epoch: 0, fill: 8)]).status == 204)
        #expect(try await get("bob").json["cursor"] as? Int == 2)
        let newer = Self.snapshot(epoch: 0, fill: 9)
        #expect(try await put("olga", ["cursor": 3, "snapshot": newer]).status == 204)
        #expect(try await get("bob").json["snapshot"] as? String == newer)
        // A stranger learns nothing, not even that there is one.
        let stranger = try await harness.signUp("eve")
        #expect(try await harness.call("GET", "/v1/lists/\(list)/snapshot", token: stranger).status == 404)
        // After a removal a snapshot waits for the rotation, then takes the new epoch only.
        #expect(try await family.remove("dave", by: "olga") == 204)
        #expect(try await put("olga", ["cursor": 3, "snapshot": Self.snapshot(epoch: 0)]).error == "rotation_required")
        #expect(try await family.rotate("olga", to: 1, for: ["olga", "bob"]).status == 204)
        #expect(try await put("olga", ["cursor": 3, "snapshot": Self.snapshot(epoch: 0)]).error == "stale_key")
        #expect(try await family.push("bob", "Item 9", epoch: 1).status == 200)
        #expect(try await put("olga", ["cursor": 4, "snapshot": Self.snapshot(epoch: 1)]).status == 204)
        // A plain list has none to keep.
        let plain = try await harness.newList(family.tokens["olga"]!)
        let refused = try await harness.call(
            "PUT", "/v1/lists/\(plain)/snapshot", token: family.tokens["olga"]!,
            json: ["cursor": 0, "snapshot": Self.snapshot(epoch: 0)])
        #expect(refused.error == "not_encrypted")
        // Deleting the list takes its snapshot along.
        #expect(try await harness.call("DELETE", "/v1/lists/\(list)", token: family.tokens["olga"]!).status == 204)
        #expect(try await get("olga").status == 404)
    }
}

/// Converting a plain list on both stores (docs/encryption.md, "Converting a plain list"): who may,
/// what the server checks, and that afterwards the plain log is gone, every device learns it from
/// a new epoch, and only sealed pushes are taken.
struct ConversionTests {
    @Test(arguments: Backend.available)
    func anOwnerConvertsAPlainListAndItsPlainLogGoes(_ backend: Backend) async throws {
        let harness = try Harness(backend: backend)
        var tokens = try await KeyRotationTests.Family.accounts(["olga", "bob"], on: harness)
        tokens["carl"] = try await harness.signUp("carl")  // no key pair yet
        let list = try await harness.newList(tokens["olga"]!)
        try await harness.join(list, owner: tokens["olga"]!, member: tokens["bob"]!, role: "editor")
        try await harness.join(list, owner: tokens["olga"]!, member: tokens["carl"]!, role: "viewer")
        let plain = harness.operations(list, names: ["Engagement ring"], replica: Harness.replica("bob"))
        #expect(try await harness.push(plain, to: list, token: tokens["bob"]!).status == 200)
        let before = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: tokens["olga"]!)
        let cursor = before.json["cursor"] as? Int ?? -1
        let epochBefore = before.json["epoch"] as? String
        #expect(cursor == plain.count)
        let invite = try await harness.call("POST", "/v1/lists/\(list)/invites", token: tokens["olga"]!, json: [:])
        #expect(invite.status == 201)

        let envelope = KeyRotationTests.envelope(epoch: 0)
        func convert(_ name: String, cursor: Int, epoch: Int64 = 0, to recipients: [String]) async throws
            -> Harness.Answer
        {
            try await harness.call(
                "POST", "/v1/lists/\(list)/encryption", token: tokens[name]!,
                json: [
                    "cursor": cursor, "snapshot": SnapshotTests.snapshot(epoch: epoch, bytes: 64),
                    "envelopes": recipients.map { ["account": $0, "envelope": envelope] },
                ])
        }
        // An owner only; at the end of the log; under epoch 0; everyone reached; everyone with keys.
        #expect(try await convert("bob", cursor: cursor, to: ["olga", "bob"]).error == "owner_only")
        let moved = try await convert("olga", cursor: cursor - 1, to: ["olga", "bob"])
        #expect(moved.status == 409 && moved.error == "log_moved", "\(moved.json)")
        #expect(try await convert("olga", cursor: cursor, epoch: 1, to: ["olga", "bob"]).error == "stale_key")
        let keyless = try await convert("olga", cursor: cursor, to: ["olga", "bob"])
        #expect(keyless.status == 409 && keyless.error == "member_without_keys", "\(keyless.json)")
        #expect((keyless.json["message"] as? String)?.contains("carl") == true)
        #expect(
            try await harness.call("DELETE", "/v1/lists/\(list)/members/carl", token: tokens["olga"]!).status == 204)
        #expect(try await convert("olga", cursor: cursor, to: ["olga"]).error == "stale_key", "bob left out")
        #expect(try await convert("olga", cursor: cursor, to: ["olga", "bob", "eve"]).error == "owner_only")
        let stranger = try await harness.signUp("eve")
        #expect(
            try await harness.call(
                "POST", "/v1/lists/\(list)/encryption", token: stranger,
                json: ["cursor": cursor, "snapshot": SnapshotTests.snapshot(epoch: 0), "envelopes": []]
            ).status == 404)
        // Nothing refused changed the list.
        let still = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: tokens["olga"]!)
        #expect(still.json["epoch"] as? String == epochBefore && still.json["count"] as? Int == plain.count)

        let done = try await convert("olga", cursor: cursor, to: ["olga", "bob"])
        #expect(done.status == 200, "\(done.json)")
        let epoch = try #require(done.json["epoch"] as? String)
        #expect(epoch != epochBefore)
        // Every device learns it from the epoch; the plain log is gone, the snapshot stands in.
        let after = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: tokens["bob"]!)
        #expect(after.json["epoch"] as? String == epoch && after.json["count"] as? Int == 0)
        #expect(after.json["historyComplete"] as? Bool == false)
        let kept = try await harness.call("GET", "/v1/lists/\(list)/snapshot", token: tokens["bob"]!)
        #expect(kept.json["cursor"] as? Int == cursor && kept.json["epoch"] as? String == epoch)
        let left = try await harness.call("GET", "/v1/lists/\(list)/envelope", token: tokens["bob"]!)
        #expect(left.json["envelope"] as? String == envelope)
        let lists = try await harness.call("GET", "/v1/lists", token: tokens["bob"]!)
        let entry = (lists.json["lists"] as? [[String: Any]])?.first { $0["id"] as? String == list.description }
        #expect(entry?["encrypted"] as? Bool == true)
        // A plain push is refused with what to do; a sealed one is taken; a second conversion is not.
        let late = harness.operations(list, names: ["Milk"], replica: Harness.replica("bob"))
        let refused = try await harness.push(late, to: list, token: tokens["bob"]!)
        #expect(refused.status == 409 && refused.error == "list_encrypted", "\(refused.json)")
        let sealed = try await harness.push(EncryptedListTests.sealed(late, epoch: 0), to: list, token: tokens["bob"]!)
        #expect(sealed.status == 200 && sealed.json["epoch"] as? String == epoch, "\(sealed.json)")
        #expect(try await convert("olga", cursor: cursor + 1, to: ["olga", "bob"]).error == "list_encrypted")
        // The invite made before (its code carries no key) is withdrawn.
        let invites = try await harness.call("GET", "/v1/lists/\(list)/invites", token: tokens["olga"]!)
        #expect((invites.json["invites"] as? [Any])?.isEmpty == true, "\(invites.json)")
    }
}
