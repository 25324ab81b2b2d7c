import BasketCore
import BasketReplica
import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// The real `basket-server` binary on 127.0.0.1 with an ephemeral port and a temporary data
/// directory, and `basket` CLI processes as three users.
@Suite(.serialized)
struct SyncTests {
    let root = TemporaryDirectory("sync")

    func start() throws -> ServerProcess {
        try ServerProcess(dataDirectory: root.file("server"))
    }

    func user(_ name: String, _ server: ServerProcess) throws -> Device {
        let device = try Device.signedUp(name, on: server, in: root)
        // The token lives in config.json, readable by its owner only.
        let attributes = try FileManager.default.attributesOfItem(atPath: device.directory + "/config.json")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        return device
    }

    /// alice owns "Family"; bob joins as editor, carol as viewer.
    func family(_ server: ServerProcess) throws -> (alice: Device, bob: Device, carol: Device) {
        let alice = try user("alice", server)
        let bob = try user("bob", server)
        let carol = try user("carol", server)
        try alice.ok("list", "new", "Family")
        try alice.share(with: bob)
        try alice.share(with: carol, role: "viewer")
        #expect(try bob.listing().list?.title == "Family")
        #expect(try carol.listing().list?.title == "Family")
        return (alice, bob, carol)
    }

    @Test func bothAddingMilkOfflineEndsWithOneItemAfterSync() throws {
        let server = try start()
        let (alice, bob, carol) = try family(server)
        try alice.ok("add", "Milk")
        try bob.ok("add", "milk ")
        for device in [alice, bob, alice, carol] { try device.ok("sync") }
        for device in [alice, bob, carol] {
            let items = try device.listing().items
            #expect(items.count == 1 && items[0].name.lowercased() == "milk")
        }
        #expect(try alice.exported() == bob.exported())
    }

    @Test func concurrentCheckAndUncheckResolveToTheLaterWriteEverywhere() throws {
        let server = try start()
        let (alice, bob, carol) = try family(server)
        try alice.ok("add", "Milk, Bread")
        try alice.ok("sync")
        try bob.ok("sync")
        try bob.ok("check", "bread")
        try bob.ok("sync")
        try alice.ok("sync")
        // Offline: alice checks milk and unchecks bread; later bob unchecks milk and checks bread.
        try alice.ok("check", "milk")
        try alice.ok("uncheck", "bread")
        usleep(5_000)
        try bob.ok("uncheck", "milk")
        try bob.ok("check", "bread")
        for device in [bob, alice, bob, carol] { try device.ok("sync") }
        for device in [alice, bob, carol] {
            let state = Dictionary(uniqueKeysWithValues: try device.listing().items.map { ($0.name, $0.checked) })
            #expect(state == ["Milk": false, "Bread": true])
        }
    }

    @Test func aViewersWriteIsRefusedBeforeItIsMadeAndTheServerRefusesItsPush() throws {
        let server = try start()
        let (alice, _, carol) = try family(server)
        try alice.ok("add", "Milk")
        try alice.ok("sync")
        try carol.ok("sync")
        let before = try alice.exported()
        let carolBefore = try carol.exported()
        // Carol's device knows she is a viewer: the write is refused, with who can change that.
        let refused = try carol.run("check", "milk")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("you can only view Family (your role: viewer)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("An owner of the list can make you an editor"))
        #expect(try carol.exported() == carolBefore)
        #expect(try carol.ok("status", "--json").jsonObject["pending"] as? Int == 0)
        try alice.ok("sync")
        #expect(try alice.exported() == before)
        #expect(try alice.listing().items.map(\.checked) == [false])
        // The HTTP answer itself: 403 with a JSON error.
        let config =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: carol.directory + "/config.json"))) as! [String: Any]
        let token = config["token"] as! String
        let list = try carol.listing().list!.id
        let answer = try Executables.runShell(
            "curl -s -o /dev/stderr -w '%{http_code}' -X POST -H 'Authorization: Bearer \(token)' -d '{\"ops\":\"basket-ops 1\\n\"}' \(server.url)/v1/lists/\(list)/ops"
        )
        #expect(answer.stdout == "403" && answer.stderr.contains("\"error\":\"forbidden\""))
    }

    @Test func aWatcherSeesAnotherReplicasChangeWithinOneSecond() throws {
        let server = try start()
        let (alice, bob, _) = try family(server)
        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", bob.directory, "sync", "--watch"], stderr: .discard)
        defer {
            watcher.signal(SIGTERM)
            if watcher.wait(timeout: 5) == nil { watcher.kill() }
        }
        func text() -> String { watcher.stdout }
        let deadline = Date().addingTimeInterval(20)
        while !text().contains("Watching") && Date() < deadline { usleep(10_000) }
        #expect(text().contains("Watching Family"))
        #expect(try server.waitForMetric("basket_watchers", atLeast: 1), "the watcher's long-poll never parked")

        try alice.ok("add", "Eggs")
        let syncing = Date()
        try alice.ok("sync")
        let synced = Date()
        while !text().contains("Eggs") && Date().timeIntervalSince(synced) < 10 { usleep(5_000) }
        let latency = Date().timeIntervalSince(synced)
        #expect(text().contains("+ Eggs"), "the watcher printed: \(text())")
        // Within a second, or within what Alice's own sync took (a process start and a round
        // trip) when this machine is slow enough today to need more; the next long-poll round
        // would be 25 s away.
        let sync = synced.timeIntervalSince(syncing)
        #expect(latency < max(1.0, 2 * sync), "the change took \(latency) s to reach the watcher (a sync: \(sync) s)")
    }

    /// Long-polls whose wait runs out with nothing new are answered with a whole page (the
    /// encoding's header included), which the CLI reads: a watch on a server whose waits last a
    /// second goes through many empty rounds without a word on stderr, then prints the next change.
    @Test func aWatchWhoseWaitsRunOutReadsEveryAnswerAndStillSeesTheNextChange() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"), arguments: ["--max-wait", "1"])
        let (alice, bob, _) = try family(server)
        let answered = "basket_long_polls_run_out"
        let before = try server.metric(answered) ?? 0
        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", bob.directory, "sync", "--watch"], stderr: .capture)
        defer {
            watcher.signal(SIGTERM)
            if watcher.wait(timeout: 5) == nil { watcher.kill() }
        }
        // Three waits ran out and were answered "nothing new" (of the watch's long-polls: no
        // other device waits).
        #expect(try server.waitForMetric(answered, atLeast: before + 3), "no wait ran out")
        #expect(try server.waitForMetric("basket_watchers", atLeast: 1), "the watch stopped polling")
        #expect(watcher.isRunning)
        #expect(watcher.stderr.isEmpty, "the watch complained: \(watcher.stderr)")
        try alice.ok("add", "Eggs")
        let deadline = Date().addingTimeInterval(20)
        while !watcher.stdout.contains("+ Eggs") && Date() < deadline { usleep(10_000) }
        #expect(watcher.stdout.contains("+ Eggs"), "the watch printed: \(watcher.stdout)")
        #expect(watcher.stderr.isEmpty, "the watch complained: \(watcher.stderr)")
    }

    @Test func aServerKilledDuringPushesKeepsEveryAcknowledgedOperation() throws {
        let server = try start()
        let (alice, bob, _) = try family(server)
        // Pushes of 1,500 operations each, while the server is killed at some point among them.
        let killer = DispatchQueue(label: "killer")
        killer.asyncAfter(deadline: .now() + 1.5) { server.kill() }
        var failures = 0
        for round in 0..<12 {
            try alice.ok("add", (0..<500).map { "Round \(round) item \($0)" }.joined(separator: ", "))
            let result = try alice.run("sync")
            if result.status != 0 {
                failures += 1
                #expect(result.stderr.contains("cannot reach the server"), "\(result.stderr)")
            }
        }
        #expect(failures > 0, "the server was not killed during the pushes")
        try server.start()  // same port, same data directory

        // Every operation alice no longer holds in her outbox was acknowledged: the server has it.
        let replica = try Replica(path: alice.directory + "/basket.sqlite")
        let list = try #require(try replica.lists().first { $0.title == "Family" }).id
        let pending = Set(try replica.outbox.operations(in: list).map(\.operation))
        let acknowledged = Set(try replica.operations(in: list)).subtracting(pending)
        try bob.ok("sync")
        let bobReplica = try Replica(path: bob.directory + "/basket.sqlite")
        let atBob = Set(try bobReplica.operations(in: list))
        #expect(
            acknowledged.isSubset(of: atBob),
            "\(acknowledged.subtracting(atBob).count) acknowledged operations were lost")

        // And once alice syncs again, both converge on all 6,000 items.
        try alice.ok("sync")
        try bob.ok("sync")
        #expect(try bob.listing().items.count == 6_000)
        #expect(try alice.exported() == bob.exported())
    }

    @Test func aServerRestoredFromAnOlderBackupIsRebuiltByItsClients() throws {
        let server = try start()
        let (alice, bob, carol) = try family(server)
        try alice.ok("add", "Before backup")
        try alice.ok("sync")
        try bob.ok("sync")
        let backup = root.file("backup")
        let made = try server.backup(to: backup)
        #expect(made.status == 0, "\(made.stderr)")

        try alice.ok("add", "Alice after backup")
        try alice.ok("sync")
        try bob.ok("add", "Bob after backup")
        try bob.ok("sync")
        try bob.ok("add", "Bob offline")  // never reached the old server

        #expect(server.stop() == 0)
        let restored = try server.restore(from: backup)
        #expect(restored.status == 0 && restored.stdout.contains("new epoch"), "\(restored.stderr)")
        try server.start()

        let aliceSync = try alice.ok("sync")
        #expect(aliceSync.contains("restored from a backup"))
        try bob.ok("sync")
        try carol.ok("sync")
        try alice.ok("sync")
        let expected: Set = ["Before backup", "Alice after backup", "Bob after backup", "Bob offline"]
        for device in [alice, bob, carol] {
            #expect(Set(try device.listing().items.map(\.name)) == expected)
        }
        // A device that never saw the list before gets everything from the rebuilt server.
        let fresh = Device(root, "alice-laptop")
        try fresh.ok("remote", "set", server.url)
        try fresh.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        try fresh.ok("sync")
        #expect(Set(try fresh.listing().items.map(\.name)) == expected)
    }

    /// After a restore, writes stamped before it are bound like any other: a member who pushes
    /// another member's lost write with another value (under that member's replica id) is
    /// refused, the victim and an honest witness sync without a conflict, and a new device sees
    /// the true value. (Before, such writes were neither checked nor bound: every later sync of
    /// the victim and the witness failed with 409 identity_conflict.)
    @Test func afterARestoreAMemberCannotForgeAnothersLostWrite() throws {
        let server = try start()
        let alice = try user("alice", server)
        let bob = try user("bob", server)
        let mallory = try user("mallory", server)
        // Plain: Mallory forges values in clear (an encrypted list takes sealed values only).
        try alice.ok("list", "new", "Family", "--unencrypted")
        try alice.share(with: bob)
        try alice.share(with: mallory)
        try bob.ok("add", "Tea")  // Bob's replica id is bound before the backup
        try mallory.ok("sync")
        let backup = root.file("forge-backup")
        #expect(try server.backup(to: backup).status == 0)
        try bob.ok("add", "Bread")
        try mallory.ok("sync")
        #expect(server.stop() == 0)
        #expect(try server.restore(from: backup).status == 0)
        try server.start()
        // Mallory's copy has Bob's write of "Bread": she sends its identity with another value.
        let line = try #require(
            try mallory.exported().split(separator: "\n").first { $0.hasSuffix("\t=Bread") && $0.contains("\tname\t") })
        let forged = line.replacingOccurrences(of: "\t=Bread", with: "\t=Poison")
        let list = try #require(try mallory.listing().list?.id)
        let body = try JSONSerialization.data(
            withJSONObject: ["ops": "basket-ops 1\nL \(list)\n\(forged)\n"])
        try body.write(to: URL(fileURLWithPath: root.file("forged.json")))
        let answer = try Executables.runShell(
            "curl -s -w ' %{http_code}' -H 'Authorization: Bearer \(try mallory.token())' -H 'Content-Type: application/json'"
                + " --data-binary @\(root.file("forged.json")) \(server.url)/v1/lists/\(list)/ops")
        #expect(answer.stdout.hasSuffix(" 409") && answer.stdout.contains("replica_taken"), "\(answer.stdout)")
        // The victim and an honest witness sync without a conflict; everyone has Bread.
        for device in [bob, alice, bob, alice] {
            let synced = try device.run("sync")
            #expect(synced.status == 0, "\(synced.stderr)")
        }
        let fresh = Device(root, "alice-tablet")
        try fresh.ok("remote", "set", server.url)
        try fresh.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        try fresh.ok("sync")
        #expect(Set(try fresh.listing().items.map(\.name)) == ["Tea", "Bread"])
    }

    /// A list the server refuses (full: a server that keeps 3 items a list) does not stop the
    /// sync of the others: `basket sync` syncs them, names the refused one and why on stderr,
    /// keeps its changes, and exits 1; `--json` gives each list, the refused one with its error.
    @Test func aRefusedListDoesNotStopTheSyncOfTheOthers() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"), arguments: ["--max-items", "3"])
        let alice = try user("alice", server)
        try alice.ok("list", "new", "Big")
        try alice.ok("list", "new", "Small")
        try alice.ok("sync")
        try alice.ok("--no-sync", "--list", "Big", "add", "one, two, three, four, five")
        try alice.ok("--no-sync", "--list", "Small", "add", "Milk")
        let synced = try alice.run("sync")
        #expect(synced.status == 1)
        #expect(
            synced.stderr.contains("Not synced Big") && synced.stderr.contains("too_many_items"), "\(synced.stderr)")
        #expect(synced.stdout.contains("Synced Small: sent"), "\(synced.stdout)")
        // Small's Milk reached the server: a second device of Alice's pulls it.
        let laptop = Device(root, "alice-laptop")
        try laptop.ok("remote", "set", server.url)
        try laptop.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        try laptop.ok("sync")
        #expect(try laptop.ok("--list", "Small", "ls").contains("Milk"))
        let json = try alice.run("sync", "--json")
        #expect(json.status == 1)
        let lists =
            ((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) as? [String: Any])?["lists"]
            as? [[String: Any]] ?? []
        let byTitle = Dictionary(uniqueKeysWithValues: lists.map { ($0["title"] as? String ?? "", $0) })
        #expect((byTitle["Big"]?["error"] as? String)?.contains("too_many_items") == true, "\(json.stdout)")
        #expect(byTitle["Small"] != nil && byTitle["Small"]?["error"] == nil, "\(json.stdout)")
    }

    @Test func aFailedSyncSaysWhyAndKeepsTheOutbox() throws {
        let server = try start()
        let (alice, _, _) = try family(server)
        try alice.ok("--no-sync", "add", "Milk")
        server.stop()
        let failed = try alice.run("sync")
        #expect(failed.status == 1 && failed.stderr.contains("cannot reach the server"))
        #expect(try alice.ok("status", "--json").jsonObject["pending"] as? Int == 4)  // with Milk's aisle
        #expect(try alice.listing().items.map(\.name) == ["Milk"])  // everything else still works offline
        try server.start()
        try alice.ok("sync")
        #expect(try alice.ok("status", "--json").jsonObject["pending"] as? Int == 0)
    }
}

extension String {
    var jsonObject: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(utf8))) as? [String: Any] ?? [:]
    }
}

@Suite(.serialized)
struct ClockSkewSyncTests {
    let root = TemporaryDirectory("skew")

    @Test func aDeviceWhoseClockRunsAheadIsCorrectedAndLosesNothing() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.share(with: bob)

        // Bob's device is 10 minutes ahead: the server refuses his writes, his client corrects
        // its clock from the server's time, re-stamps them and sends them again.
        let skewed = ["BASKET_CLOCK_SKEW_MS": "600000"]
        let add = try Executables.run(
            "basket", ["--db", bob.directory, "add", "--no-sync", "Milk, Bread"], environment: skewed)
        #expect(add.status == 0)
        let sync = try Executables.run("basket", ["--db", bob.directory, "sync"], environment: skewed)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("clock was off") && sync.stdout.contains("re-stamped 8"), "\(sync.stdout)")
        let status = try Executables.run("basket", ["--db", bob.directory, "status", "--json"], environment: skewed)
        let offset = status.stdout.jsonObject["clockOffsetMilliseconds"] as? Int ?? 0
        #expect(abs(offset + 600_000) < 30_000, "offset \(offset)")

        // Alice, on time, checks Milk after Bob added it: her write is the later one and wins.
        try alice.ok("sync")
        try alice.ok("check", "milk")
        try alice.ok("sync")
        let again = try Executables.run("basket", ["--db", bob.directory, "sync"], environment: skewed)
        #expect(again.status == 0 && !again.stdout.contains("clock was off"))  // told once
        for device in [alice, bob] {
            let items = Dictionary(uniqueKeysWithValues: try device.listing().items.map { ($0.name, $0.checked) })
            #expect(items == ["Milk": true, "Bread": false])
        }
    }
}

@Suite(.serialized)
struct ServerLifecycleTests {
    let root = TemporaryDirectory("lifecycle")

    /// Starts `basket ARGS` and kills it with SIGKILL after `delay` seconds (if still running).
    func killed(_ device: Device, after delay: Double, _ arguments: String...) throws -> Bool {
        let process = try Subprocess(
            Executables.path("basket"), ["--db", device.directory] + arguments, stdout: .discard, stderr: .discard)
        usleep(UInt32(delay * 1_000_000))
        let wasRunning = process.isRunning
        process.kill()
        return wasRunning
    }

    @Test func aClientKilledDuringSyncNeitherLosesNorDuplicates() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", (0..<4_000).map { "Item \($0)" }.joined(separator: ", "))
        var interrupted = 0
        // Short delays too: a sync of 4,000 items can finish within 0.15 s (the replica merges
        // about 1.5 M operations a second), and a kill after it interrupts nothing.
        for delay in [0.03, 0.08, 0.15, 0.3, 0.45, 0.6] where try killed(alice, after: delay, "sync") {
            interrupted += 1
        }
        try alice.ok("sync")
        try alice.share(with: bob)
        try bob.ok("list", "new", "Scratch")  // bob's second list, so his syncs are not trivial
        for delay in [0.03, 0.06, 0.1, 0.2, 0.3] where try killed(bob, after: delay, "sync") { interrupted += 1 }
        try bob.ok("sync")
        try bob.ok("list", "use", "Family")
        #expect(interrupted > 0, "no sync was killed while it ran")
        #expect(try bob.listing().items.count == 4_000)
        #expect(try alice.ok("--list", "Family", "export", "-") == bob.ok("--list", "Family", "export", "-"))
        // The server holds every operation once, whatever was retried.
        // An operation's line has tabs; the header, the list's keys and its id do not.
        let family = try alice.ok("--list", "Family", "export", "-").split(separator: "\n").filter { $0.contains("\t") }
            .count
        let scratch = try bob.ok("--list", "Scratch", "export", "-").split(separator: "\n").filter { $0.contains("\t") }
            .count
        #expect(try server.metric("basket_operations_stored") == family + scratch)
    }

    @Test func stoppingTheServerAnswersParkedLongPollsAndExitsCleanly() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = Device(root, "alice")
        try alice.ok("remote", "set", server.url)
        try alice.ok("signup", "alice", "--password-stdin", stdin: "alice-password\n")
        try alice.ok("list", "new", "Family")
        try alice.ok("sync")
        let config =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: alice.directory + "/config.json"))) as! [String: Any]
        let token = config["token"] as! String
        let list = try alice.listing().list!.id
        let poll = try Subprocess(
            "/bin/sh",
            ["-c", "curl -s -H 'Authorization: Bearer \(token)' '\(server.url)/v1/lists/\(list)/ops?after=2&wait=25'"])
        let deadline = Date().addingTimeInterval(10)
        while try server.metric("basket_watchers") != 1 && Date() < deadline { usleep(20_000) }
        let stopping = Date()
        #expect(server.stop() == 0)
        try poll.finish(timeout: 30)
        let answer = poll.stdout
        #expect(Date().timeIntervalSince(stopping) < 5)
        // The list's two registers (title, language) are all its log holds: nothing after them.
        #expect(answer.contains("\"count\":0") && answer.contains("\"cursor\":2"), "\(answer)")
        #expect(server.log.contains("basket-server: stopped"))
    }
}
