import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// Words a person reads after sharing: `sync` counts changes, not
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
