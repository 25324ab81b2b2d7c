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
}
