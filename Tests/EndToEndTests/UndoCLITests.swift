import Foundation
import TestServers
import TestSupport
import Testing

/// `basket undo` and Ctrl-Z in the interactive mode: real processes, and the undo reaching
/// another device like any edit.
@Suite(.serialized)
struct UndoCLITests {
    let root = TemporaryDirectory("undo")

    func state(_ device: Device) throws -> [String] {
        try device.listing().items.map { "\($0.name)\($0.checked ? " ✓" : "")" }.sorted()
    }

    /// `basket clear` takes the checked items off in one step; one `basket undo` brings them all back.
    @Test func clearRemovesTheCheckedItemsAndOneUndoBringsThemBack() throws {
        let device = Device(root, "clear")
        try device.ok("add", "Milk, Bread, Eggs")
        try device.ok("check", "milk")
        try device.ok("check", "bread")
        #expect(try device.ok("clear") == "Cleared 2 checked items: Bread, Milk\n")
        #expect(try state(device) == ["Eggs"])
        #expect(try device.ok("clear") == "Nothing checked to clear\n")
        try device.ok("undo")
        #expect(try state(device) == ["Bread ✓", "Eggs", "Milk ✓"])
        #expect(try device.run("clear", "now").status == 64)
    }

    /// `basket undo` right after `basket list rm` undid the last step of
    /// another list (a shared one: Bob's list emptied too). It now says the removal cannot be
    /// undone and changes nothing; only an undo asked for again reaches the step before.
    @Test func undoAfterRemovingAListSaysSoAndLeavesTheOtherListsAlone() throws {
        let server = try ServerProcess(dataDirectory: root.file("server-rm"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Groceries")
        try alice.ok("add", "Milk, Bread")
        try alice.share(with: bob)
        try alice.ok("list", "new", "Party")
        try alice.ok("add", "Crisps")
        try alice.ok("list", "rm", "Party", "--yes")
        let refused = try alice.run("undo")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("removed the list 'Party' from this device, which undo cannot bring back"))
        #expect(refused.stdout.isEmpty, "\(refused.stdout)")
        try alice.ok("sync")
        try bob.ok("sync")
        #expect(try state(alice) == ["Bread", "Milk"])
        #expect(try state(bob) == ["Bread", "Milk"])
        // Asked again, undo goes on to the step before, and says where.
        #expect(try alice.ok("undo").hasPrefix("Undid in Groceries:"))
    }

    @Test func undoReversesAddCheckRemoveAndRenameAndTheOthersSeeIt() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk, Bread")
        try alice.share(with: bob)

        try alice.ok("check", "milk")
        try bob.ok("sync")
        #expect(try state(bob) == ["Bread", "Milk ✓"])
        let undone = try alice.ok("undo")
        #expect(undone == "Undid in Family:\n  Milk: unchecked\n", "\(undone)")
        try bob.ok("sync")
        #expect(try state(bob) == ["Bread", "Milk"])  // sent like any edit

        try alice.ok("rm", "bread")
        #expect(try alice.ok("undo").contains("Bread: brought back"))
        try alice.ok("rename", "milk", "--to", "Oat milk")
        #expect(try state(alice) == ["Bread", "Oat milk"])
        try alice.ok("undo")
        #expect(try state(alice) == ["Bread", "Milk"])
        try bob.ok("sync")
        #expect(try state(bob) == ["Bread", "Milk"])

        // Walking back further: the add of Milk and Bread, then the list itself; then nothing.
        let json = try alice.ok("undo", "--json")
        #expect(json.contains("\"undone\"") && json.contains("Milk: removed") && json.contains("Bread: removed"))
        #expect(try state(alice).isEmpty)
        try alice.ok("undo")
        let nothing = try alice.run("undo")
        #expect(nothing.status == 1 && nothing.stderr.contains("nothing to undo on this device"))
    }

    @Test func ctrlZUndoesTheLastChangeOnTheInteractiveScreen() throws {
        let device = Device(root, "interactive")
        try device.ok("add", "Milk")
        let pane = try TmuxPane(
            command: "\(Executables.path("basket")) --db \(device.directory)", environment: ["NO_COLOR": "1"])
        pane.wait("the list") { $0.contains("[ ] Milk") }
        try pane.type("Jam")
        try pane.send("Enter")
        pane.wait("Jam added") { $0.contains("Added Jam") && $0.contains("[ ] Jam") }
        try pane.send("C-z")
        pane.wait("Jam undone") { $0.contains("Undid: Jam: removed") && !$0.contains("[ ] Jam") }
        try pane.send("Enter")  // Milk, the selected row: checked
        pane.wait("Milk checked") { $0.contains("[x] Milk") }
        try pane.send("C-z")
        pane.wait("Milk unchecked again") { $0.contains("Undid: Milk: unchecked") && $0.contains("[ ] Milk") }
        try pane.send("Escape")
        #expect(try state(device) == ["Milk"])
    }
}
