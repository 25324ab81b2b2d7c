import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// The habits a shell user brings from git, gh and fzf: help, "did you mean", exit
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

    /// On a terminal `basket ls` shows the catalogue's icon before each name it has one for, and
    /// files what a family types under its aisle; a pipe gets the lines without icons.
    @Test func aTerminalSeesIconsAndAislesAPipeDoesNot() throws {
        let device = Device(root, "icons")
        try device.ok("add", "milk, toilet paper, garden hose, oat milk, frozen broccoli")
        let basket = "\(Executables.path("basket")) --db \(device.directory)"
        let shown = try pane("LANG=en_GB.UTF-8 \(basket) ls").wait("the listing") { $0.contains("EXIT=0") }
        #expect(shown.contains("Dairy & eggs") && shown.contains("  [ ] 🥛 milk") && shown.contains("  [ ] 🥛 oat milk"))
        #expect(shown.contains("Household") && shown.contains("  [ ] 🧻 toilet paper"))
        #expect(shown.contains("Frozen") && shown.contains("  [ ] 🥦 frozen broccoli"))
        #expect(shown.contains("(no category)") && shown.contains("  [ ] garden hose"))
        let piped = try device.ok("ls")
        #expect(piped.contains("  [ ] milk") && !piped.contains("🥛"))
    }

    /// Every line of the README that adds items does, into its aisle, pasted as written into an
    /// interactive bash and an interactive zsh (no startup files: a shell as it comes, and zsh then
    /// takes no `#` for a comment): nothing typed is taken for a comment or ends up in a name.
    @Test(arguments: ["bash --norc --noprofile -i", "zsh -f -i"])
    func theReadmesAddLinesWorkInBashAndZsh(shell: String) throws {
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("basket add ") && !$0.contains("--from")
        }
        #expect(lines.filter { $0.contains(" @") || $0.contains("--category") }.count >= 3, "\(lines)")
        let home = root.file("readme-" + shell.prefix { $0.isLetter })
        let directory = URL(fileURLWithPath: Executables.path("basket")).deletingLastPathComponent().path
        let pane = try TmuxPane(
            command: shell,
            environment: [
                "NO_COLOR": "1", "BASKET_HOME": home, "LANG": "C.UTF-8", "PATH": "\(directory):/usr/bin:/bin",
            ])
        // Output the typed text does not hold: $((6*7)) is 42 only once the shell has run it.
        try pane.type("echo READY:$((6*7))")
        try pane.send("Enter")
        pane.wait("the shell") { $0.contains("READY:42") }
        for (number, line) in lines.enumerated() {
            try pane.type(line)
            try pane.send("Enter")
            try pane.type("echo STATUS\(number):$?:$((6*7))")
            try pane.send("Enter")
            // The status line the shell printed (the typed one holds "$?" and "$((6*7))").
            let done = try Regex("(?m)^STATUS\(number):[0-9]+:42$")
            let screen = pane.wait(line) { $0.contains(done) }
            #expect(screen.contains("STATUS\(number):0:42"), "\(shell): \(line)\n\(screen)")
        }
        let listed = try Executables.run("basket", ["--db", home, "ls", "--json"])
        struct Listing: Decodable {
            struct Item: Decodable {
                var name: String
                var category: String?
            }
            var items: [Item]
        }
        let items = try JSONDecoder().decode(Listing.self, from: Data(listed.stdout.utf8)).items
        #expect(!items.isEmpty)
        for item in items {
            #expect(!item.name.contains("@") && !item.name.contains("#"), "\(shell): \(item.name)")
            #expect(item.category != nil, "\(shell): \(item.name) has no aisle")
        }
        // What the shell would have swallowed as a comment had it been '#party'.
        #expect(items.first { $0.name == "birthday candles" }?.category == "party")
        #expect(items.first { $0.name == "eggs" }?.category == "Dairy & eggs")
        #expect(items.first { $0.name == "bread" }?.category == "Bakery")
        #expect(items.first { $0.name == "tea" }?.category == "Drinks")
    }

    /// Each option is declared once: what a command's usage line names is what its help lists
    /// under OPTIONS (or a global option), each of those is parsed (an unknown one is refused),
    /// and shell completion offers exactly those.
    @Test func everyOptionInAUsageIsListedParsedAndCompleted() throws {
        let device = Device(root, "options")
        func basket(_ arguments: [String]) throws -> ProcessResult {
            try Executables.run("basket", ["--db", device.directory] + arguments)
        }
        let overview = try device.ok("help")
        /// The options a help section lists, one a line: "  -y, --yes  Do not ask first."
        func options(in section: String) -> Set<String> {
            Set(
                section.components(separatedBy: "\n\n")[0].split(separator: "\n")
                    .compactMap { $0.matches(of: /^  (?:-[a-z], )?(--[a-z-]+)/).first.map { String($0.output.1) } })
        }
        let globals = options(in: overview.components(separatedBy: "GLOBAL OPTIONS:\n")[1])
        #expect(globals == ["--db", "--list", "--json", "--no-sync", "--quiet", "--help", "--version"])
        let commands = overview.components(separatedBy: "COMMANDS:")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").map { String($0.dropFirst(2).prefix(15)).trimmingCharacters(in: .whitespaces) }
        #expect(commands.count > 30 && commands.contains("list rm"), "\(commands)")
        for command in commands {
            let words = command.split(separator: " ").map(String.init)
            let help = try basket(["help"] + words).stdout
            let usage = help.split(separator: "\n").first { $0.hasPrefix("USAGE:") } ?? ""
            let named = Set(usage.matches(of: /--[a-z-]+/).map { String($0.output) })
            let listed = options(in: help.components(separatedBy: "\nOPTIONS:\n").dropFirst().first ?? "")
            #expect(named.subtracting(globals) == listed, "basket \(command): usage \(named), OPTIONS \(listed)")
            let completed = Set(
                try basket(["__complete", "options"] + words).stdout.split(separator: "\n").map(String.init))
            #expect(completed == listed.union(globals).subtracting(["--version"]), "basket \(command): \(completed)")
            for option in listed {
                let refused = try basket(words + [option + "x"])
                #expect(refused.status == 64 && refused.stderr.contains("unknown option"), "\(command) \(option)x")
            }
        }
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
        #expect(try device.run("help", "statsu").stderr.contains("did you mean 'status'?"))
        // Every section heading of every command's help stands on a line of its own, after a
        // blank line, and prose after a section's lines is set apart by one.
        for command in [
            "add", "search", "suggest", "ls", "sync", "share", "members", "devices", "leave", "list rm", "logout",
            "remote", "completion", "list new",
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
        // The removal is the journal's last step: undo says it cannot bring Weekly back and does
        // nothing; asked again, it takes back the step before, on Party, and says so.
        let refused = try alice.run("undo")
        #expect(refused.status == 1 && refused.stderr.contains("removed the list 'Weekly'"), "\(refused.stderr)")
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
