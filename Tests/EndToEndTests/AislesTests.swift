import Foundation
import TestServers
import TestSupport
import Testing

/// Aisles and scopes: the list walked in the order of the shop, categories remembered, `in:`
/// searches, the interactive groups and scope key, archived lists. Real processes.
@Suite(.serialized)
struct AislesTests {
    let root = TemporaryDirectory("aisles")

    /// A device whose list has Milk in dairy and Cheese in Dairy (one aisle, headed as the first
    /// item by name spells it), Apples in produce, Bread in bakery, Tea without a category
    /// (checked: Jam). The catalogue's aisles are left out (LC_ALL=C is English, and every item
    /// gets its own category here but Tea, whose catalogue aisle is cleared).
    func stocked(_ device: Device) throws {
        try device.ok("add", "Milk, Cheese, Apples, Bread, Tea, Jam")
        try device.ok("set", "tea", "--category", "")
        for (item, category) in [("milk", "dairy"), ("cheese", "Dairy"), ("apples", "produce"), ("bread", "bakery")] {
            try device.ok("set", item, "--category", category)
        }
        try device.ok("check", "jam")
    }

    @Test func lsWalksTheAislesInTheirOrderAndRemembersCategories() throws {
        let device = Device(root, "ls")
        try stocked(device)
        // Without an order: categories alphabetically, then the uncategorised, then the checked.
        #expect(
            try device.ok("ls") == """
                Shopping (5 to buy, 1 checked)
                bakery
                  [ ] Bread
                Dairy
                  [ ] Cheese
                  [ ] Milk
                produce
                  [ ] Apples
                (no category)
                  [ ] Tea
                checked
                  [x] Jam  #Pantry

                """)
        #expect(try device.ok("aisles", "set", "Produce, dairy,bakery").contains("Produce, dairy, bakery"))
        let walked = try device.ok("ls").split(separator: "\n").map(String.init)
        #expect(
            walked.filter { !$0.hasPrefix(" ") }.dropFirst() == [
                "Produce", "dairy", "bakery", "(no category)", "checked",
            ])
        #expect(try device.ok("ls", "--flat").contains("[ ] Milk  #dairy"))
        #expect(try device.ok("aisles") == "Aisles of Shopping: Produce, dairy, bakery\n")

        // A category typed once stays with the name: Milk removed and added again is in dairy.
        try device.ok("rm", "milk")
        try device.ok("add", "milk")
        #expect(try device.ok("ls").contains("dairy\n  [ ] Cheese\n  [ ] milk\n"))

        // in: narrows a search to a category (a prefix is enough, accents and case folded).
        let found = try device.ok("search", "in:dai")
        #expect(found.contains("Cheese") && found.contains("milk") && !found.contains("Apples"))
        let none = try device.run("search", "in:produce", "milk")
        #expect(none.status == 1 && !none.stdout.contains("[ ] milk"))
        try device.ok("aisles", "clear")
        #expect(try device.ok("aisles").contains("No aisle order"))
        let bad = try device.run("aisles", "sort")
        #expect(bad.status == 64)
    }

    @Test func theAisleOrderSyncsAndAnArchivedListIsReadOnlyEverywhere() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("aisles", "set", "produce, dairy")
        try alice.share(with: bob)
        #expect(try bob.ok("aisles") == "Aisles of Family: produce, dairy\n")

        let notOwner = try bob.run("list", "archive")
        #expect(notOwner.status == 1 && notOwner.stderr.contains("only an owner"), "\(notOwner.stderr)")
        #expect(try alice.ok("list", "archive").contains("Archived Family"))
        try bob.ok("sync")
        let refused = try bob.run("add", "Tea")
        #expect(refused.status == 1 && refused.stderr.contains("Family is archived"), "\(refused.stderr)")
        let (lists, all) = (try bob.ok("lists"), try bob.ok("lists", "--all"))
        #expect(!lists.contains("Family") && all.contains("archived"))
        try alice.ok("list", "unarchive", "Family")
        try bob.ok("sync")
        try bob.ok("add", "Tea")
        try alice.ok("sync")
        #expect(try alice.listing().items.map(\.name) == ["Tea"])
    }

    @Test func theInteractiveScreenShowsTheAislesAndCyclesScopes() throws {
        let device = Device(root, "interactive")
        try stocked(device)
        try device.ok("aisles", "set", "produce, dairy, bakery")
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)", environment: ["NO_COLOR": "1"])
        let screen = pane.wait("the aisles") { $0.contains("produce") && $0.contains("[ ] Apples") }
        let rows = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let headings = rows.filter { ["produce", "dairy", "bakery", "(no category)", "checked"].contains($0) }
        #expect(headings == ["produce", "dairy", "bakery", "(no category)", "checked"], "\(screen)")
        #expect(screen.contains("scope: all (^S)"))
        #expect(screen.contains("> [ ] Apples"))  // the first item row is selected, not a heading
        try pane.send("C-s")
        pane.wait("to buy") { $0.contains("scope: to buy") && !$0.contains("Jam") && $0.contains("Tea") }
        try pane.send("C-s")
        pane.wait("checked") { $0.contains("scope: checked") && $0.contains("[x] Jam") && !$0.contains("Milk") }
        try pane.send("C-s")
        pane.wait("produce only") { $0.contains("scope: produce") && $0.contains("Apples") && !$0.contains("Milk") }
        try pane.send("C-s")
        pane.wait("dairy only") { $0.contains("scope: dairy") && $0.contains("Cheese") && !$0.contains("Apples") }
        try pane.send("Enter")  // Cheese, the first dairy item: checked, within the scope
        pane.wait("cheese checked") { $0.contains("Checked Cheese") }
        try pane.send("Escape")
        #expect(try device.listing("--checked").items.map(\.name).sorted() == ["Cheese", "Jam"])
    }
}
