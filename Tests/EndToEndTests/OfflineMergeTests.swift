import Foundation
import TestServers
import TestSupport
import Testing

/// Two `basket` processes on two replica directories, exchanging export files.
@Suite(.serialized)
struct OfflineMergeTests {
    let root = TemporaryDirectory("e2e")

    /// A shares its list with B once; then both work offline.
    func sharedPair() throws -> (Device, Device) {
        let a = Device(root, "a")
        let b = Device(root, "b")
        try a.ok("list", "new", "Family")
        try a.send(to: b, via: root)
        #expect(try b.listing().list?.title == "Family")
        return (a, b)
    }

    @Test func bothAddingMilkOfflineEndsWithOneItem() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "Milk")
        try b.ok("add", "milk ")
        try a.send(to: b, via: root)
        try b.send(to: a, via: root)
        for device in [a, b] {
            let items = try device.listing().items
            #expect(items.count == 1)
            #expect(items.first?.name.lowercased() == "milk")
        }
        #expect(try a.listing().items.first?.id == b.listing().items.first?.id)
        #expect(try a.exported() == b.exported())
        // The list is encrypted (every new list is): its keys went with the file, so B's "milk"
        // took the same keyed id as A's, and B could share and sync it.
        #expect(try b.ok("lists").contains("encrypted"))
        #expect(try a.exported().split(separator: "\n").contains { $0.hasPrefix("K ") })
    }

    /// A file whose keys are not the list's this device holds is refused whole: nothing imported.
    @Test func aFileWithOtherKeysForAListIsRefusedAndChangesNothing() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "Milk")
        let file = root.file("forged.ops")
        try a.ok("export", file)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        // Keys of another list of C's, put in place of the Family's.
        let c = Device(root, "c")
        try c.ok("list", "new", "Other")
        let others = try #require(try c.exported().split(separator: "\n").first { $0.hasPrefix("K ") })
        let ours = try #require(text.split(separator: "\n").first { $0.hasPrefix("K ") })
        let forged = text.replacingOccurrences(of: String(ours), with: String(ours.prefix(35)) + others.dropFirst(35))
        try Data(forged.utf8).write(to: URL(fileURLWithPath: file))
        let before = try b.exported()
        let refused = try b.run("import", file)
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("not the ones this device holds") && refused.stderr.contains("nothing was imported")
        )
        #expect(try b.exported() == before)
        // Keys that do not read are refused the same way.
        try Data(text.replacingOccurrences(of: String(ours), with: String(ours.prefix(35)) + "K1.x").utf8)
            .write(to: URL(fileURLWithPath: file))
        #expect(try b.run("import", file).stderr.contains("do not read; nothing was imported"))
        #expect(try b.exported() == before)
    }

    @Test func concurrentCheckAndUncheckResolveToTheLaterWrite() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "Milk, Bread")
        try a.send(to: b, via: root)
        try b.ok("check", "bread")  // so B has something to uncheck
        try b.send(to: a, via: root)

        // Milk: A checks, later B unchecks → unchecked. Bread: A unchecks, later B checks → checked.
        try a.ok("check", "milk")
        try a.ok("uncheck", "bread")
        usleep(5_000)
        try b.ok("uncheck", "milk")
        try b.ok("check", "bread")
        try a.send(to: b, via: root)
        try b.send(to: a, via: root)
        for device in [a, b] {
            let items = Dictionary(uniqueKeysWithValues: try device.listing().items.map { ($0.name, $0.checked) })
            #expect(items == ["Milk": false, "Bread": true])
        }
        let history = try a.ok("history", "milk")
        #expect(history.contains("superseded"))
        #expect(try a.exported() == b.exported())
    }

    @Test func removeWinsOverAConcurrentCheckUntilTheNameIsAddedAgain() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "Milk")
        try a.send(to: b, via: root)
        try a.ok("rm", "milk")
        usleep(5_000)
        try b.ok("check", "milk")  // later, but it does not bring the item back
        try a.send(to: b, via: root)
        try b.send(to: a, via: root)
        for device in [a, b] {
            #expect(try device.listing().items.isEmpty)
            let all = try device.listing("--all").items
            #expect(all.count == 1 && all[0].deleted && all[0].checked)
        }
        // Adding it again restores it, unchecked, everywhere.
        try b.ok("add", "Milk")
        try b.send(to: a, via: root)
        #expect(try a.listing().items.map(\.checked) == [false])
    }

    @Test func renamesTravelAsMoves() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "milk")
        try a.send(to: b, via: root)
        try b.ok("rename", "milk", "Oat milk")
        try a.ok("rename", "milk", "--to", "Milk")  // same key: only the casing changes
        try a.send(to: b, via: root)
        try b.send(to: a, via: root)
        for device in [a, b] {
            #expect(try device.listing().items.map(\.name) == ["Oat milk"])
        }
    }

    @Test func importingTheSameFileTwiceChangesNothing() throws {
        let (a, b) = try sharedPair()
        try a.ok("add", "Milk, Eggs, Crème fraîche")
        let file = root.file("once.ops")
        try a.ok("export", file)
        try b.ok("import", file)
        let before = try b.exported()
        let second = try b.ok("import", file, "--json")
        #expect(second.contains("\"new\":0"))
        #expect(try b.exported() == before)
    }
}
