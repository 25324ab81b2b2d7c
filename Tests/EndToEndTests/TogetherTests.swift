import BasketCore
import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// Together in the shop, in the terminal: "I'm going shopping" told live to another member's
/// `basket sync --watch`, shown by `ls`, `status` and `shopping`, and "done" with what was bought.
/// Real `basket` processes against a real server (two instances on PostgreSQL in that pass, so
/// the status crosses instances).
@Suite(.serialized)
struct TogetherTests {
    let root = TemporaryDirectory("together")

    func waitFor(_ text: String, in process: Subprocess, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if process.stdout.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    @Test func goingShoppingIsToldLiveAndDoneSaysWhatWasBought() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let olga = try Device.signedUp("olga", on: server, in: root)
        let anna = try Device.signedUp("anna", on: server, in: root)
        let vera = try Device.signedUp("vera", on: server, in: root)
        try olga.ok("list", "new", "Family")
        try olga.ok("add", "milk, bread, eggs")
        try olga.share(with: anna)
        try olga.share(with: vera, role: "viewer")
        try anna.ok("sync")
        #expect(try anna.ok("shopping").contains("Nobody is shopping for Family."))

        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", anna.directory, "sync", "--watch"], stderr: .discard)
        defer {
            watcher.signal(SIGTERM)
            if watcher.wait(timeout: 5) == nil { watcher.kill() }
        }
        #expect(waitFor("Watching Family", in: watcher), "\(watcher.stdout)")

        let started = try olga.ok("shopping", "start", "--at", "Lidl")
        #expect(started.contains("You're shopping for Family at Lidl: the others see it until "), "\(started)")
        #expect(waitFor("olga is shopping at Lidl", in: watcher), "the watch did not hear it: \(watcher.stdout)")
        let listed = try anna.ok("ls")
        #expect(listed.contains("olga is shopping at Lidl (since "), "\(listed)")
        #expect(try anna.ok("status").contains("    olga is shopping at Lidl (since "))
        #expect(try olga.ok("shopping").contains("You are shopping at Lidl"))
        // A viewer may look, not go.
        let refused = try vera.run("shopping", "start")
        #expect(refused.status != 0 && refused.stderr.contains("a viewer cannot go shopping"), "\(refused.stderr)")

        try olga.ok("check", "milk")
        try olga.ok("check", "bread")
        let done = try olga.ok("shopping", "done")
        #expect(done.contains("Done shopping for Family: you bought 2 items; the others are told."), "\(done)")
        #expect(waitFor("olga bought 2 items", in: watcher), "\(watcher.stdout)")
        let after = try anna.ok("shopping")
        #expect(after.contains("olga bought 2 items at Lidl (") && !after.contains("is shopping"), "\(after)")
        let json =
            try JSONSerialization.jsonObject(with: Data(try anna.ok("shopping", "--json").utf8)) as? [String: Any]
        let statuses = json?["shopping"] as? [[String: Any]]
        #expect(statuses?.first?["who"] as? String == "olga" && statuses?.first?["bought"] as? Int == 2)
        #expect(try olga.run("shopping", "later").status == 64)

        // A long-poll made after the change, saying when it last heard (never), hears it at once;
        // one that heard it waits as any does.
        let list = try #require(try anna.listing().list?.id)
        let auth = ["Authorization": "Bearer \(try anna.token())"]
        let cursor = try #require(
            (try RawHTTP.request(port: server.port, "GET", "/v1/lists/\(list)/ops", headers: auth).json["cursor"]
                as? Int))
        let caught = try RawHTTP.request(
            port: server.port, "GET", "/v1/lists/\(list)/ops?after=\(cursor)&wait=25&together=0", headers: auth)
        let told = try #require(caught.json["shopping"] as? [[String: Any]], "\(caught.json)")
        #expect(told.first?["who"] as? String == "olga" && told.first?["bought"] as? Int == 2)
        let heard = try #require(caught.json["together"] as? Int)
        let quiet = try RawHTTP.request(
            port: server.port, "GET", "/v1/lists/\(list)/ops?after=\(cursor)&wait=1&together=\(heard)", headers: auth)
        #expect(quiet.json["shopping"] == nil && quiet.json["count"] as? Int == 0)
    }

    /// What other devices did since the list was last shown here is marked, one line per person
    /// ("bob added 3 items"), and no longer once shown; a check of this device that a later
    /// uncheck of Bob's replaced is told once, by `sync`.
    @Test func newItemsAreMarkedWithWhoAddedThemAndALostCheckIsToldOnce() throws {
        let server = try ServerProcess(dataDirectory: root.file("news"))
        let anna = try Device.signedUp("anna", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try anna.ok("list", "new", "Family")
        try anna.ok("add", "milk")
        try anna.share(with: bob)
        try anna.ok("ls")  // shown: nothing new yet
        try bob.ok("add", "bread, eggs, butter")
        try anna.ok("sync")  // `ls` pulls too, unless it pulled a moment ago (as here)
        let listed = try anna.ok("ls")
        #expect(listed.contains("bob added 3 items"), "\(listed)")
        #expect(listed.contains("bread  · new: bob") && listed.contains("eggs  · new: bob"), "\(listed)")
        #expect(!listed.contains("milk  ·"), "\(listed)")
        // Shown once: the next look has nothing new.
        let again = try anna.ok("ls")
        #expect(!again.contains("added") && !again.contains("· new"), "\(again)")
        // Bob adds one more: named, not counted.
        try bob.ok("add", "jam")
        try anna.ok("sync")
        #expect(try anna.ok("ls").contains("bob added jam"))

        try anna.ok("check", "milk")
        try bob.ok("sync")
        try bob.ok("uncheck", "milk")
        let synced = try anna.ok("sync")
        #expect(synced.contains("bob unchecked milk after you checked it"), "\(synced)")
        #expect(!(try anna.ok("sync")).contains("after you"), "told twice")
        // Bob's own devices never hear of their own writes.
        #expect(!(try bob.ok("ls")).contains("· new"))
    }

    /// An add-only key for the kitchen speaker: it puts text in the list's inbox and nothing else
    /// (no reading, no other list), is rate-limited, revocable, and dies with its maker; the text
    /// is filed once, as items with the shared parser, even when two devices sync at once.
    @Test func anAddOnlyKeyOnlyAddsAndItsTextIsFiledOnce() throws {
        let server = try ServerProcess(dataDirectory: root.file("inbox"))
        let anna = try Device.signedUp("anna", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        let carol = try Device.signedUp("carol", on: server, in: root)
        try anna.ok("list", "new", "Work")
        let work = try #require(try anna.listing().list?.id)
        try anna.ok("list", "new", "Family")
        try anna.ok("add", "eggs")
        try anna.share(with: bob)
        try anna.share(with: carol)
        try bob.ok("sync")
        try carol.ok("sync")
        let list = try #require(try anna.listing().list?.id)
        let shown = try anna.ok("share", "--add-only", "--name", "Kitchen speaker")
        #expect(
            shown.contains("curl -X POST -H 'Authorization: Bearer bk_") && shown.contains("/v1/lists/\(list)/inbox"))
        let made =
            try JSONSerialization.jsonObject(
                with: Data(try anna.ok("share", "--add-only", "--name", "Hall shortcut", "--json").utf8))
            as? [String: Any]
        let key = try #require(made?["key"] as? String)
        let id = try #require(made?["id"] as? String)
        let speaker = ["Authorization": "Bearer \(key)"]
        func put(_ text: String, to target: String = list, with headers: [String: String] = speaker) throws
            -> RawHTTP.Answer
        {
            try RawHTTP.request(
                port: server.port, "POST", "/v1/lists/\(target)/inbox", headers: headers, json: ["text": text])
        }
        #expect(try put("2 milk, bread").status == 202)
        // It cannot read the list, nor reach another, nor pass for a token.
        #expect(try RawHTTP.request(port: server.port, "GET", "/v1/lists/\(list)/ops", headers: speaker).status == 401)
        #expect(
            try RawHTTP.request(port: server.port, "GET", "/v1/lists/\(list)/inbox", headers: speaker).status == 401)
        #expect(try put("jam", to: work).status == 404)
        #expect(try put("").status == 400)
        #expect(try put(String(repeating: "x", count: 1_100)).error == "too_long")

        // Bob and Carol sync at the same moment: one of them files it, once.
        let both = try [bob, carol].map { device in
            try Subprocess(Executables.path("basket"), ["--db", device.directory, "sync"], stderr: .discard)
        }
        let said = both.map { process -> String in
            _ = process.wait(timeout: 60)
            return process.stdout
        }
        #expect(said.filter { $0.contains("Filed from Hall shortcut: Added milk (2), bread") }.count == 1, "\(said)")
        try anna.ok("sync")
        let items = try anna.listing().items.filter { !$0.deleted }.map(\.name).sorted()
        #expect(items == ["bread", "eggs", "milk"], "\(items)")
        let milk = try JSONSerialization.jsonObject(with: Data(try anna.ok("ls", "--json").utf8)) as? [String: Any]
        let rows = milk?["items"] as? [[String: Any]] ?? []
        let filed = rows.first { $0["name"] as? String == "milk" }
        #expect(
            filed?["quantity"] as? String == "2" && filed?["note"] as? String == "added by Hall shortcut", "\(rows)")

        // Listed with the invites, and revocable.
        #expect(try anna.ok("invites").contains("add-only key \"Hall shortcut\", by anna"))
        #expect(try anna.ok("invites", "revoke", id).contains("Revoked the add-only key \"Hall shortcut\""))
        #expect(try put("tea").status == 401)

        // A key dies with its maker's membership; a viewer makes none.
        let bobsKey =
            try JSONSerialization.jsonObject(
                with: Data(try bob.ok("share", "--add-only", "--name", "Bob's watch", "--json").utf8)) as? [String: Any]
        let bobs = ["Authorization": "Bearer \(try #require(bobsKey?["key"] as? String))"]
        #expect(try put("tea", with: bobs).status == 202)
        try anna.ok("members", "rm", "bob", "--yes")
        #expect(try put("tea", with: bobs).status == 401)
        try anna.ok("members", "role", "carol", "viewer")
        try carol.ok("sync")
        #expect(try carol.run("share", "--add-only", "--name", "x").status != 0)

        // At most 20 texts a minute from one key on each instance.
        let flood =
            try JSONSerialization.jsonObject(
                with: Data(try anna.ok("share", "--add-only", "--name", "Flood", "--json").utf8)) as? [String: Any]
        let flooding = ["Authorization": "Bearer \(try #require(flood?["key"] as? String))"]
        let statuses = try (0..<(20 * server.instances + 1)).map { try put("item \($0)", with: flooding).status }
        #expect(statuses.prefix(20).allSatisfy { $0 == 202 } && statuses.last == 429, "\(statuses)")
        #expect(statuses.filter { $0 == 202 }.count == 20 * server.instances, "\(statuses)")
    }
}
