import BasketModel
import BasketTesting
import Testing

/// The testing library as a person writing a conflict test uses it (the README's example), and
/// the promises it makes: the same calls give the same run, and its verdict sees what is wrong.
struct LabTests {
    // The README's example: ten lines.
    @Test func aLaterUncheckBeatsAnOfflineCheck() async throws {
        let lab = try await Lab(devices: ["alice", "bob"])
        try lab.add("Milk", on: "alice")
        try await lab.syncAll()
        lab.partition("bob")
        try lab.check("Milk", on: "bob")
        lab.advance(milliseconds: 1_000)
        try lab.uncheck("Milk", on: "alice")
        #expect(try await lab.verdict() == nil)
        #expect(try lab.shown("bob").items.values.map(\.checked) == [false])
    }

    /// Faults, delays, a restart and a loss, twice with the same calls: the same counters and
    /// the same list; and the verdict holds.
    @Test func theSameCallsGiveTheSameRun() async throws {
        func run() async throws -> (String, Lab.Counters, [String]) {
            let lab = try await Lab(devices: ["alice", "bob", "carol"], clockOffsets: ["carol": -90_000])
            try lab.add("Milk", on: "alice")
            try lab.add("Bread", on: "bob")
            for seed: UInt64 in 1...6 {
                try await lab.sync(["alice", "bob", "carol"][Int(seed) % 3], faults: seed * 7_919)
            }
            try lab.backupServer()
            try lab.check("Milk", on: "carol")
            try await lab.sync("carol", faults: 3)
            lab.deliverDelayed(order: 5)
            try lab.restartServer()
            try lab.remove("Bread", on: "alice")
            try await lab.sync("alice")
            try lab.loseServerData()
            let verdict = try await lab.verdict()
            #expect(verdict == nil, "\(verdict.map { "\($0)" } ?? "")")
            let shown = try lab.shown("alice").items.values.map { "\($0)" }.sorted()
            return (verdict.map { "\($0)" } ?? "", lab.counters, shown)
        }
        let (first, second) = (try await run(), try await run())
        #expect(first.0 == second.0 && first.2 == second.2)
        #expect(first.1.text == second.1.text)
        #expect(
            first.1.lostRequests + first.1.lostAnswers + first.1.duplicated + first.1.delayed > 0, "\(first.1.text)")
        #expect(first.1.serverRestarts == 1 && first.1.serverDataLosses == 1)
        #expect(first.2 == ["[x] Milk"], "\(first.2)")
    }

    /// An edit of an item not on the device's list is skipped, as a person would.
    @Test func anEditOfAnItemNotOnTheListIsSkipped() async throws {
        let lab = try await Lab(devices: ["alice", "bob"])
        #expect(try !lab.check("Milk", on: "alice"))
        try lab.add("Milk", on: "alice")
        #expect(try !lab.check("Milk", on: "bob"))  // bob has not synced yet
        try await lab.syncAll()
        #expect(try lab.check("milk", on: "bob"))
        #expect(try lab.edit("bob", .rename("Milk", "Oat milk")))
        #expect(try await lab.verdict() == nil)
        #expect(try lab.shown("alice").items.values.map(\.name) == ["Oat milk"])
    }
}
