import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// Several items at once, and aisles as they are typed.
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

    @Test func addPutsItemsInAnAisleWithAnAtAHashOrCategory() throws {
        let device = Device(root, "aisles")
        // "Dairy" is the catalogue's "Dairy & eggs", not an aisle beside it; "Bakery goods" is new.
        try device.ok("add", "Milk @Dairy, Sourdough #Bakery goods")
        try device.ok("add", "yoghurt @bakery goods")  // the list's spelling of the aisle
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
        #expect(categories["Milk"] == "Dairy & eggs" && categories["yoghurt"] == "Bakery goods")
        #expect(categories["Sourdough"] == "Bakery goods")
        #expect(categories["Tea"] == "Drinks" && categories["Coffee"] == "Drinks")
        #expect(categories["#1 hits"] != nil)
        #expect(try device.run("add", "Salt", "--category", " ").status == 64)
        #expect(try device.run("add", "Salt #\u{1B}[2J").status == 1)
    }

    /// An amount added to an item still to buy is added to its own, in its unit, and said;
    /// `undo` takes the sum back; a checked item brought back starts a new amount.
    @Test func addingWhatIsThereSumsItsAmount() throws {
        let device = Device(root, "amounts")
        try device.ok("add", "2 milk, 500 g flour, 1,5 l water")
        #expect(try device.ok("add", "milk x1").contains("milk: now 3"))
        #expect(try device.ok("add", "1 pack flour").contains("flour: now 500 g + 1 pack"))
        #expect(try device.ok("add", "water 0,5 l").contains("water: now 2 l"))
        try device.ok("undo")
        try device.ok("undo")
        struct Listing: Decodable {
            struct Item: Decodable {
                var name: String
                var quantity: String?
            }
            var items: [Item]
        }
        func quantities() throws -> [String: String] {
            let output = try device.ok("ls", "--json")
            let listing = try JSONDecoder().decode(Listing.self, from: Data(output.utf8))
            return Dictionary(listing.items.map { ($0.name, $0.quantity ?? "-") }) { a, _ in a }
        }
        #expect(try quantities() == ["milk": "3", "flour": "500 g", "water": "1,5 l"])
        try device.ok("check", "milk")
        #expect(try device.ok("add", "2 milk").contains("Brought back milk (quantity now 2)"))
        #expect(try quantities()["milk"] == "2")
    }

    /// A list names its aisles in the language it was created in, whatever the device adding
    /// to it: a German list files "milk" added from an English terminal under "Milchprodukte &
    /// Eier". An owner changes it; a list made before lists had one takes its aisles' language.
    @Test func aListsAislesAreInItsLanguageWhateverTheDevice() throws {
        let device = Device(root, "language")
        let german = ["LANG": "de_DE.UTF-8"]
        let english = ["LANG": "en_GB.UTF-8"]
        try device.ok("list", "new", "Einkauf", environment: german)
        try device.ok("add", "Milch", environment: german)
        try device.ok("add", "milk, toilet paper, eggs @dairy", environment: english)
        struct Listing: Decodable {
            struct Item: Decodable {
                var name: String
                var category: String?
            }
            var items: [Item]
        }
        func categories() throws -> [String: String] {
            let output = try device.ok("ls", "--json")
            let listing = try JSONDecoder().decode(Listing.self, from: Data(output.utf8))
            return Dictionary(listing.items.map { ($0.name, $0.category ?? "-") }) { a, _ in a }
        }
        // "milk" is another item than "Milch", in the same aisle.
        #expect(
            try categories() == [
                "Milch": "Milchprodukte & Eier", "milk": "Milchprodukte & Eier", "toilet paper": "Haushalt",
                "eggs": "Milchprodukte & Eier",
            ])
        #expect(try device.ok("list", "language", environment: english).contains("Einkauf: aisles in de"))
        // An owner names them in English from now on; aisles already written keep their names.
        #expect(try device.ok("list", "language", "EN").contains("aisles in en from now on"))
        try device.ok("add", "bread", environment: german)
        #expect(try categories()["bread"] == "Bakery")
        let refused = try device.run("list", "language", "klingon")
        #expect(refused.status == 64 && refused.stderr.contains("not a language the catalogue has"))
        #expect(try device.run("list", "language", "de", "en").status == 64)
    }

    /// `ls --format` writes what is to buy, by aisle, as text to paste into a chat or a note.
    @Test func theListAsTextOrMarkdownToShare() throws {
        let device = Device(root, "share-out")
        try device.ok("add", "2 milk, bread, garden hose, tea", environment: ["LANG": "en_GB.UTF-8"])
        try device.ok("check", "tea")
        try device.ok("set", "bread", "--note", "sliced")
        #expect(
            try device.ok("ls", "--format", "markdown") == """
                # Shopping

                ## Bakery

                - [ ] bread — sliced

                ## Dairy & eggs

                - [ ] 2 milk

                ## Other

                - [ ] garden hose

                """)
        #expect(
            try device.ok("ls", "--format", "TEXT") == """
                Shopping

                Bakery
                - bread — sliced

                Dairy & eggs
                - 2 milk

                Other
                - garden hose

                """)
        #expect(try device.run("ls", "--format", "xml").status == 64)
        #expect(try device.run("ls", "--format", "text", "--plain").status == 64)
        #expect(try device.run("--json", "ls", "--format", "text").status == 64)
    }

    /// `ls` output fed back: `ls --plain` prints names only, and `check -`
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
