import Foundation
import TestServers
import TestSupport
import Testing

/// `basket ls --at` and `basket changes --since` across two devices and a compaction: Alice and
/// Bob edit at three moments an hour apart (their clocks set with BASKET_CLOCK_MS), and Carol
/// joins after the server compacted the list.
struct TimeTravelTests {
    let root = TemporaryDirectory("time-travel")
    static let hour: UInt64 = 3_600_000

    struct ListAt: Decodable {
        struct Item: Decodable, Equatable {
            var name: String
            var checked: Bool
            var quantity: String?
        }
        var title: String?
        var historyComplete: Bool
        var items: [Item]
    }

    struct Changes: Decodable {
        struct Change: Decodable {
            var name: String?
            var by: String?
            var what: [String]
        }
        var historyComplete: Bool
        var changes: [Change]
    }

    func iso(_ milliseconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    @Test func theListAsItStoodAndWhatChangedSince() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        func at(_ ms: UInt64) -> [String: String] { ["BASKET_CLOCK_MS": String(ms)] }

        // Three hours ago, Alice starts the list; two hours ago Bob checks Milk, sets its
        // quantity and removes Bread; an hour ago Alice adds Eggs.
        // Plain: the server drops a removed item whole only where it can read that it was removed
        // (an encrypted list's `deleted` is sealed; docs/encryption.md).
        try alice.ok("list", "new", "Family", "--unencrypted", environment: at(now - 3 * Self.hour))
        try alice.ok("add", "Milk, Bread", environment: at(now - 3 * Self.hour))
        try alice.ok("sync", environment: at(now - 3 * Self.hour))
        try alice.share(with: bob)
        try bob.ok("check", "milk", environment: at(now - 2 * Self.hour))
        try bob.ok("set", "milk", "--quantity", "2", environment: at(now - 2 * Self.hour + 60_000))
        try bob.ok("rm", "bread", environment: at(now - 2 * Self.hour + 120_000))
        try bob.ok("sync", environment: at(now - 2 * Self.hour + 120_000))
        try alice.ok("add", "Eggs", environment: at(now - Self.hour))
        try alice.ok("sync", environment: at(now - Self.hour))
        try bob.ok("sync")

        func listAt(_ device: Device, _ time: String) throws -> ListAt {
            try JSONDecoder().decode(ListAt.self, from: Data(try device.ok("ls", "--at", time, "--json").utf8))
        }
        let before = [ListAt.Item(name: "Bread", checked: false), ListAt.Item(name: "Milk", checked: false)]
        let after = [
            ListAt.Item(name: "Milk", checked: true, quantity: "2"), ListAt.Item(name: "Eggs", checked: false),
        ]
        for device in [alice, bob] {
            // Between Alice's start and Bob's edits, by an absolute time and by a relative one.
            #expect(try listAt(device, iso(now - 150 * 60_000)).items.sorted { $0.name < $1.name } == before)
            #expect(try listAt(device, "-150m").items.sorted { $0.name < $1.name } == before)
            #expect(try listAt(device, "-150m").title == "Family")
            // Before anything: empty; now: as `ls` shows it.
            #expect(try listAt(device, iso(now - 4 * Self.hour)).items.isEmpty)
            #expect(try listAt(device, "now").items.sorted { $0.name < $1.name } == after.sorted { $0.name < $1.name })
            #expect(try listAt(device, "-150m").historyComplete)
        }
        let text = try alice.ok("ls", "--at", "-150m")
        #expect(text.contains("Family as of ") && text.contains("(2 to buy, 0 checked)"), "\(text)")
        #expect(text.contains("[ ] Bread") && text.contains("[ ] Milk") && !text.contains("Eggs"), "\(text)")

        // What changed since 150 minutes ago, as Alice's device tells it: Bob's steps, then hers.
        let changes = try JSONDecoder().decode(
            Changes.self, from: Data(try alice.ok("changes", "--since", "-150m", "--json").utf8))
        #expect(changes.historyComplete)
        #expect(changes.changes.map(\.what) == [["checked"], ["quantity"], ["removed"], ["added"]], "\(changes)")
        #expect(changes.changes.map(\.name) == ["Milk", "Milk", "Bread", "Eggs"])
        #expect(changes.changes.map(\.by) == ["bob", "bob", "bob", "alice"])
        let told = try alice.ok("changes", "--since", "-150m")
        #expect(told.contains("bob: checked Milk"), "\(told)")
        #expect(told.contains("bob: set the quantity of Milk to \"2\""), "\(told)")
        #expect(told.contains("bob: removed Bread"), "\(told)")
        #expect(told.contains("you, this device: added Eggs"), "\(told)")
        #expect(try alice.ok("changes", "--since", "now").contains("No changes to Family since"))

        // The server compacts (Milk's first "unchecked" is superseded, and Bread, removed, goes
        // whole: its bytes and its place among the list's items come back); Carol joins after it.
        #expect(try server.compact(retentionDays: 0).status == 0)
        let carol = try Device.signedUp("carol", on: server, in: root)
        try alice.share(with: carol)
        let carols = try listAt(carol, "-150m")
        #expect(!carols.historyComplete)
        #expect(carols.items.sorted { $0.name < $1.name } == [ListAt.Item(name: "Milk", checked: false)])
        #expect(try carol.ok("ls", "--at", "-150m").contains("history incomplete"))
        let carolChanges = try JSONDecoder().decode(
            Changes.self, from: Data(try carol.ok("changes", "--since", "-150m", "--json").utf8))
        #expect(!carolChanges.historyComplete)
        #expect(carolChanges.changes.map(\.what) == [["checked"], ["quantity"], ["added"]])
        // Alice saw every write: her history stays complete after the compaction.
        #expect(try listAt(alice, "-150m").historyComplete)
    }

    @Test func aTimeThatIsNoneIsRefusedClearly() throws {
        let alice = Device(root, "offline-alice")
        try alice.ok("add", "Milk")
        for bad in ["yesterday", "-5x", "2026-13-40", "-99999999999999999999h"] {
            let result = try alice.run("ls", "--at", bad)
            #expect(result.status == 64, "\(bad): \(result.stderr)")
            #expect(result.stderr.contains("is not a time"), "\(bad): \(result.stderr)")
        }
        let missing = try alice.run("changes")
        #expect(missing.status == 64 && missing.stderr.contains("--since TIME"), "\(missing.stderr)")
        // Offline, on a device that never synced: its own history is all there is, and complete.
        #expect(try alice.ok("changes", "--since", "-1h").contains("you, this device: added Milk"))
    }

    /// A time of day that has not come yet today means yesterday (`--since 18:30` at
    /// 09:00 is last evening, not tonight), and the answer names the date it took.
    @Test func aTimeOfDayStillToComeMeansYesterday() throws {
        let bob = Device(root, "evening-bob")
        let evening: UInt64 = 1_796_495_400_000  // 2026-12-05 18:30 UTC
        let morning: UInt64 = 1_796_547_600_000  // 2026-12-06 09:00 UTC
        try bob.ok("add", "Bread", environment: ["BASKET_CLOCK_MS": String(evening - 3_600_000)])
        try bob.ok("add", "Milk", environment: ["BASKET_CLOCK_MS": String(evening + 600_000)])
        let told = try bob.ok(
            "changes", "--since", "18:30", environment: ["BASKET_CLOCK_MS": String(morning), "TZ": "UTC"])
        #expect(told.contains("since yesterday, 2026-12-05 18:30:00"), "\(told)")
        #expect(told.contains("added Milk") && !told.contains("added Bread"), "\(told)")
        // A time that has passed today is today.
        let today = try bob.ok(
            "changes", "--since", "08:00", environment: ["BASKET_CLOCK_MS": String(morning), "TZ": "UTC"])
        #expect(today.contains("since today, 2026-12-06 08:00:00"), "\(today)")
    }
}
