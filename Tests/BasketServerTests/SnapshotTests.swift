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
