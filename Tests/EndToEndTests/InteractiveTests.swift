import Foundation
import TestServers
import TestSupport
import Testing

/// The interactive mode in a real terminal: tmux runs `basket` in an 80×24 pane; the test types
/// keys and reads the screen after each.
final class TmuxPane {
    let name = "basket-\(UUID().uuidString.prefix(8))"

    /// tmux with a server of this pane's own, on a socket of its own (`-S`, removed with the
    /// pane): a pane killed as the last session of a shared server takes the server down while
    /// another test's `new-session` may be talking to it ("server exited unexpectedly").
    var socket: String { "/tmp/\(name).tmux" }
    var tmux: String { "tmux -S \(socket)" }

    init(command: String, environment: [String: String] = [:]) throws {
        let exports = environment.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let result = try Executables.runShell(
            "\(tmux) new-session -d -s \(name) -x 80 -y 24 \"env \(exports) \(command)\"")
        guard result.status == 0 else { throw TmuxError(message: result.stderr) }
    }

    deinit {
        _ = try? Executables.runShell("\(tmux) kill-server 2>/dev/null")
        try? FileManager.default.removeItem(atPath: socket)
    }

    struct TmuxError: Error { var message: String }

    func send(_ keys: String...) throws {
        _ = try Executables.runShell("\(tmux) send-keys -t \(name) " + keys.map { "'\($0)'" }.joined(separator: " "))
    }

    func type(_ text: String) throws {
        let quoted = text.replacingOccurrences(of: "'", with: "'\\''")
        _ = try Executables.runShell("\(tmux) send-keys -t \(name) -l '\(quoted)'")
    }

    var screen: String {
        (try? Executables.runShell("\(tmux) capture-pane -p -t \(name)").stdout) ?? ""
    }

    /// The screen's rows as tmux holds them, and the lines they make once rows that wrapped
    /// (text written past the last column) are joined again: fewer lines than rows means
    /// something did not fit the width.
    var rowsAndLines: (rows: [Substring], lines: [Substring]) {
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let joined = (try? Executables.runShell("\(tmux) capture-pane -p -J -t \(name)").stdout) ?? ""
        return (Array(rows), Array(joined.split(separator: "\n", omittingEmptySubsequences: false).dropLast()))
    }

    var isAlive: Bool { (try? Executables.runShell("\(tmux) has-session -t \(name) 2>/dev/null").status) == 0 }

    /// Waits until the screen satisfies `condition` (at most 5 s); returns the screen.
    @discardableResult
    func wait(_ what: String, _ condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(5)
        var text = screen
        while !condition(text) && Date() < deadline {
            usleep(50_000)
            text = screen
        }
        #expect(condition(text), "waiting for \(what); the screen shows:\n\(text)")
        return text
    }
}

@Suite(.serialized)
struct InteractiveTests {
    let root = TemporaryDirectory("interactive")

    func start(_ device: Device, environment: [String: String] = [:]) throws -> TmuxPane {
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)",
            environment: environment.merging(["NO_COLOR": "1"]) { a, _ in a })
        pane.wait("the prompt") { $0.contains("Search or add items") }
        return pane
    }

    /// A weak match on the list never hides the catalogue: "choc" offers chocolate (a name it
    /// begins) before "did you mean chicken breast?" (a slip), in the order the phone gives them.
    @Test func theCatalogueIsOfferedBesideDidYouMean() throws {
        let device = Device(root, "choc")
        try device.ok("add", "chicken breast, Milk")
        let pane = try start(device, environment: ["LANG": "en_GB.UTF-8"])
        try pane.type("choc")
        let screen = pane.wait("the offers for choc") {
            $0.contains("+ chocolate  (suggested)") && $0.contains("(did you mean?)")
        }
        let lines = screen.split(separator: "\n")
        let chocolate = try #require(lines.firstIndex { $0.contains("+ chocolate  (suggested)") })
        let meant = try #require(lines.firstIndex { $0.contains("chicken breast") && $0.hasSuffix("(did you mean?)") })
        #expect(lines.firstIndex { $0.hasPrefix("> + Add ‹choc›") } == 2 && chocolate < meant, "\(screen)")
        try pane.send("Escape")
    }

    @Test func resultsFollowEveryKeystrokeAndEnterTogglesOrAdds() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk, Oat milk, Bread, Crème fraîche")
        let pane = try start(device)
        pane.wait("the whole list") { $0.contains("[ ] Bread") && $0.contains("[ ] Oat milk") }
        try pane.type("m")
        pane.wait("items with m") { $0.contains("> m") && $0.contains("Milk") && !$0.contains("Bread") }
        try pane.type("il")
        // Enter adds what was typed: the create row is first and selected; the closest item under it.
        let milk = pane.wait("the offer") { $0.contains("+ Add ‹mil›") }
        #expect(milk.contains("> + Add ‹mil›"))
        let lines = milk.split(separator: "\n")
        let offer = try #require(lines.firstIndex { $0.hasPrefix("> + Add ‹mil›") })
        #expect(lines[offer + 1].hasPrefix("  [ ] Milk") && lines[offer + 1].hasSuffix("(did you mean?)"), "\(milk)")
        // The catalogue's names beside it, ranked with it (Offers): "milo" begins with "mil" too.
        #expect(lines.contains { $0.contains("+ milo") && $0.hasSuffix("(suggested)") }, "\(milk)")
        // ↓ to another match toggles it (the closest item's row adds it, as the phone's button does).
        let oat = try #require(lines.firstIndex { $0.contains("[ ] Oat milk") })
        for _ in offer..<oat { try pane.send("Down") }
        pane.wait("Oat milk selected") { $0.contains("> [ ] Oat milk") }
        try pane.send("Enter")
        pane.wait("Oat milk checked") { $0.contains("Checked Oat milk") && $0.contains("[x] Oat milk") }
        try pane.send("C-u")
        try pane.type("creme")
        pane.wait("accents folded") { $0.contains("Crème fraîche") && !$0.contains("Milk") }
        try pane.send("C-u")
        try pane.type("2 kimchi")
        pane.wait("the offer for kimchi, its quantity apart") { $0.contains("+ Add ‹kimchi› (2)") }
        try pane.send("Enter")
        pane.wait("added") { $0.contains("Added kimchi") }
        // Several items at once, as `basket add` takes them: the create row says how many.
        try pane.type("tea, coffee; 3 jam")
        pane.wait("the row adding three") { $0.contains("+ Add 3 items: ‹tea›, ‹coffee›, ‹jam› (3)") }
        try pane.send("Enter")
        pane.wait("three added") { $0.contains("Added tea, coffee, jam") && $0.contains("[ ] coffee") }
        try pane.send("Escape")
        let deadline = Date().addingTimeInterval(5)
        while pane.isAlive && Date() < deadline { usleep(50_000) }
        #expect(!pane.isAlive)
        let listing = try device.ok("ls", "--json")
        #expect(listing.contains("\"name\":\"kimchi\"") && listing.contains("\"quantity\":\"2\""))
        let added = try device.listing().items.map(\.name)
        #expect(["tea", "coffee", "jam"].allSatisfy(added.contains) && !added.contains { $0.contains(",") })
        #expect(listing.contains("\"quantity\":\"3\""))
        #expect(try device.listing("--checked").items.map(\.name) == ["Oat milk"])
    }

    /// In an 80×24 terminal the screen is 24 rows with the title on the first and the prompt on
    /// the second, and no row wraps, whatever the names: long ones, Chinese (two columns a
    /// character), fullwidth letters, emoji, more items than rows, a query longer than a row.
    @Test func theScreenFitsAn80By24TerminalWhateverTheNames() throws {
        let device = Device(root, "d")
        let names =
            [
                "Organic free-range " + String(repeating: "extra large ", count: 14) + "eggs",
                String(repeating: "有機牛乳", count: 15),
                String(repeating: "Ｍｉｌｋ", count: 12),
                String(repeating: "🥛", count: 45),
                String(repeating: "Crème fraîche ", count: 8),
            ] + (1...40).map { "Item \($0 < 10 ? "0" : "")\($0)" }
        try device.ok("add", names.joined(separator: ", "))
        let pane = try start(device)
        func expectFits(_ what: String) {
            let (rows, lines) = pane.rowsAndLines
            #expect(rows.count == 24, "\(what): \(rows.count) rows")
            #expect(lines.count == rows.count, "\(what): a row wrapped:\n\(lines.joined(separator: "\n"))")
            #expect(rows.first?.contains("Search or add items") == true, "\(what): the title scrolled away")
            #expect(rows.dropFirst().first?.hasPrefix(">") == true, "\(what): no prompt on the second row")
        }
        pane.wait("the list") { $0.contains("Item 01") }
        expectFits("the whole list")
        // Eggs and milk have aisles (the catalogue's), so the items without one come under a heading.
        for _ in 0..<50 { try pane.send("Down") }
        pane.wait("scrolled down") { !$0.contains("Item 01") && $0.contains("Item 40") }
        expectFits("scrolled to the end")
        try pane.type(String(repeating: "milk ", count: 30))
        pane.wait("a long query") { $0.contains("milk milk milk") }
        expectFits("a query of 150 characters")
        try pane.send("C-u")
        try pane.type("有機")
        pane.wait("the Chinese name found") { $0.contains("> 有機") && $0.contains("  [ ] 有機牛乳") }
        expectFits("the Chinese name selected")
    }

    @Test func anExactMatchIsAlreadyOnTheListOrGetsUnchecked() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk, Bread")
        try device.ok("check", "bread")
        let pane = try start(device)
        try pane.type("milk")
        pane.wait("milk typed") { $0.contains("> milk") }
        try pane.send("Enter")
        pane.wait("already there") { $0.contains("Milk is already on the list") }
        try pane.send("C-u")
        try pane.type("BREAD")
        pane.wait("bread typed") { $0.contains("> BREAD") && $0.contains("[x] Bread") }
        try pane.send("Enter")
        pane.wait("unchecked") { $0.contains("Unchecked Bread") }
        try pane.send("C-c")
        let deadline = Date().addingTimeInterval(5)
        while pane.isAlive && Date() < deadline { usleep(50_000) }
        #expect(!pane.isAlive)
        #expect(try device.listing("--checked").items.isEmpty)
    }

    @Test func tabCompletesTokensAndNames() throws {
        let device = Device(root, "d")
        try device.ok("add", "Greek yogurt, Milk")
        try device.ok("check", "milk")
        let pane = try start(device)
        try pane.type("is:d")
        try pane.send("Tab")
        pane.wait("is:done completed") { $0.contains("> is:done") && $0.contains("[x] Milk") && !$0.contains("Greek") }
        try pane.send("C-u")
        try pane.type("gr yo")
        try pane.send("Tab")
        pane.wait("the name completed") { $0.contains("> Greek yogurt") }
    }

    @Test func removedItemsAreSuggestedAndComeBackWithEnter() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk, Eggs")
        try device.ok("rm", "eggs")
        let pane = try start(device)
        pane.wait("the suggestion") { $0.contains("\u{21BA} Eggs") }
        try pane.send("Down")
        try pane.send("Enter")
        pane.wait("eggs back") { $0.contains("Added Eggs again") && $0.contains("[ ] Eggs") }
        #expect(try device.listing().items.map(\.name).sorted() == ["Eggs", "Milk"])
    }

    /// Enter adds what was typed, never a row like it: "Batter" with a removed "Butter" adds
    /// Batter; "mlik" with Milk on the list shows Milk right under the create row ("did you
    /// mean?"), and Down then Enter takes it.
    @Test func enterAddsWhatWasTypedAndTheClosestItemIsOneKeyAway() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk, Butter")
        try device.ok("check", "milk")
        try device.ok("rm", "butter")
        let pane = try start(device)
        try pane.type("Batter")
        pane.wait("the create row first") {
            $0.contains("> + Add ‹Batter›") && $0.contains("  \u{21BA} Butter  (had it before)")
        }
        try pane.send("Enter")
        pane.wait("Batter added as typed") { $0.contains("Added Batter") }
        try pane.type("mlik")
        pane.wait("did you mean Milk") {
            $0.contains("> + Add ‹mlik›")
                && $0.split(separator: "\n").contains { $0.contains("[x] Milk") && $0.hasSuffix("(did you mean?)") }
        }
        try pane.send("Down")
        try pane.send("Enter")
        pane.wait("Milk brought back") { $0.contains("Brought back Milk") }
        #expect(try device.listing().items.map(\.name).sorted() == ["Batter", "Milk"])
    }

    @Test func theCatalogueSuggestsWhatTheListNeverHadBelowTheCreateRow() throws {
        let device = Device(root, "d")
        try device.ok("add", "Eggs")
        let pane = try start(device, environment: ["LC_ALL": "en_US.UTF-8"])
        // Enter on a new name adds it as typed, whatever the catalogue has.
        try pane.type("Tea")
        pane.wait("the create row selected") {
            $0.contains("> + Add ‹Tea›") && $0.contains("  + tea bags  (suggested)")
        }
        try pane.send("Enter")
        pane.wait("Tea added as typed") { $0.contains("Added Tea") }
        // A beginning: the catalogue's names below the create row; Tab completes to the first.
        try pane.type("tomat")
        pane.wait("the catalogue's row below the create row") {
            $0.contains("> + Add ‹tomat›") && $0.contains("  + tomatoes  (suggested)")
        }
        try pane.send("Tab")
        pane.wait("the name completed") { $0.contains("> tomatoes\n") || $0.contains("> tomatoes ") }
        try pane.send("C-u")
        // Down to the suggestion, Enter adds it.
        try pane.type("chees")
        pane.wait("cheese suggested") { $0.contains("  + cheese  (suggested)") }
        try pane.send("Down")
        try pane.send("Enter")
        pane.wait("cheese added") { $0.contains("Added cheese") }
        #expect(try device.listing().items.map(\.name).sorted() == ["Eggs", "Tea", "cheese"])
        // Something on the list matches: the catalogue is still offered (Offers), ranked with the
        // list's own match, which comes first among names that begin alike.
        try pane.type("egg")
        let screen = pane.wait("the list's own match, then the catalogue's") {
            $0.contains("[ ] Eggs") && $0.contains("(suggested)")
        }
        let lines = screen.split(separator: "\n")
        let offer = try #require(lines.firstIndex { $0.hasPrefix("> + Add ‹egg›") })
        #expect(lines[offer + 1].contains("[ ] Eggs") && lines[offer + 1].hasSuffix("(did you mean?)"), "\(screen)")
        #expect(lines[offer + 2].contains("(suggested)"), "\(screen)")
    }

    @Test func aSignalRestoresTheTerminal() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        let pane = try TmuxPane(
            command: "sh -c '\(Executables.path("basket")) --db \(device.directory); stty -a; sleep 30'",
            environment: ["NO_COLOR": "1"])
        pane.wait("the prompt") { $0.contains("Search or add items") }
        _ = try Executables.runShell("pkill -TERM -f -- '--db \(device.directory)$'")
        // Back in cooked mode: stty reports echo and icanon switched on again.
        pane.wait("the terminal restored") { $0.contains(" icanon ") && $0.contains(" echo ") }
    }

    @Test func withoutATerminalItPrintsTheList() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        let result = try Executables.run("basket", ["--db", device.directory])
        #expect(result.status == 0 && result.stdout.contains("[ ] Milk"))
    }
}

@Suite(.serialized)
struct InteractiveSyncTests {
    let root = TemporaryDirectory("interactive-sync")

    /// A server, Alice's list "Family" with Milk on it, shared with Bob.
    func family() throws -> (ServerProcess, Device, Device) {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        return (server, alice, bob)
    }

    /// `device`'s interactive mode, once it shows the list and its long-poll is parked.
    func openScreen(_ device: Device, on server: ServerProcess) throws -> TmuxPane {
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)", environment: ["NO_COLOR": "1"])
        pane.wait("the list") { $0.contains("Family") && $0.contains("[ ] Milk") && $0.contains("synced") }
        #expect(try server.waitForMetric("basket_watchers", atLeast: 1), "the screen's long-poll never parked")
        return pane
    }

    @Test func changesFromAnotherDeviceAppearWhileItIsOpen() throws {
        let (server, alice, bob) = try family()
        let pane = try openScreen(bob, on: server)
        try alice.ok("add", "Eggs")
        try alice.ok("sync")
        pane.wait("alice's Eggs on bob's screen") { $0.contains("[ ] Eggs") }
    }

    /// Made a viewer while the screen is open: the server ends the long-poll with the
    /// new role, the screen says so at once, and an Enter is refused in words, the screen open.
    @Test func aMemberMadeAViewerWhileTheScreenIsOpenIsToldAndNothingChanges() throws {
        let (server, alice, bob) = try family()
        let pane = try openScreen(bob, on: server)
        try alice.ok("members", "role", "bobby", "viewer")
        pane.wait("the new role said") { $0.contains("You can only view this list now") }
        try pane.type("Cake")
        try pane.send("Enter")
        pane.wait("the add refused in words") { $0.contains("Not changed: you can only view") }
        #expect(pane.isAlive)
        #expect(try !bob.ok("ls").contains("Cake"))
    }

    // Several processes on one device's copy: the interactive mode, a
    // `sync --watch` and single commands in a third terminal.
    @Test func theInteractiveModeAndAWatchSeeWhatAThirdCommandWrites() throws {
        let (server, alice, bob) = try family()
        defer { withExtendedLifetime(server) {} }
        let basket = Executables.path("basket")
        let screen = try TmuxPane(command: "\(basket) --db \(alice.directory)", environment: ["NO_COLOR": "1"])
        screen.wait("the list") { $0.contains("Family") && $0.contains("[ ] Milk") && $0.contains("synced") }
        let watch = try TmuxPane(command: "\(basket) --db \(alice.directory) sync --watch", environment: [:])
        watch.wait("the watch") { $0.contains("Watching Family") }
        // Five writes from a third process, each without a sync of its own: before, the screen
        // showed none of them and the watch printed only those it happened to pull.
        let names = ["Eggs", "Tea", "Jam", "Rice", "Soap"]
        for name in names { try alice.ok("add", name, "--no-sync") }
        try alice.ok("check", "Milk", "--no-sync")
        screen.wait("the third command's adds on the screen") { text in
            names.allSatisfy { text.contains("[ ] \($0)") } && text.contains("[x] Milk")
        }
        watch.wait("every add printed by the watch") { text in
            names.allSatisfy { text.contains("+ \($0)") } && text.contains("[x] Milk")
        }
        // `--no-sync` kept them here; a sync sends them, and Bob gets all six changes.
        try alice.ok("sync")
        try bob.ok("sync")
        let bobs = try bob.listing().items
        #expect(Set(bobs.filter { !$0.checked }.map(\.name)) == Set(names))
        #expect(bobs.filter(\.checked).map(\.name) == ["Milk"])
    }

    @Test func bothComeBackWithinSecondsAfterTheServerWasAway() throws {
        let (server, alice, _) = try family()
        let basket = Executables.path("basket")
        let screen = try TmuxPane(command: "\(basket) --db \(alice.directory)", environment: ["NO_COLOR": "1"])
        screen.wait("the list") { $0.contains("[ ] Milk") && $0.contains("synced") }
        let watch = try TmuxPane(command: "\(basket) --db \(alice.directory) sync --watch", environment: [:])
        watch.wait("the watch") { $0.contains("Watching Family") }
        _ = server.stop()
        // Saved here while the server is away; the open screen sends it when it is back.
        _ = try alice.run("add", "Eggs")
        screen.wait("the outage") { $0.contains("can't reach the server") }
        try server.start()
        // Retries come 1 s, 2 s, then 4 s apart: both are back within the 5 s a wait allows.
        screen.wait("the screen synced again") { $0.contains("synced") && $0.contains("[ ] Eggs") }
        watch.wait("the watch connected again") { $0.contains("connected again") }
    }
}
