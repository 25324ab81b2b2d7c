import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// Changes leave at once: write commands send before they exit, the interactive mode sends each
/// change as it is made and flushes when it closes, `sync --watch` sends what other processes
/// write. Real `basket` processes (and a real terminal under tmux) against a real server.
@Suite(.serialized)
struct AutoSyncTests {
    let root = TemporaryDirectory("auto-sync")

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func pending(_ device: Device) throws -> Int {
        try json(try device.ok("status", "--json"))["pending"] as? Int ?? -1
    }

    func names(_ device: Device) throws -> [String] {
        try device.listing().items.map { "\($0.name)\($0.checked ? " ✓" : "")" }.sorted()
    }

    /// Alice and Bob share "Family", synced.
    func family(_ server: ServerProcess, _ tag: String) throws -> (alice: Device, bob: Device) {
        let alice = try Device.signedUp("alice-\(tag)", on: server, in: root)
        let bob = try Device.signedUp("bob-\(tag)", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk")
        try alice.share(with: bob)
        #expect(try names(bob) == ["Milk"])
        return (alice, bob)
    }

    /// `basket sync --watch` on `device`, once it says it is watching (stop it with SIGTERM).
    func watcher(_ device: Device) throws -> Subprocess {
        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", device.directory, "sync", "--watch"], stderr: .discard)
        let deadline = Date().addingTimeInterval(20)
        while !watcher.stdout.contains("Watching") && Date() < deadline { usleep(10_000) }
        #expect(watcher.stdout.contains("Watching"), "the watcher did not start: \(watcher.stdout)")
        return watcher
    }

    func stop(_ watcher: Subprocess) {
        watcher.signal(SIGTERM)
        if watcher.wait(timeout: 5) == nil { watcher.kill() }
    }

    @Test func aWriteCommandSendsItsChangesUnlessToldNotTo() throws {
        let server = try ServerProcess(dataDirectory: root.file("send-server"))
        let (alice, bob) = try family(server, "send")
        #expect(try pending(alice) == 0)

        try alice.ok("check", "milk")  // no `basket sync` on Alice's side
        #expect(try pending(alice) == 0)
        #expect(try bob.ok("sync").contains("received 1"))
        #expect(try names(bob) == ["Milk ✓"])

        try alice.ok("--no-sync", "add", "Tea")
        #expect(try pending(alice) == 4)  // name, checked, deleted, and the catalogue's aisle (Drinks)
        #expect(try alice.ok("remote", "set", "--auto-sync", "off").contains("Auto-sync off"))
        #expect(try json(try alice.ok("remote", "--json"))["autoSync"] as? Bool == false)
        try alice.ok("add", "Jam")
        #expect(try pending(alice) == 8)
        #expect(try bob.ok("sync").contains("received 0"))
        #expect(try names(bob) == ["Milk ✓"])

        try alice.ok("remote", "set", "--auto-sync", "on")
        try alice.ok("add", "Cake")  // sends everything waiting, not only its own
        #expect(try pending(alice) == 0)
        try bob.ok("sync")
        #expect(try names(bob) == ["Cake", "Jam", "Milk ✓", "Tea"])

        let bad = try alice.run("remote", "set", "--auto-sync", "sometimes")
        #expect(bad.status == 64 && bad.stderr.contains("--auto-sync is on or off"))
        #expect(try json(try alice.ok("remote", "--json"))["autoSync"] as? Bool == true)
    }

    @Test func aWriteWithTheServerDownIsSavedHereAndSaysSo() throws {
        let server = try ServerProcess(dataDirectory: root.file("down-server"))
        let (alice, bob) = try family(server, "down")
        #expect(server.stop() == 0)
        let added = try alice.run("add", "Eggs")
        #expect(added.status == 0 && added.stdout.contains("Added Eggs"))
        #expect(
            added.stderr.contains("Saved here; 1 change waiting for the server (cannot reach the server"),
            "\(added.stderr)")
        #expect(try pending(alice) == 4)  // four writes (the catalogue gave Eggs its aisle): one change
        #expect(try json(try alice.ok("status", "--json"))["changes"] as? Int == 1)
        try server.start()
        try alice.ok("check", "eggs")  // the next write sends both
        #expect(try pending(alice) == 0)
        try bob.ok("sync")
        #expect(try names(bob) == ["Eggs ✓", "Milk"])
    }

    /// A server that accepts connections and never answers: the write still ends, after about
    /// 2 s, with its changes saved here.
    @Test func aServerThatNeverAnswersHoldsAWriteForAboutTwoSeconds() throws {
        let silent = try Subprocess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import socket, sys, time
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
                print(s.getsockname()[1], flush=True)
                time.sleep(120)
                """,
            ])
        defer { silent.kill() }
        var port: Int?
        for _ in 0..<200 where port == nil {
            port = Int(silent.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            if port == nil { usleep(50_000) }
        }
        let device = Device(root, "silent")
        try FileManager.default.createDirectory(atPath: device.directory, withIntermediateDirectories: true)
        let config = #"{"account": "alice", "server": "http://127.0.0.1:\#(try #require(port))", "token": "t0k3n"}"#
        try Data(config.utf8).write(to: URL(fileURLWithPath: device.directory + "/config.json"))
        let started = Date()
        let added = try device.run("add", "Milk")
        let took = Date().timeIntervalSince(started)
        #expect(added.status == 0)
        #expect(added.stderr.contains("Saved here; 2 changes waiting for the server"), "\(added.stderr)")
        #expect(added.stderr.contains("did not answer within 2 s"), "\(added.stderr)")
        #expect(took >= 2 && took < 30, "the write took \(took) s")
        #expect(try pending(device) == 6)  // the list's title and language, the item's three registers and its aisle
    }

    /// Bob watches; Alice's interactive screen adds Tea and Bob prints it without Alice running
    /// anything else; Alice adds Jam and leaves at once: Jam is on the server.
    @Test func theInteractiveModeSendsEachChangeAndFlushesWhenItCloses() throws {
        let server = try ServerProcess(dataDirectory: root.file("interactive-server"))
        let (alice, bob) = try family(server, "interactive")
        let watcher = try watcher(bob)
        defer { stop(watcher) }
        #expect(try server.waitForMetric("basket_watchers", atLeast: 1), "bob's long-poll never parked")
        // The baseline of this run: one `basket sync` process, start to exit.
        let syncStart = Date()
        try alice.ok("sync")
        let oneSync = Date().timeIntervalSince(syncStart)

        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(alice.directory)", environment: ["NO_COLOR": "1"])
        pane.wait("alice's screen, synced") { $0.contains("[ ] Milk") && $0.contains("synced") }
        try pane.type("Tea")
        try pane.send("Enter")
        pane.wait("Tea added") { $0.contains("Added Tea") }
        let added = Date()
        while !watcher.stdout.contains("+ Tea") && Date().timeIntervalSince(added) < 10 { usleep(5_000) }
        let latency = Date().timeIntervalSince(added)
        #expect(watcher.stdout.contains("+ Tea"), "bob's watcher printed: \(watcher.stdout)")
        #expect(
            latency < max(2.0, 2 * oneSync),
            "Tea took \(latency) s to reach bob's watcher (one sync process: \(oneSync) s)")
        let screen = pane.wait("the status line back at synced") { $0.contains("synced") && $0.contains("[ ] Tea") }
        let status = screen.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
        #expect(status.hasSuffix("synced"), "the last line: \(status)")

        try pane.type("Jam")
        try pane.send("Enter")
        try pane.send("Escape")
        let closed = Date().addingTimeInterval(10)
        while pane.isAlive && Date() < closed { usleep(20_000) }
        #expect(!pane.isAlive, "the screen did not close")
        #expect(try pending(alice) == 0)
        let other = Device(root, "alice-interactive-2")
        try other.ok("remote", "set", server.url)
        try other.ok("login", "alice-interactive", "--password-stdin", stdin: "alice-interactive-password\n")
        try other.ok("sync")
        #expect(try names(other) == ["Jam", "Milk", "Tea"])
    }

    /// The status line says offline with what is waiting when the server goes away.
    @Test func theInteractiveStatusLineSaysOfflineAndWhatWaits() throws {
        let server = try ServerProcess(dataDirectory: root.file("offline-server"))
        let (alice, _) = try family(server, "offline")
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(alice.directory)", environment: ["NO_COLOR": "1"])
        pane.wait("synced") { $0.contains("[ ] Milk") && $0.contains("synced") }
        #expect(server.stop() == 0)
        try pane.type("Eggs")
        try pane.send("Enter")
        pane.wait("offline with Eggs waiting") { $0.contains("can't reach the server · 1 change waiting") }
        try server.start()
        pane.wait("synced again") { $0.contains("synced") && !$0.contains("waiting") }
        try pane.send("Escape")
        #expect(try pending(alice) == 0)
    }

    /// `sync --watch` keeps what another process wrote to the same replica with --no-sync (issue
    /// 29: it used to send it within a second), and sends it after an explicit `basket sync`
    /// lets it go, with what that process writes after.
    @Test func aWatcherKeepsWhatAnotherProcessWroteWithNoSync() throws {
        let server = try ServerProcess(dataDirectory: root.file("watch-server"))
        let (alice, bob) = try family(server, "watch")
        let watcher = try watcher(bob)
        defer { stop(watcher) }
        try bob.ok("--no-sync", "add", "Cheese")
        Thread.sleep(forTimeInterval: 2)
        try alice.ok("sync")
        #expect(try names(alice) == ["Milk"])
        #expect(try pending(bob) > 0)
        try bob.ok("sync")
        try bob.ok("--no-sync", "add", "Bread")
        try bob.ok("sync")
        var received: [String] = []
        let until = Date().addingTimeInterval(15)
        while !received.contains("Bread") && Date() < until {
            usleep(200_000)
            try alice.ok("sync")
            received = try names(alice)
        }
        #expect(received == ["Bread", "Cheese", "Milk"])
        #expect(try pending(bob) == 0)
    }
}
