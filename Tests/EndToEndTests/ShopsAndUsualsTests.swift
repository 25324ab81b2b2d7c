import Foundation
import TestServers
import TestSupport
import Testing

/// Shops and usuals over six weeks of a family's trips, with frozen clocks (BASKET_CLOCK_MS): real
/// `basket` processes on two devices and a real server. Bob walks Lidl every week checking off
/// fruit before dairy; the shop's hand-set order (dairy first) turns after three trips, on Alice's
/// device too, while the aisle Alice pinned stays; butter, marked for Rewe, is hidden at Lidl; milk,
/// bought every week, becomes a usual due on day 42, bread bought once does not, and
/// `add --due` adds milk alone.
struct ShopsAndUsualsTests {
    let root = TemporaryDirectory("shops-usuals")
    static let day: UInt64 = 86_400_000

    struct Usuals: Decodable {
        struct Entry: Decodable {
            var name: String
            var purchases: Int
            var intervalDays: Double
            var isDue: Bool
            var onList: Bool
        }
        var usuals: [Entry]
    }

    struct ShopJSON: Decodable {
        var name: String
        var aisles: [String]
        var pinned: [String]
        var trips: Int
    }

    struct Added: Decodable {
        struct Entry: Decodable {
            struct Item: Decodable { var name: String }
            var item: Item
            var outcome: String
        }
        var added: [Entry]
    }

    @Test func sixWeeksOfTripsTeachTheOrderAndTheUsuals() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        // Six weeks ago and a bit: the server takes writes from the past, never from its future.
        let start = UInt64(Date().timeIntervalSince1970 * 1000) - 50 * Self.day
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        func at(_ ms: UInt64) -> [String: String] { ["BASKET_CLOCK_MS": String(ms), "TZ": "UTC"] }

        try alice.ok("list", "new", "Family", environment: at(start))
        try alice.ok("shops", "add", "Lidl", environment: at(start))
        try alice.ok("shops", "add", "Rewe", environment: at(start))
        try alice.ok(
            "aisles", "--shop", "lidl", "set", "Bakery, Dairy & eggs, Fruit & vegetables", environment: at(start))
        try alice.ok("add", "butter @dairy", environment: at(start))
        try alice.ok("set", "butter", "--shop", "Rewe", environment: at(start))
        try alice.ok("sync", environment: at(start))
        try alice.share(with: bob)

        // Only an owner pins an aisle: Bob (an editor) is refused, Alice pins the bakery.
        let refused = try bob.run("aisles", "--shop", "Lidl", "pin", "Bakery")
        #expect(refused.status != 0 && refused.stderr.contains("owner"), "\(refused.stderr)")
        try alice.ok("aisles", "--shop", "Lidl", "pin", "Bakery", environment: at(start + 1_000))
        try alice.ok("sync", environment: at(start + 1_000))

        let fruit = ["apples", "bananas", "pears", "plums", "kiwis", "grapes"]
        for week in 0..<6 {
            let t = start + UInt64(week) * 7 * Self.day
            try bob.ok("add", "milk, \(fruit[week])" + (week == 0 ? ", bread" : ""), environment: at(t))
            try bob.ok("shopping", "start", "--at", "Lidl", environment: at(t))
            if week == 0 {
                // At Lidl, butter (for Rewe) is left out; the hand-set order leads with the bakery.
                let walk = try bob.ok("ls", environment: at(t))
                #expect(walk.contains("At Lidl") && walk.contains("1 item for other shops hidden"), "\(walk)")
                #expect(!walk.contains("butter"), "\(walk)")
                try bob.ok("check", "bread", environment: at(t + 500))
            }
            try bob.ok("check", fruit[week], environment: at(t + 1_000))
            try bob.ok("check", "milk", environment: at(t + 2_000))
            let done = try bob.ok("shopping", "done", environment: at(t + 3_000))
            #expect(done.contains("learned from \(week + 1) trip"), "\(done)")
            try bob.ok("sync", environment: at(t + 3_000))
        }
        #expect(try bob.ok("ls", "--at-shop", "Rewe", environment: at(start + 36 * Self.day)).contains("butter"))

        // Alice's device has Bob's trips: fruit now comes before dairy, the pinned bakery stays first.
        try alice.ok("sync", environment: at(start + 36 * Self.day))
        let lidl = try JSONDecoder().decode(
            ShopJSON.self,
            from: Data(try alice.ok("aisles", "--shop", "Lidl", "--json", environment: at(start + 36 * Self.day)).utf8))
        #expect(lidl.trips == 6)
        #expect(lidl.aisles == ["Bakery", "Fruit & vegetables", "Dairy & eggs"])
        #expect(lidl.pinned == ["Bakery"])
        let said = try alice.ok("aisles", "--shop", "Lidl", environment: at(start + 36 * Self.day))
        #expect(
            said.contains("Learned from 6 trips, last Saturday") || said.contains("Learned from 6 trips, last"),
            "\(said)")

        func usuals(_ day: UInt64) throws -> [Usuals.Entry] {
            let text = try alice.ok("usuals", "--json", environment: at(start + day * Self.day + 60_000))
            return try JSONDecoder().decode(Usuals.self, from: Data(text.utf8)).usuals
        }
        // Milk, bought six times a week apart, is a usual; bread bought once and each fruit are not.
        let day41 = try usuals(41)
        #expect(day41.map(\.name) == ["milk"])
        #expect(day41.first?.intervalDays == 7 && day41.first?.purchases == 6 && day41.first?.isDue == false)
        #expect(try usuals(42).first?.isDue == true)
        let line = try alice.ok("usuals", environment: at(start + 42 * Self.day + 60_000))
        #expect(line.contains("milk — every week, due today"), "\(line)")

        // `add --due` adds milk alone, once.
        let added = try JSONDecoder().decode(
            Added.self,
            from: Data(try alice.ok("add", "--due", "--json", environment: at(start + 42 * Self.day + 60_000)).utf8))
        #expect(added.added.map(\.item.name) == ["milk"])
        let again = try alice.ok("add", "--due", environment: at(start + 42 * Self.day + 120_000))
        #expect(again.contains("No usual is due"), "\(again)")

        // "Not anymore": milk is no usual until bought three times more; back, it is again.
        try alice.ok("usuals", "dismiss", "milk", environment: at(start + 42 * Self.day + 180_000))
        #expect(try usuals(43).isEmpty)
        try alice.ok("usuals", "back", "milk", environment: at(start + 43 * Self.day))
        #expect(try usuals(43).map(\.name) == ["milk"])

        // In a shop without a signal: the trip starts and ends on the device all the same.
        _ = server.stop()
        let offline = try bob.ok("shopping", "start", "--at", "Lidl", environment: at(start + 44 * Self.day))
        #expect(offline.contains("Walking Lidl") && offline.contains("could not be told"), "\(offline)")
        try bob.ok("add", "milk, apples", environment: at(start + 44 * Self.day))
        try bob.ok("check", "apples", "--no-sync", environment: at(start + 44 * Self.day + 1_000))
        try bob.ok("check", "milk", "--no-sync", environment: at(start + 44 * Self.day + 2_000))
        let ended = try bob.ok("shopping", "done", environment: at(start + 44 * Self.day + 3_000))
        #expect(ended.contains("learned from 7 trips") && ended.contains("could not be told"), "\(ended)")
    }

    /// The interactive mode on a trip to Lidl, on a device without a server: the list walks Lidl's
    /// order, butter (for Rewe) is left out, an item without an aisle is under "(unknown aisle)";
    /// milk, due again, leads what is offered with nothing typed and while typing "mi".
    @Test func theInteractiveModeWalksTheShopAndOffersWhatIsDue() throws {
        let device = Device(root, "solo")
        let start: UInt64 = 1_796_000_000_000
        func at(_ ms: UInt64) -> [String: String] { ["BASKET_CLOCK_MS": String(ms), "TZ": "UTC"] }
        try device.ok(
            "add", "milk @dairy, cheese @dairy, bread @bakery, butter @dairy, zorbo widget", environment: at(start))
        try device.ok("shops", "add", "Lidl", environment: at(start))
        try device.ok("shops", "add", "Rewe", environment: at(start))
        try device.ok("aisles", "--shop", "Lidl", "set", "Dairy & eggs, Bakery", environment: at(start))
        try device.ok("set", "butter", "--shop", "Rewe", environment: at(start))
        for week in 0..<3 {
            try device.ok("add", "milk", environment: at(start + UInt64(week) * 7 * Self.day))
            try device.ok("check", "milk", environment: at(start + UInt64(week) * 7 * Self.day + 1_000))
        }
        let now = start + 28 * Self.day
        try device.ok("shopping", "start", "--at", "Lidl", environment: at(now))
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)",
            environment: at(now).merging(["NO_COLOR": "1", "LANG": "en_GB.UTF-8"]) { a, _ in a })
        let screen = pane.wait("the walk of Lidl") {
            $0.contains("+ milk  (due)") && $0.contains("(unknown aisle)") && $0.contains("[ ] zorbo widget")
        }
        let lines = screen.split(separator: "\n").map(String.init)
        #expect(!screen.contains("butter"), "\(screen)")
        let due = try #require(lines.firstIndex { $0.contains("+ milk  (due)") })
        let dairy = try #require(lines.firstIndex { $0 == "Dairy & eggs" })
        let bakery = try #require(lines.firstIndex { $0 == "Bakery" })
        let unknown = try #require(lines.firstIndex { $0 == "(unknown aisle)" })
        #expect(due < dairy && dairy < bakery && bakery < unknown, "\(screen)")
        try pane.type("mi")
        let typed = pane.wait("the offers for mi") { $0.contains("+ Add ‹mi›") && $0.contains("+ milk  (due)") }
        let rows = typed.split(separator: "\n").map(String.init)
        let create = try #require(rows.firstIndex { $0.contains("+ Add ‹mi›") })
        #expect(rows[create + 1].contains("+ milk  (due)"), "\(typed)")
        try pane.send("Down")
        try pane.send("Enter")
        pane.wait("milk added") { $0.contains("Added milk") }
        try pane.send("Escape")
        #expect(try device.listing("--unchecked").items.map(\.name).contains("milk"))
    }

    /// "Wrong aisle?" in the terminal: on a trip to Lidl, `set milk --aisle Frozen` puts milk under
    /// Frozen at Lidl, while Rewe (and the list without a shop) keep it in Dairy & eggs; without a
    /// trip or --at-shop the option is refused and nothing changes.
    @Test func anAisleTaughtAtAShopStaysThere() throws {
        let device = Device(root, "aisles")
        try device.ok("add", "milk @dairy, peas @frozen")
        try device.ok("shops", "add", "Lidl")
        try device.ok("shops", "add", "Rewe")
        // A shop's name is a shop's: said so when taken or empty, and nothing changes.
        let twice = try device.run("shops", "add", "LIDL")
        #expect(twice.status == 1 && twice.stderr.contains("'Lidl' is already a shop of"), "\(twice.stderr)")
        let empty = try device.run("shops", "add", " ")
        #expect(empty.status == 1 && empty.stderr.contains("a shop's name cannot be empty"), "\(empty.stderr)")
        #expect(try device.ok("shops").split(separator: "\n").count == 3)
        let refused = try device.run("set", "milk", "--aisle", "Frozen")
        #expect(refused.status == 64 && refused.stderr.contains("--aisle"), "\(refused.stderr)")
        try device.ok("shopping", "start", "--at", "Lidl")
        try device.ok("set", "milk", "--aisle", "Frozen")
        func group(_ listing: String, of name: String) -> String? {
            var heading: String?
            for line in listing.split(separator: "\n") {
                if !line.hasPrefix(" ") { heading = String(line) } else if line.hasSuffix(" \(name)") { return heading }
            }
            return nil
        }
        #expect(group(try device.ok("ls"), of: "milk") == "Frozen")
        #expect(group(try device.ok("ls", "--at-shop", "Rewe"), of: "milk") == "Dairy & eggs")
        try device.ok("shopping", "done")
        #expect(group(try device.ok("ls"), of: "milk") == "Dairy & eggs")
        #expect(group(try device.ok("ls", "--at-shop", "Lidl"), of: "milk") == "Frozen")
    }
}
