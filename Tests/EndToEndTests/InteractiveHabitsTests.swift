import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// The interactive mode as fzf users expect it, in a real terminal under tmux.
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
