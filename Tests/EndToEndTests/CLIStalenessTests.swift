import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// What a terminal shows of how current it is: `ls` pulls a list not pulled for a few
/// seconds when the server answers at once, else says how old it is; `lists` says who may do
/// what; a revoked device says it is signed out.
struct CLIStalenessTests {
    let root = TemporaryDirectory("stale")

    @Test func lsPullsFirstOrSaysHowOldItIs() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bobby", on: server, in: root)
        try alice.ok("list", "new", "Weekly shop")
        try alice.ok("add", "Milk")
        try alice.share(with: bob)
        try alice.ok("list", "new", "Mine")
        try alice.ok("list", "use", "weekly")  // a word of the title is enough, as for items
        #expect(try alice.ok("lists").contains("* Weekly shop  (1 to buy, 1 items; owner, encrypted)"))
        #expect(try alice.ok("lists").contains("Mine  (0 to buy, 0 items; owner, encrypted)"))
        #expect(try bob.ok("lists").contains("Weekly shop  (1 to buy, 1 items; editor, encrypted)"))
        let local = Device(root, "local")
        try local.ok("add", "Soap")
        #expect(try local.ok("lists").contains("this device only"))
        #expect(try alice.run("list", "use", "e").stderr.contains("matches 2 lists"))

        try bob.ok("add", "Tea")
        // Alice pulled a moment ago: her list is shown as she has it, without a word of age.
        let recent = try alice.ok("ls")
        #expect(!recent.contains("Tea") && !recent.contains("As of"), "\(recent)")
        // Six seconds later by the command's clock (no sleep): a pull first.
        let later = ["BASKET_CLOCK_SKEW_MS": "6000"]
        let pulled = try alice.ok("ls", environment: later)
        #expect(pulled.contains("Tea") && !pulled.contains("As of"), "\(pulled)")
        // Status says when a write command's send last reached the server.
        let bobStatus = try bob.ok("status")
        #expect(bobStatus.contains("changes sent "), "\(bobStatus)")

        let noSync = try alice.ok("ls", "--no-sync", environment: later)
        #expect(noSync.contains("As of 6 s ago (--no-sync)") || noSync.contains("As of 7 s ago"), "\(noSync)")

        // The past and what changed since pull first too: Bob's Jam,
        // added after Alice's last pull, is in both.
        try bob.ok("add", "Jam")
        let then = try alice.ok("ls", "--at", "now", environment: later)
        #expect(then.contains("Jam") && !then.contains("As of"), "\(then)")
        try bob.ok("add", "Rice")
        let since = try alice.ok("changes", "--since", "-1h", environment: later)
        #expect(since.contains("added Rice") && since.contains("bobby"), "\(since)")

        _ = server.stop()
        let down = try alice.ok("ls", environment: later)
        #expect(down.contains("Tea"), "\(down)")
        // Why, as the transport says it: refused (one server), an empty reply (behind a proxy).
        #expect(down.contains("As of ") && down.contains(" s ago ("), "\(down)")
        // When it cannot pull, the past says how old this copy is, in words and in --json.
        let pastDown = try alice.ok("changes", "--since", "-1h", environment: later)
        #expect(pastDown.contains("As of ") && pastDown.contains(" s ago ("), "\(pastDown)")
        let json = try JSONSerialization.jsonObject(
            with: Data(try alice.ok("ls", "--at", "now", "--json", environment: later).utf8))
        let stale = try #require((json as? [String: Any])?["stale"] as? [String: Any], "\(json)")
        #expect((stale["lastSync"] as? String)?.hasSuffix("Z") == true && stale["why"] is String)
    }

    @Test func aRevokedDeviceSaysItIsSignedOut() throws {
        let server = try ServerProcess(dataDirectory: root.file("server-revoke"))
        let phone = try Device.signedUp("carla", on: server, in: root)
        let laptop = Device(root, "carla-laptop")
        try laptop.ok("remote", "set", server.url)
        try laptop.ok("login", "carla", "--password-stdin", stdin: "carla-password\n")
        try phone.ok("add", "Bread")
        let devices = try JSONSerialization.jsonObject(with: Data(try laptop.ok("devices", "--json").utf8))
        let other = try #require(
            ((devices as? [String: Any])?["devices"] as? [[String: Any]])?.first { $0["current"] as? Bool == false }?[
                "id"] as? String)
        try laptop.ok("devices", "revoke", other, "--yes")
        let refused = try phone.run("sync")
        #expect(refused.status == 1 && refused.stderr.contains("this device is signed out"))
        let status = try phone.ok("status")
        #expect(!status.contains("signed in as"), "\(status)")
        try laptop.ok("logout")
        #expect(!(try laptop.ok("status")).contains("signed in as"))
    }
}
