import BasketCore
import Foundation
import TestServers
import TestSupport
import Testing

/// Managing a shared list through the CLI: members, roles, leaving, deleting; and what a device
/// does with changes the server refuses. Real `basket` processes against a real server.
@Suite(.serialized)
struct MembershipTests {
    let root = TemporaryDirectory("membership")

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    func names(_ device: Device) throws -> [String] { try device.listing().items.map(\.name).sorted() }

    /// Alice owns "Family"; Bob is an editor, Carol a viewer.
    func family(_ server: ServerProcess, _ tag: String, encrypted: Bool = true) throws -> (
        alice: Device, bob: Device, carol: Device
    ) {
        let alice = try Device.signedUp("alice\(tag)", on: server, in: root)
        let bob = try Device.signedUp("bob\(tag)", on: server, in: root)
        let carol = try Device.signedUp("carol\(tag)", on: server, in: root)
        if encrypted {
            try alice.ok("list", "new", "Family")
        } else {
            try alice.ok("list", "new", "Family", "--unencrypted")
        }
        try alice.ok("add", "Milk")
        try alice.share(with: bob)
        try alice.share(with: carol, role: "viewer")
        return (alice, bob, carol)
    }

    /// A member fills a shared list with junk: it holds at most half of what the list may hold,
    /// the owner keeps adding, then removes the member and every item it added since a time in
    /// one command, which `basket undo` takes back; another member sees the clean list.
    @Test func anOwnerRemovesAMemberAndTheJunkItAdded() throws {
        let server = try ServerProcess(dataDirectory: root.file("junk-server"), arguments: ["--max-items", "40"])
        let (alice, bob, carol) = try family(server, "j")
        try alice.ok("members", "role", "carolj", "editor")
        try carol.ok("sync")
        try carol.ok("--no-sync", "add", (0..<20).map { "junk \($0)" }.joined(separator: ", "))
        try carol.ok("sync")
        // Half of 40 items: the twenty-first is refused, and says why.
        try carol.ok("--no-sync", "add", "junk 20")
        let refused = try carol.run("sync")
        #expect(refused.status == 1 && refused.stderr.contains("member_share_full"), "\(refused.stderr)")
        try alice.ok("add", "Bread")
        try alice.ok("sync")
        #expect(try names(alice).count == 22)
        let removed = try alice.ok("members", "rm", "carolj", "--remove-their-items-since", "-1h", "--yes")
        #expect(removed.contains("and the 20 items they added"), "\(removed)")
        #expect(try names(alice) == ["Bread", "Milk"])
        try bob.ok("sync")
        #expect(try names(bob) == ["Bread", "Milk"])
        try alice.ok("undo")
        #expect(try names(alice).count == 22)
    }

    @Test func membersAreListedAndAnOwnerChangesRolesAndRemovesMembers() throws {
        let server = try ServerProcess(dataDirectory: root.file("members-server"))
        let (alice, bob, carol) = try family(server, "m")
        let listed = try alice.ok("members")
        #expect(listed.contains("Family: 3 members"))
        #expect(listed.contains("alicem") && listed.contains("owner  (you)"))
        let rows = try #require(
            (try json(try bob.ok("members", "--json")) as? [String: Any])?["members"] as? [[String: Any]])
        #expect(
            rows.map { "\($0["account"] as? String ?? ""):\($0["role"] as? String ?? "")" }.sorted() == [
                "alicem:owner", "bobm:editor", "carolm:viewer",
            ])
        #expect(rows.filter { $0["you"] as? Bool == true }.map { $0["account"] as? String } == ["bobm"])

        // Only an owner changes roles or removes members; the server's refusal is shown.
        let notOwner = try bob.run("members", "role", "carolm", "editor")
        #expect(notOwner.status == 1 && notOwner.stderr.contains("only an owner can change roles"))
        #expect(try carol.run("add", "Cake").status == 1)
        #expect(try alice.ok("members", "role", "carolm", "editor").contains("carolm is now an editor of Family"))
        try carol.ok("sync")  // her device learns the new role
        try carol.ok("add", "Cake")
        try alice.ok("sync")
        #expect(try names(alice) == ["Cake", "Milk"])
        let lastOwner = try alice.run("members", "role", "alicem", "editor")
        #expect(lastOwner.status == 1 && lastOwner.stderr.contains("last owner"), "\(lastOwner.stderr)")
        let bad = try alice.run("members", "role", "carolm", "boss")
        #expect(bad.status == 64 && bad.stderr.contains("a role is owner, editor or viewer"))

        #expect(try alice.ok("members", "rm", "bobm").contains("Removed bobm from Family"))
        let told = try bob.run("sync")
        #expect(told.status == 0 && told.stderr.contains("You are no longer a member of Family on the server"))
        let write = try bob.run("add", "Jam")
        #expect(write.status == 1 && write.stderr.contains("no longer shared with you"), "\(write.stderr)")
        #expect(try names(bob) == ["Milk"])  // the copy stays as he last synced it, read-only
        #expect(try bob.ok("list", "rm", "Family").contains("Removed Family from this device"))
        #expect(!(try bob.ok("lists")).contains("Family"))
    }

    @Test func aMemberLeavesAndTheLastOwnerCannot() throws {
        let server = try ServerProcess(dataDirectory: root.file("leave-server"))
        let (alice, bob, _) = try family(server, "l")
        try bob.ok("--no-sync", "add", "Bread")
        let left = try bob.ok("leave")
        #expect(left.contains("Left Family") && left.contains("read-only"))
        try alice.ok("sync")
        #expect(try names(alice) == ["Bread", "Milk"])  // what waited went first
        #expect(try alice.ok("members").contains("2 members"))
        let owner = try alice.run("leave")
        #expect(owner.status == 1 && owner.stderr.contains("last owner"), "\(owner.stderr)")
        #expect(try bob.run("check", "milk").status == 1)
    }

    /// Attack: an owner makes an owner invite, is demoted to editor, and redeems its own invite
    /// to become owner again and remove the original owner. The invite went with the demotion,
    /// and no invite changes a member's role: the demoted owner stays an editor.
    @Test func aDemotedOwnerCannotTakeTheListBackWithAnInvite() throws {
        let server = try ServerProcess(dataDirectory: root.file("demoted-server"))
        let (alice, bob, carol) = try family(server, "d")
        try alice.ok("members", "role", "bobd", "owner")
        try bob.ok("sync")
        let made = try json(try bob.ok("share", "--role", "owner", "--uses", "5", "--json")) as? [String: Any]
        let ownerCode = try #require(made?["code"] as? String)
        let editorCode = try #require(
            (try json(try bob.ok("share", "--role", "editor", "--json")) as? [String: Any])?["code"] as? String)
        try alice.ok("members", "role", "bobd", "editor")
        // The owner invite is withdrawn with the demotion; the editor invite stays (an editor may make it).
        let back = try bob.run("join", ownerCode)
        #expect(back.status != 0 && back.stderr.contains("no such invite"), "\(back.stderr)")
        // An invite Alice made, redeemed by a member, changes no role either.
        let aliceCode = try #require(
            (try json(try alice.ok("share", "--role", "owner", "--json")) as? [String: Any])?["code"] as? String)
        _ = try bob.run("join", aliceCode)
        try bob.ok("sync")
        func roles() throws -> [String] {
            let rows =
                (try json(try alice.ok("members", "--json")) as? [String: Any])?["members"] as? [[String: Any]] ?? []
            return rows.map { "\($0["account"] as? String ?? ""):\($0["role"] as? String ?? "")" }.sorted()
        }
        #expect(try roles() == ["aliced:owner", "bobd:editor", "carold:viewer"])
        let coup = try bob.run("members", "rm", "aliced")
        #expect(coup.status == 1 && coup.stderr.contains("only an owner"), "\(coup.stderr)")
        #expect(try roles() == ["aliced:owner", "bobd:editor", "carold:viewer"])
        // Alice's unused owner invite still works for whom it was meant.
        let dave = try Device.signedUp("daved", on: server, in: root)
        try dave.ok("join", aliceCode)
        #expect(try roles() == ["aliced:owner", "bobd:editor", "carold:viewer", "daved:owner"])
        // Bob's editor invite stays usable after the demotion; removed, he loses it.
        try alice.ok("members", "rm", "bobd")
        let erin = try Device.signedUp("erind", on: server, in: root)
        #expect(try erin.run("join", editorCode).status != 0)
        _ = carol
    }

    /// The last member leaving takes the list off the server: a list nobody can reach is not kept
    /// (nor counted against nothing, as a way around the list quota).
    @Test func theLastMemberLeavingDeletesTheList() throws {
        let server = try ServerProcess(dataDirectory: root.file("last-server"))
        let alice = try Device.signedUp("alicez", on: server, in: root)
        try alice.ok("list", "new", "Solo")
        try alice.ok("add", "Milk")
        let id = try #require(try alice.listing().list?.id)
        let token = try alice.token()
        try alice.ok("leave")
        let answer = try RawHTTP.request(
            port: server.port, "GET", "/v1/lists/\(id)/members", headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 404)
        let metrics = try RawHTTP.request(port: server.port, "GET", "/metrics")
        let lists = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("basket_lists ") }?.split(separator: " ").last.flatMap { Double($0) }
        #expect(lists == 0)
    }

    /// Attack: Mallory, an editor, reads another member's unsent write (its replica id and
    /// timestamp) and pushes that identity first with another value. The server used to take the
    /// victim's push for a duplicate: the victim's device said synced and showed its value, every
    /// other device showed Mallory's. Now a replica id belongs to the first account that pushes it
    /// to a list, and an identity is bound to its value:
    /// - Alice has pushed to the list before: Mallory's forgery is refused (409 replica_taken);
    /// - Dave never has: Mallory's forgery takes Dave's replica id, Dave's push is refused, his
    ///   device takes a new replica id, stamps his write anew and sends it again, and says so.
    /// Either way the victim's write stands on every replica.
    @Test func aMemberCannotEraseAnotherMembersWriteByPushingItsIdentityFirst() throws {
        let server = try ServerProcess(dataDirectory: root.file("squat-server"))
        // Plain: Mallory forges values in clear (an encrypted list takes sealed values only).
        let (alice, bob, _) = try family(server, "s", encrypted: false)
        let mallory = try Device.signedUp("mallorys", on: server, in: root)
        let dave = try Device.signedUp("daves", on: server, in: root)
        try alice.share(with: mallory)
        try alice.share(with: dave)
        try bob.ok("sync")
        /// Mallory pushes `victim`'s last unsent write of `field` with `value` instead.
        func forge(_ victim: Device, _ field: Field, _ value: Value) throws -> (RawHTTP.Answer, Op) {
            let ops = try OperationCodec.decodeFile(Array(try victim.exported().utf8)).operations
            let real = try #require(ops.last { $0.field == field })
            var forged = real
            forged.value = value
            let answer = try RawHTTP.request(
                port: server.port, "POST", "/v1/lists/\(real.list)/ops",
                headers: ["Authorization": "Bearer \(try mallory.token())"],
                json: ["ops": String(decoding: OperationCodec.encode([forged]), as: UTF8.self)])
            return (answer, real)
        }
        try alice.ok("--no-sync", "check", "milk")
        let (refused, _) = try forge(alice, .checked, .bool(false))
        #expect(refused.status == 409 && refused.error == "replica_taken", "\(refused.status) \(refused.error ?? "")")
        try alice.ok("sync")

        try dave.ok("--no-sync", "add", "Jam")
        let (squatted, real) = try forge(dave, .name, .text("Mallory was here"))
        #expect(squatted.status == 200)
        let synced = try dave.ok("sync")
        #expect(synced.contains("stamped them anew"), "\(synced)")
        for device in [alice, bob, dave, mallory] {
            try device.ok("sync")
            let items = try device.listing().items
            #expect(items.first { $0.name == "Milk" }?.checked == true)
            #expect(items.contains { $0.name == "Jam" } && !items.contains { $0.name == "Mallory was here" })
        }
        // Dave's real operation under his old id is now refused to anyone but Mallory: nobody can
        // write as Dave's device on this list but Dave's device, under its new id.
        let replay = try RawHTTP.request(
            port: server.port, "POST", "/v1/lists/\(real.list)/ops",
            headers: ["Authorization": "Bearer \(try dave.token())"],
            json: ["ops": String(decoding: OperationCodec.encode([real]), as: UTF8.self)])
        #expect(replay.status == 409)
    }

    @Test func anOwnerDeletesTheListAndTheOthersAreToldAndKeepACopy() throws {
        let server = try ServerProcess(dataDirectory: root.file("delete-server"))
        let (alice, bob, carol) = try family(server, "d")
        let refused = try bob.run("list", "rm", "Family")
        #expect(refused.status == 1 && refused.stderr.contains("only an owner can delete Family"), "\(refused.stderr)")
        #expect(try alice.ok("list", "rm", "Family").contains("Deleted Family for everyone"))
        #expect(!(try alice.ok("lists").contains("Family")))
        let told = try carol.run("sync")
        #expect(told.status == 0)
        #expect(told.stderr.contains("You are no longer a member of Family on the server"), "\(told.stderr)")
        #expect(told.stderr.contains("'basket list rm Family' removes it"))
        #expect(try names(carol) == ["Milk"])
        try bob.ok("sync")
        #expect(try bob.ok("list", "rm", "Family").contains("Removed Family from this device"))
        let gone = try RawHTTP.request(
            port: server.port, "GET", "/v1/lists/\(try #require(try carol.listing().list?.id))/ops",
            headers: ["Authorization": "Bearer \(try carol.token())"])
        #expect(gone.status == 404)
    }

    /// Bob is made a viewer while he adds offline: `status` lists what the server refused, and
    /// `sync --discard-refused` puts his copy back to the server's, the same as Alice's.
    @Test func refusedChangesAreListedAndDiscardedOnRequest() throws {
        let server = try ServerProcess(dataDirectory: root.file("refused-server"))
        let (alice, bob, _) = try family(server, "r")
        try bob.ok("--no-sync", "add", "2 Chocolate")
        try bob.ok("--no-sync", "check", "milk")
        try alice.ok("members", "role", "bobr", "viewer")
        // Refused changes still here make the sync fail for a script (exit 1).
        let refusedSync = try bob.run("sync")
        #expect(refusedSync.status == 1)
        let sync = refusedSync.stdout
        // Two changes (Chocolate added, Milk checked), however many writes they made.
        #expect(sync.contains("2 changes to this list were not sent: you can only view it"), "\(sync)")
        // Writing to another list sends that one and says nothing of the refused ones.
        try bob.ok("list", "new", "Socks drawer")
        let own = try bob.run("add", "Socks")
        #expect(own.status == 0 && !own.stderr.contains("Saved here"), "\(own.stderr)")
        try bob.ok("list", "use", "Family")
        let status = try bob.ok("status")
        #expect(status.contains("Family: 2 changes the server will not take (you can only view it):"), "\(status)")
        #expect(status.contains("Chocolate: added, quantity '2', category 'Snacks & sweets'"), "\(status)")
        #expect(status.contains("Milk: checked"), "\(status)")
        #expect(status.contains("basket sync --discard-refused"))
        let refusedJSON = try #require(
            (try json(try bob.ok("status", "--json")) as? [String: Any])?["lists"] as? [[String: Any]])
        let family = refusedJSON.first { $0["title"] as? String == "Family" }
        #expect(
            family?["refused"] as? [String] == [
                "Chocolate: added, quantity '2', category 'Snacks & sweets'", "Milk: checked",
            ])
        #expect(family?["role"] as? String == "viewer")
        #expect(refusedJSON.first { $0["title"] as? String == "Socks drawer" }?["pending"] as? Int == 0)

        let discarded = try bob.ok("sync", "--discard-refused")
        #expect(discarded.contains("Dropped 2 changes to Family that the server refused:"), "\(discarded)")
        #expect((try json(try bob.ok("status", "--json")) as? [String: Any])?["pending"] as? Int == 0)
        try alice.ok("sync")
        #expect(try bob.ok("export", "--list", "Family", "-") == alice.exported())
        #expect(try bob.listing().items.map { "\($0.name) \($0.checked)" } == ["Milk false"])
    }
}
