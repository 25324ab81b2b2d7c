import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// The habits a shell user brings from git, gh and fzf (issue 29): help, "did you mean", exit
/// statuses, short options, -q, questions before what cannot be undone, a hung server that costs
/// a bounded wait and says so. Real `basket` processes; the questions under tmux, as a person
/// answers them.
@Suite(.serialized)
struct CLIHabitsTests {
    let root = TemporaryDirectory("habits")

    /// `sh -c` in a tmux pane that prints the command's exit status and stays open to be read.
    func pane(_ command: String) throws -> TmuxPane {
        // The pane's command is in double quotes for the shell that starts tmux: \$? is sh's.
        try TmuxPane(command: "sh -c '\(command); echo EXIT=\\$?; sleep 60'", environment: ["NO_COLOR": "1"])
    }

    @Test func helpIsACommandAndACommandsHelpIsItsOwn() throws {
        let device = Device(root, "help")
        let viaHelp = try device.ok("help", "ls")
        #expect(try device.ok("ls", "--help") == viaHelp)
        #expect(try device.ok("ls", "-h") == viaHelp)
        #expect(viaHelp.contains("-a, --all") && viaHelp.contains("-c, --checked"))
        // The global options in one line, not fourteen.
        #expect(!viaHelp.contains("ENVIRONMENT") && viaHelp.contains("Global options:"))
        #expect(try device.ok("help", "list", "rm").contains("USAGE: basket list rm [NAME] [--yes]"))
        #expect(try device.ok("help").contains("EXIT STATUS"))
        #expect(try device.ok("help").contains("Ctrl-S"))
        // Every section heading of every command's help stands on a line of its own, after a
        // blank line, and prose after a section's lines is set apart by one.
        for command in [
            "add", "search", "suggest", "ls", "sync", "share", "members", "devices", "leave", "list rm", "logout",
            "remote", "completion", "scenario run",
        ] {
            let words = command.split(separator: " ").map(String.init)
            let text = try Executables.run("basket", ["--db", device.directory, "help"] + words).stdout
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where index > 0 {
                let previous = lines[index - 1]
                if line.contains("OPTIONS:") || line.contains("ARGUMENTS:") || line.contains("SUBCOMMANDS:") {
                    #expect(line.hasSuffix(":") && line.first != " ", "\(command): '\(line)'")
                    #expect(previous.isEmpty, "\(command): no blank line before '\(line)'")
                }
                if !line.isEmpty && line.first != " " && previous.first == " " {
                    #expect(Bool(false), "\(command): '\(line)' runs on from the section above it")
                }
            }
        }
        let unknown = try device.run("help", "lst")
        #expect(unknown.status == 64 && unknown.stderr.contains("did you mean 'ls'?"))
    }

    @Test func aMistypedCommandGetsASuggestionAndUsageErrorsPointAtTheCommandsHelp() throws {
        let device = Device(root, "typo")
        for (typed, meant) in [("ad", "add"), ("serch", "search"), ("stauts", "status"), ("lsit", "list")] {
            let result = try device.run(typed, "milk")
            #expect(result.status == 64, "\(typed)")
            #expect(result.stderr.contains("unknown command '\(typed)'; did you mean '\(meant)'?"), "\(result.stderr)")
        }
        let far = try device.run("xyzzy")
        #expect(far.status == 64 && !far.stderr.contains("did you mean"))
        // The usage line is the command's whole one, never a placeholder; the hint its own help.
        for command in ["check", "uncheck", "toggle", "rm", "history"] {
            let result = try device.run(command)
            #expect(result.status == 64)
            #expect(result.stderr.contains("Usage: basket \(command) ITEM"), "\(result.stderr)")
            #expect(!result.stderr.contains("COMMAND"), "\(result.stderr)")
            #expect(result.stderr.contains("See 'basket help \(command)'."), "\(result.stderr)")
        }
        let share = try device.run("share", "--role", "boss")
        #expect(share.stderr.contains("Usage: basket share [--role editor|viewer|owner]"), "\(share.stderr)")
    }

    @Test func shortOptionsQuietAndExitStatuses() throws {
        let device = Device(root, "short")
        #expect(try device.ok("add", "-q", "Milk, Bread") == "")
        #expect(try device.ok("check", "-q", "milk") == "")
        let checked = try device.ok("ls", "--checked")
        #expect(try device.ok("ls", "-c") == checked)
        #expect(try device.ok("ls", "-q", "-u").contains("Bread"))  // data still prints with -q
        #expect(try device.ok("search", "-n", "1", "r").split(separator: "\n").count <= 2)
        #expect(try device.ok("-l", "Shopping", "ls", "-a").contains("Milk"))
        // grep's habit: a search that finds nothing exits 1, with or without --json.
        let none = try device.run("search", "zzz")
        #expect(none.status == 1 && none.stdout.contains("Add \"zzz\""))
        #expect(try device.run("search", "--json", "zzz").status == 1)
        #expect(try device.run("search", "bread").status == 0)
        // Flags that cannot go together, and an empty aisle order, are refused and change nothing.
        let before = try device.exported()
        #expect(try device.run("aisles", "set", "").status == 64)
        #expect(try device.run("aisles", "set", " , ").status == 64)
        #expect(try device.run("sync", "--watch", "--discard-refused").status == 64)
        #expect(try device.exported() == before)
        #expect(try device.ok("status").contains("Clock:   no server to compare with"))
    }

    @Test func aServerURLWithoutItsSchemeGetsOneSuggested() throws {
        let device = Device(root, "remote")
        let local = try device.run("remote", "set", "localhost:8080")
        #expect(local.status == 64 && local.stderr.contains("did you mean 'http://localhost:8080'?"))
        let far = try device.run("remote", "set", "basket.example.org")
        #expect(far.stderr.contains("did you mean 'https://basket.example.org'?"))
        #expect(try device.ok("remote").contains("No server configured."))
    }

    /// `basket undo` after `basket list rm` must not make the list again, here or on the server.
    @Test func undoAfterAListIsRemovedDoesNotBringItBackUntitled() throws {
        let server = try ServerProcess(dataDirectory: root.file("server-undo"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Party")
        try alice.ok("add", "Balloons")
        try alice.ok("list", "new", "Weekly")
        try alice.ok("add", "Milk")
        try alice.ok("sync")
        #expect(try alice.ok("list", "rm", "Weekly").contains("Deleted Weekly for everyone"))
        // The undo journal had the add of Milk on Weekly last: it is gone with the list, so undo
        // takes back the step before it, on Party.
        let undone = try alice.ok("undo")
        #expect(undone.contains("Party") && undone.contains("Balloons: removed"), "\(undone)")
        try alice.ok("sync")
        let lists = try alice.ok("lists")
        #expect(!lists.contains("Weekly") && !lists.contains("untitled"), "\(lists)")
        // A new device of the account gets Party only.
        let laptop = Device(root, "alice-laptop")
        try laptop.ok("remote", "set", server.url)
        let login = try laptop.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        #expect(login.contains("Fetched 1 list: Party"), "\(login)")
        #expect(try laptop.ok("lists").contains("Party"))
        #expect(!(try laptop.ok("lists")).contains("untitled"))
    }

    /// On a terminal, what cannot be undone asks first; no (or just Enter) changes nothing.
    @Test func destructiveCommandsAskOnATerminal() throws {
        let device = Device(root, "ask")
        try device.ok("list", "new", "Keep")
        try device.ok("add", "Milk")
        let basket = "\(Executables.path("basket")) --db \(device.directory)"
        let no = try pane("\(basket) list rm Keep")
        no.wait("the question") { $0.contains("Remove Keep from this device, with") && $0.contains("[y/N]") }
        try no.send("Enter")
        no.wait("refused") { $0.contains("Error: nothing was changed") && $0.contains("EXIT=1") }
        #expect(try device.ok("lists").contains("Keep"))
        let yes = try pane("\(basket) list rm Keep")
        yes.wait("the question") { $0.contains("[y/N]") }
        try yes.type("y")
        try yes.send("Enter")
        yes.wait("removed") { $0.contains("Removed Keep from this device") && $0.contains("EXIT=0") }
        #expect(!(try device.ok("lists")).contains("Keep"))
        // --yes does not ask, even on a terminal.
        try device.ok("list", "new", "Gone")
        let skip = try pane("\(basket) list rm Gone -y")
        skip.wait("removed without a question") { $0.contains("Removed Gone") && $0.contains("EXIT=0") }
        #expect(!skip.screen.contains("[y/N]"))
    }

    /// On a terminal, signup asks the new password twice; two different ones create nothing.
    @Test func signupAsksThePasswordTwice() throws {
        let server = try ServerProcess(dataDirectory: root.file("server-signup"))
        let device = Device(root, "signup")
        try device.ok("remote", "set", server.url)
        let basket = "\(Executables.path("basket")) --db \(device.directory)"
        let differ = try pane("\(basket) signup zelda")
        differ.wait("the first prompt") { $0.contains("Password:") }
        try differ.type("first-password")
        try differ.send("Enter")
        differ.wait("the second prompt") { $0.contains("The same password again:") }
        try differ.type("other-password")
        try differ.send("Enter")
        differ.wait("refused") { $0.contains("the two passwords differ; nothing was created") && $0.contains("EXIT=1") }
        let same = try pane("\(basket) signup zelda")
        same.wait("the first prompt") { $0.contains("Password:") }
        try same.type("good-password")
        try same.send("Enter")
        same.wait("the second prompt") { $0.contains("The same password again:") }
        try same.type("good-password")
        try same.send("Enter")
        same.wait("created") { $0.contains("Created account zelda") && $0.contains("EXIT=0") }
    }

    /// Ctrl-C leaves the interactive mode with 130, as an interrupted program; Esc with 0.
    @Test func ctrlCInTheInteractiveModeExits130() throws {
        let device = Device(root, "interrupt")
        try device.ok("add", "Milk")
        let basket = "\(Executables.path("basket")) --db \(device.directory)"
        let interrupted = try pane(basket)
        interrupted.wait("the prompt") { $0.contains("Search or add items") }
        try interrupted.send("C-c")
        interrupted.wait("exit 130") { $0.contains("EXIT=130") }
        let escaped = try pane(basket)
        escaped.wait("the prompt") { $0.contains("Search or add items") }
        try escaped.send("Escape")
        escaped.wait("exit 0") { $0.contains("EXIT=0") }
    }

    /// A server that takes the connection and never answers: `sync` gives up after
    /// $BASKET_TIMEOUT seconds (15 by default), says so in words, and keeps the changes.
    @Test func aHungServerCostsABoundedWaitAndAClearMessage() throws {
        let listener = try HungListener()
        let device = Device(root, "hung")
        try device.ok("add", "Candles")
        let config = #"{"account": "alice", "server": "http://127.0.0.1:\#(listener.port)", "token": "t0k3n"}"#
        try Data(config.utf8).write(to: URL(fileURLWithPath: device.directory + "/config.json"))
        let pending = try device.ok("status", "--json")

        var started = Date()
        let quick = try Executables.run(
            "basket", ["--db", device.directory, "sync"], environment: ["BASKET_TIMEOUT": "2"], timeout: 60)
        let quickSeconds = Date().timeIntervalSince(started)
        #expect(quick.status == 1)
        #expect(quick.stderr.contains("the server did not answer within 2 s"), "\(quick.stderr)")
        #expect(quick.stderr.contains("wait here; the next sync sends them"), "\(quick.stderr)")
        #expect(!quick.stderr.contains("NSURLErrorDomain"))
        #expect(quickSeconds < 10, "took \(quickSeconds) s")

        started = Date()
        let fallback = try Executables.run("basket", ["--db", device.directory, "sync"], timeout: 90)
        let seconds = Date().timeIntervalSince(started)
        #expect(fallback.status == 1 && fallback.stderr.contains("did not answer within 15 s"), "\(fallback.stderr)")
        #expect(seconds < 40, "took \(seconds) s")
        #expect(try device.ok("status", "--json") == pending)
        let bad = try Executables.run(
            "basket", ["--db", device.directory, "sync"], environment: ["BASKET_TIMEOUT": "0"])
        #expect(bad.status == 1 && bad.stderr.contains("BASKET_TIMEOUT"))
    }

    @Test func aViewerIsToldAtOnceAndAnArchivedListSaysWhoCanBringItBack() throws {
        let server = try ServerProcess(dataDirectory: root.file("server-roles"))
        let olga = try Device.signedUp("olga", on: server, in: root)
        let vic = try Device.signedUp("vic", on: server, in: root)
        let ed = try Device.signedUp("eddie", on: server, in: root)
        try olga.ok("list", "new", "Home")
        try olga.ok("add", "Soap")
        try olga.share(with: vic, role: "viewer")
        try olga.share(with: ed, role: "editor")
        let share = try vic.run("share")
        #expect(share.status == 1 && share.stderr.contains("viewers cannot invite"), "\(share.stderr)")
        let demote = try olga.run("members", "role", "olga", "viewer")
        #expect(demote.stderr.contains("cannot become a viewer"), "\(demote.stderr)")
        try olga.ok("list", "archive")
        try ed.ok("sync")
        let refused = try ed.run("add", "Towels")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("Home is archived") && refused.stderr.contains("An owner of the list"))
        #expect(!refused.stderr.contains("basket list unarchive"), "\(refused.stderr)")
        let owner = try olga.run("add", "Towels")
        #expect(owner.stderr.contains("'basket list unarchive Home' brings it back"), "\(owner.stderr)")
    }
}

extension Device {
    /// Alice and bobby, on `server`: alice's list "Family" with Milk, shared with bobby.
    static func family(on server: ServerProcess, in root: TemporaryDirectory) throws -> (Device, Device) {
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bobby", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk")
        try alice.share(with: bob)
        return (alice, bob)
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes each connection, and
/// nothing ever answers (a hung server).
final class HungListener {
    let socket: Int32
    let port: Int

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = size
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}

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
        // The name cut at 24 columns with an ellipsis, then two spaces, then the time.
        #expect(lines.contains { $0.hasPrefix("   * \"Organic whole milk fro…  20") }, "\(text)")
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

        // Offline (no server answering), writes are told by device, never by a guess.
        _ = server.stop()
        let offline = try alice.ok("history", "Milk")
        #expect(offline.contains("another device (") && offline.contains("you, this device"), "\(offline)")
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
        Thread.sleep(forTimeInterval: 5.5)
        let pulled = try alice.ok("ls")
        #expect(pulled.contains("Tea") && !pulled.contains("As of"), "\(pulled)")
        // Status says when a write command's send last reached the server.
        let bobStatus = try bob.ok("status")
        #expect(bobStatus.contains("changes sent "), "\(bobStatus)")

        Thread.sleep(forTimeInterval: 5.5)
        #expect(try alice.ok("ls", "--no-sync").contains("As of 5 s ago (--no-sync)"))
        _ = server.stop()
        let down = try alice.ok("ls")
        #expect(down.contains("Tea"), "\(down)")
        // Why, as the transport says it: refused (one server), an empty reply (behind a proxy).
        #expect(down.contains("As of ") && down.contains(" s ago ("), "\(down)")
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
            (devices as? [[String: Any]])?.first { $0["current"] as? Bool == false }?["id"] as? String)
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
        #expect((json as? [[String: Any]])?.count == 2)
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
