import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// `basket history` as a person reads it (issue 29): whole values up to a column, then "…";
/// local times; who wrote, by name; where a renamed item went.
struct CLIHistoryTests {
    let root = TemporaryDirectory("history")

    @Test func historyNamesPeopleTellsLocalTimeAndFollowsARename() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        try bob.ok("check", "milk")
        try alice.ok("sync")
        try alice.ok("rename", "milk", "--to", "Organic whole milk from the farm")

        let text = try alice.ok("history", "organic", environment: ["TZ": "UTC"])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("  Renamed from Milk ('basket history Milk')"), "\(text)")
        // Not a terminal: the name whole (it was cut at 24 columns), then two spaces, then the time.
        #expect(lines.contains { $0.hasPrefix("   * \"Organic whole milk from the farm\"  20") }, "\(text)")
        #expect(lines.contains { $0.hasSuffix("you, this device") })
        // The old item's history says where it went, and who checked it.
        let old = try alice.ok("history", "Milk", environment: ["TZ": "UTC"])
        #expect(old.contains("Renamed to Organic whole milk from the farm"), "\(old)")
        let checkedBy = old.split(separator: "\n").first { $0.hasPrefix("   * true") }
        #expect(checkedBy?.hasSuffix("bobby") == true, "\(old)")
        #expect(!old.contains("replica "), "\(old)")

        // Local time: the same write nine hours apart in Tokyo and UTC; --json in ISO UTC.
        func hour(_ tz: String) throws -> Int {
            let line = try alice.ok("history", "Milk", environment: ["TZ": tz]).split(separator: "\n")
                .first { $0.hasPrefix("   * \"Milk\"") }
            let time = try #require(line?.split(separator: " ").first { $0.contains(":") })
            return try #require(Int(time.prefix(2)))
        }
        #expect((try hour("UTC") + 9) % 24 == (try hour("Asia/Tokyo")))
        let json = try JSONSerialization.jsonObject(with: Data(try alice.ok("history", "--json", "Milk").utf8))
        let history = try #require((json as? [String: Any])?["history"] as? [[String: Any]])
        #expect(history.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
        #expect(history.contains { $0["field"] as? String == "checked" && $0["by"] as? String == "bobby" })
        #expect((json as? [String: Any])?["renamedTo"] as? String == "Organic whole milk from the farm")
        // `devices` and `invites` in local time too (they printed UTC, issue 42).
        _ = try alice.ok("share")
        for command in ["devices", "invites"] {
            func hour(_ tz: String) throws -> Int {
                let text = try alice.ok(command, environment: ["TZ": tz])
                #expect(!text.contains("UTC"), "\(text)")
                let time = try #require(
                    text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
                        .first { $0.count == 5 && $0.dropFirst(2).first == ":" })
                return try #require(Int(String(time.prefix(2))))
            }
            #expect((try hour("UTC") + 9) % 24 == (try hour("Asia/Tokyo")), "\(command)")
        }

        // Offline (no server answering), writes are told by device, never by a guess.
        _ = server.stop()
        let offline = try alice.ok("history", "Milk")
        #expect(offline.contains("another device (") && offline.contains("you, this device"), "\(offline)")
    }

    /// A rename and a removal a moment later (issue 42, finding 3): the removal was taken for
    /// the end of the rename ("Oat milk: Renamed from butter", "butter: Renamed to Oat milk").
    @Test func aRenameIsLinkedByItsOwnWritesNeverByTiming() throws {
        let device = Device(root, "solo")
        try device.ok("add", "Milk, Butter")
        try device.ok("rename", "milk", "--to", "Oat milk")
        try device.ok("rm", "butter")
        let oat = try device.ok("history", "oat milk")
        #expect(oat.contains("Renamed from Milk") && !oat.contains("Butter"), "\(oat)")
        let butter = try device.ok("history", "butter")
        #expect(!butter.contains("Renamed"), "\(butter)")
        let milk = try device.ok("history", "milk")
        #expect(milk.contains("Renamed to Oat milk"), "\(milk)")
        // Renamed into a name the list had before: the link is found again, the latest one said.
        try device.ok("rename", "oat milk", "--to", "Butter")
        let again = try device.ok("history", "butter")
        #expect(again.contains("Renamed from Oat milk") && !again.contains("Renamed to"), "\(again)")
    }

    /// On a terminal a long value is wrapped in its column, every word kept (it was cut at 24
    /// columns with "…").
    @Test func onATerminalALongValueIsWrappedNotCut() throws {
        let device = Device(root, "wrap")
        try device.ok("add", "Organic whole milk from the farm down the road")
        let pane = try TmuxPane(
            command: "sh -c '\(Executables.path("basket")) --db \(device.directory) history organic; sleep 60'")
        let screen = pane.wait("the history") { $0.contains("name:") && $0.contains("road") }
        #expect(!screen.contains("…"), "\(screen)")
        let rows = screen.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("   * \"Organic whole milk ") }, "\(screen)")
        #expect(rows.contains { $0.hasPrefix("     ") && $0.contains("road\"") }, "\(screen)")
    }
}

/// What a terminal shows of how current it is (issue 29): `ls` pulls a list not pulled for a few
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
        #expect(try alice.ok("lists").contains("* Weekly shop  (1 to buy, 1 items; owner)"))
        #expect(try alice.ok("lists").contains("Mine  (0 to buy, 0 items; owner)"))
        #expect(try bob.ok("lists").contains("Weekly shop  (1 to buy, 1 items; editor)"))
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

        // The past and what changed since pull first too (issue 42, finding 4): Bob's Jam,
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

/// Several items at once, and aisles as they are typed (issue 29).
struct CLIBulkTests {
    let root = TemporaryDirectory("bulk")

    @Test func checkAndRmTakeSeveralItemsExactNamesFirstAllOrNothing() throws {
        let device = Device(root, "bulk")
        try device.ok("add", "Watchitem1, Watchitem2, Watchitem3, Watchitem4, Oat milk, Milk, Bread, Eggs")
        // Two exact names are two items, never four fuzzy hits.
        #expect(try device.ok("check", "Watchitem2,", "Watchitem3") == "Checked Watchitem2, Watchitem3\n")
        // The whole text when it is one item's name; each argument otherwise.
        #expect(try device.ok("check", "oat", "milk") == "Checked Oat milk\n")
        #expect(try device.ok("check", "milk", "bread") == "Checked Milk, Bread\n")
        let checked = try device.listing("--checked").items.map(\.name).sorted()
        #expect(checked == ["Bread", "Milk", "Oat milk", "Watchitem2", "Watchitem3"])
        // One name that matches nothing: nothing changes.
        let before = try device.exported()
        let missing = try device.run("rm", "eggs", "zzz")
        #expect(missing.status == 1 && missing.stderr.contains("no item 'zzz'"))
        #expect(try device.exported() == before)
        // Several in one step: one undo takes them all back.
        #expect(try device.ok("rm", "eggs", "watchitem1") == "Removed Eggs, Watchitem1\n")
        try device.ok("undo")
        #expect(Set(try device.listing().items.map(\.name)).isSuperset(of: ["Eggs", "Watchitem1"]))
        let json = try JSONSerialization.jsonObject(
            with: Data(try device.ok("uncheck", "--json", "milk", "bread").utf8))
        #expect(((json as? [String: Any])?["items"] as? [[String: Any]])?.count == 2)
    }

    @Test func addPutsItemsInAnAisleWithAHashOrCategory() throws {
        let device = Device(root, "aisles")
        try device.ok("add", "Milk #Dairy, Sourdough #Bakery goods")
        try device.ok("add", "yoghurt #dairy")  // the list's spelling of the aisle
        try device.ok("add", "Tea, Coffee", "--category", "Drinks")
        try device.ok("add", "#1 hits")  // a '#' that does not follow a space is part of the name
        struct Listing: Decodable {
            struct Item: Decodable {
                var name: String
                var category: String?
            }
            var items: [Item]
        }
        let items = try JSONDecoder().decode(Listing.self, from: Data(try device.ok("ls", "--json").utf8)).items
        let categories = Dictionary(items.map { ($0.name, $0.category ?? "-") }) { a, _ in a }
        #expect(categories["Milk"] == "Dairy" && categories["yoghurt"] == "Dairy")
        #expect(categories["Sourdough"] == "Bakery goods")
        #expect(categories["Tea"] == "Drinks" && categories["Coffee"] == "Drinks")
        #expect(categories["#1 hits"] != nil)
        #expect(try device.run("add", "Salt", "--category", " ").status == 64)
        #expect(try device.run("add", "Salt #\u{1B}[2J").status == 1)
    }

    /// `ls` output fed back (issue 42, finding 6): `ls --plain` prints names only, and `check -`
    /// and `rm -` read them one per line (`basket ls --plain -u | fzf | basket check -`).
    @Test func lsPlainFeedsCheckAndRmThroughAPipe() throws {
        let device = Device(root, "pipes")
        try device.ok("add", "2 bread, Oat milk, Eggs")
        try device.ok("check", "eggs")
        #expect(try device.ok("ls", "--plain", "-u") == "bread\nOat milk\n")
        #expect(try device.ok("ls", "--plain").split(separator: "\n").sorted() == ["Eggs", "Oat milk", "bread"])
        let picked = try device.ok("ls", "--plain", "-u")
        #expect(try device.ok("check", "-", stdin: picked) == "Checked bread, Oat milk\n")
        #expect(try device.ok("ls", "--plain", "-u").isEmpty)
        // All or nothing, as with arguments: one unknown name changes nothing.
        let before = try device.exported()
        let unknown = try device.run("rm", "-", stdin: "Bread\nCoffee\n")
        #expect(unknown.status == 1 && unknown.stderr.contains("Coffee"), "\(unknown.stderr)")
        #expect(try device.exported() == before)
        // Not a list of names: refused before anything is read into the list.
        #expect(try device.run("rm", "-", stdin: "\n \n").status == 64)
        #expect(try device.run("rm", "-", stdin: String(repeating: "x", count: (1 << 20) + 1)).status == 64)
        #expect(try device.run("ls", "--plain", "--json").status == 64)
        #expect(try device.exported() == before)
        #expect(try device.ok("rm", "-", stdin: "bread\n\neggs\n") == "Removed bread, Eggs\n")
    }
}

/// The interactive mode as fzf users expect it (issue 29), in a real terminal under tmux.
@Suite(.serialized)
struct InteractiveHabitsTests {
    let root = TemporaryDirectory("interactive-habits")

    func start(_ device: Device, columns: Int = 80) throws -> TmuxPane {
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)", environment: ["NO_COLOR": "1"])
        pane.wait("the prompt") { $0.contains("Search or add items") }
        return pane
    }

    @Test func tabKeepsTokensScopesKeepTheirRowsAndTheFoldIsMarked() throws {
        let device = Device(root, "habits")
        try device.ok("list", "new", "A list with a rather long title for a terminal of eighty columns")
        try device.ok("add", (1...40).map { "Item \($0 < 10 ? "0" : "")\($0)" }.joined(separator: ", "))
        try device.ok("add", "Greek yogurt #Dairy, Bread #Bakery")
        try device.ok("rm", "bread")  // had before, in Bakery
        let pane = try start(device)
        // The header keeps "Esc quit" however long the title; the fold says what is below.
        let first = pane.wait("the list") { $0.contains("Item 01") }
        let header = try #require(first.split(separator: "\n").first)
        #expect(header.hasSuffix("Esc quit)") && header.contains("…"), "\(header)")
        #expect(first.contains(" more"), "\(first)")
        let rows = first.split(separator: "\n", omittingEmptySubsequences: false)
        let marker = try #require(rows.first { $0.hasPrefix("  ↓ ") && $0.hasSuffix(" more") })
        let hidden = try #require(Int(marker.dropFirst(4).split(separator: " ")[0]))
        let shown = rows.filter { $0.contains("[ ] Item") || $0.contains("[ ] Greek") }.count
        #expect(hidden + shown >= 41, "\(hidden) hidden, \(shown) shown")
        // Tab after a complete token completes the name and keeps the token.
        try pane.type("is:todo gr")
        try pane.send("Tab")
        pane.wait("the name after the token") { $0.contains("> is:todo Greek yogurt") }
    }

    /// A scope shows its own part of the list: the rows had before come from its aisle only.
    @Test func aScopeKeepsItsOwnRowsHadBefore() throws {
        let device = Device(root, "scopes")
        try device.ok("add", "Milk #Dairy, Croissant #Bakery, Bread #Bakery, Soap")
        try device.ok("rm", "bread", "soap")  // had before: one in Bakery, one in no aisle
        let pane = try start(device)
        pane.wait("both had before") { $0.contains("\u{21BA} Bread") && $0.contains("\u{21BA} Soap") }
        try pane.send("C-s")
        pane.wait("to buy") { $0.contains("scope: to buy") && !$0.contains("\u{21BA}") }
        try pane.send("C-s")
        pane.wait("checked") { $0.contains("scope: checked") && !$0.contains("\u{21BA}") }
        try pane.send("C-s")
        pane.wait("the Bakery aisle") {
            $0.contains("scope: Bakery") && $0.contains("\u{21BA} Bread") && !$0.contains("\u{21BA} Soap")
        }
        try pane.send("C-s")
        pane.wait("the Dairy aisle") { $0.contains("scope: Dairy") && !$0.contains("\u{21BA}") }
    }
}

/// `--no-sync` keeps a write here even with `basket sync --watch` running on the same replica
/// (issue 29): the watcher sends it only after an explicit `basket sync`.
struct NoSyncHoldTests {
    let root = TemporaryDirectory("hold")

    @Test func aWatcherDoesNotSendWhatNoSyncKept() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", alice.directory, "sync", "--watch"], stderr: .discard)
        defer {
            watcher.signal(SIGTERM)
            if watcher.wait(timeout: 5) == nil { watcher.kill() }
        }
        let deadline = Date().addingTimeInterval(20)
        while !watcher.stdout.contains("Watching") && Date() < deadline { usleep(10_000) }
        #expect(watcher.stdout.contains("Watching"))

        try alice.ok("--no-sync", "add", "Tea")
        Thread.sleep(forTimeInterval: 2.5)  // the watcher looks at the outbox every 250 ms
        try bob.ok("sync")
        #expect(!(try bob.listing().items.map(\.name)).contains("Tea"))
        let status = try alice.ok("status")
        #expect(status.contains("1 change not yet sent"), "\(status)")
        // An explicit sync sends it, and lets the watcher send again.
        try alice.ok("sync")
        try bob.ok("sync")
        #expect(try bob.listing().items.map(\.name).contains("Tea"))
        try bob.ok("add", "Jam")
        try alice.ok("--no-sync", "check", "milk")
        try alice.ok("sync")
        try alice.ok("--no-sync", "add", "Eggs")
        try alice.ok("sync")  // released
        try alice.ok("add", "--no-sync", "Bread")  // held again
        try alice.ok("add", "Soap")  // a write that sends takes what was kept along
        Thread.sleep(forTimeInterval: 1)
        try bob.ok("sync")
        let names = try bob.listing().items.map(\.name)
        #expect(names.contains("Bread") && names.contains("Soap") && names.contains("Eggs"), "\(names)")
    }
}

/// Words a person reads after sharing (issue 42, finding 6): `sync` counts changes, not
/// operations; `status` says a list was left; the only member's `leave` says it deletes the list.
struct CLISharingWordsTests {
    let root = TemporaryDirectory("sharing-words")

    @Test func syncCountsChangesAndAListLeftOrLastLeftSaysSo() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        try alice.ok("--no-sync", "add", "Jam, Bread, Eggs")
        // Three items added (nine writes and their aisles): three changes.
        let sent = try alice.ok("sync")
        #expect(sent.contains("Synced Family: sent 3 changes, received 0 changes"), "\(sent)")
        #expect(try bob.ok("sync").contains("received 3 changes"))
        try alice.ok("--no-sync", "check", "milk")
        try alice.ok("--no-sync", "set", "bread", "--quantity", "2", "--note", "wholemeal")
        #expect(try alice.ok("sync").contains("sent 2 changes"))
        let received = try bob.ok("sync")
        #expect(received.contains("received 2 changes"), "\(received)")

        // Bob leaves: his status says the copy is read-only, not a list like the others.
        #expect(try bob.ok("leave", "--yes").hasPrefix("Left Family. Its copy stays"))
        let status = try bob.ok("status")
        #expect(status.contains("Family (no longer shared with you: read-only here): last sync"), "\(status)")

        // Alone on a list, leaving deletes it: the question says so before, the answer after.
        try alice.ok("list", "new", "Solo")
        let pane = try TmuxPane(
            command: "sh -c '\(Executables.path("basket")) --db \(alice.directory) --list Solo leave; sleep 60'")
        pane.wait("the question") { $0.contains("You are the only member of Solo: leaving deletes it on the server") }
        try pane.type("n")
        try pane.send("Enter")
        pane.wait("nothing done") { $0.contains("nothing was changed") || $0.contains("Nothing") }
        #expect(try alice.ok("lists").contains("Solo"))
        let left = try alice.ok("--list", "Solo", "leave", "--yes")
        #expect(left.contains("Left Solo, which had no other member: the server deleted it."), "\(left)")
    }
}
