import Foundation
import TestServers
import TestSupport
import Testing

/// The conflict lab catches rules that are wrong the same way on every device: each planted
/// rule (a test-only switch of debug builds, `BASKET_PLANTED_RULE`) converges, and `basket-sim`
/// still fails within its first seeds, against the independent model or the hybrid clock's
/// promise; the shrunk run it writes as a scenario file fails the same way under `basket-lab run`
/// (the lab) and `basket-lab replay` (a real server, the CLI's commands), and passes without the
/// plant.
struct ConflictLabTests {
    let root = TemporaryDirectory("conflict-lab")

    static let rules: [(rule: String, finding: String)] = [
        ("first-writer-wins", "disagrees with the model"),
        ("lower-replica-wins-ties", "disagrees with the model"),
        ("remove-beats-later-add", "disagrees with the model"),
        ("quantity-clears-check", "disagrees with the model"),
        ("clock-ignores-received", "causality broken"),
    ]

    /// `basket-lab run FILE` (the lab), or `replay` against a real server.
    func scenario(_ file: String, plant: String?, replay: Bool = false) throws -> ProcessResult {
        try Executables.run(
            "basket-lab", (replay ? ["replay", "--server", Executables.path("basket-server")] : ["run"]) + [file],
            environment: ["BASKET_PLANTED_RULE": plant ?? ""], timeout: 300)
    }

    @Test(arguments: 0..<5)
    func aPlantedRuleIsCaughtAndItsScenarioReplaysIt(_ index: Int) throws {
        let (rule, finding) = Self.rules[index]
        let file = root.file("\(rule).scenario")
        let simulated = try Executables.run(
            "basket-sim", ["--seed", "1", "--runs", "40", "--emit-scenario", file],
            environment: ["BASKET_PLANTED_RULE": rule], timeout: 600)
        #expect(simulated.status == 1, "\(rule): \(simulated.stdout)\nstderr: \(simulated.stderr)")
        #expect(simulated.stdout.contains(finding), "\(rule): \(simulated.stdout)")
        #expect(simulated.stdout.contains("scenario written to \(file)"), "\(simulated.stdout)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("time: frozen") && text.contains("expect all: as the model says"), "\(text)")
        // Shrunk: a handful of steps, not the 60 of a run.
        let steps = text.split(separator: "\n").filter {
            !$0.hasPrefix("#") && $0.contains(": ") && !$0.contains("clock")
        }
        #expect(steps.count < 20, "\(text)")

        for replay in [false, true] {
            let replayed = try scenario(file, plant: rule, replay: replay)
            #expect(replayed.status == 1, "\(rule), replay \(replay): \(replayed.stdout)\(replayed.stderr)")
            #expect(replayed.stdout.contains(finding), "\(rule), replay \(replay): \(replayed.stdout)")
            let fixed = try scenario(file, plant: nil, replay: replay)
            #expect(fixed.status == 0, "\(rule) unplanted, replay \(replay): \(fixed.stdout)\(fixed.stderr)")
        }
    }

    /// The model's report names the smallest set of writes that still shows the disagreement.
    @Test func aDisagreementNamesTheSmallestSetOfWrites() throws {
        let file = root.file("ties.scenario")
        try """
        time: frozen
        alice: add Milk
        alice: add Bread
        sync all
        alice: title Weekend
        bob: title Groceries
        alice: check Bread
        sync all
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let planted = try scenario(file, plant: "lower-replica-wins-ties")
        #expect(planted.status == 1)
        // Both devices stamp their titles at the same frozen millisecond: only the two titles
        // (not the items, not the list's first title) are the smallest set.
        #expect(planted.stdout.contains("disagrees with the model"), "\(planted.stdout)")
        #expect(planted.stdout.contains("smallest set of writes"), "\(planted.stdout)")
        let listed = planted.stdout.split(separator: "\n").filter { $0.contains("list.title = ") }
        #expect(listed.count == 2, "\(planted.stdout)")
        #expect(try scenario(file, plant: nil).status == 0)
    }

    @Test func simulatedTimeAndFaultsParseOrFailClearly() throws {
        let file = root.file("bad-time.scenario")
        try "alice: add Milk\ntime +5s\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try scenario(file, plant: nil)
        #expect(result.status == 64)
        #expect(result.stderr.contains("line 2: 'time +N' needs 'time: frozen' at the top"), "\(result.stderr)")
        try "time: frozen\nalice: maybe add Milk\n".write(toFile: file, atomically: true, encoding: .utf8)
        let maybe = try scenario(file, plant: nil)
        #expect(maybe.status == 64 && maybe.stderr.contains("line 2: 'maybe' is followed by"), "\(maybe.stderr)")
        try "time: frozen\nalice: add Milk\nnetwork: deliver delayed (order x)\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let network = try scenario(file, plant: nil)
        #expect(network.status == 64 && network.stderr.contains("line 3: network actions"), "\(network.stderr)")
    }
}

/// `basket-sim --trace`: a seed's run drawn, 500 steps and up to five devices, self-contained.
struct SimulatorTraceTests {
    let root = TemporaryDirectory("sim-trace")

    @Test func aLongRunIsDrawnWithALaneForEachDeviceAndARowForEachStep() throws {
        let file = root.file("seed-5.html")
        let result = try Executables.run(
            "basket-sim", ["--seed", "5", "--steps", "500", "--trace", file], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("seed 5: converged, agrees with the model"), "\(result.stdout)")
        let html = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!html.contains("<script") && !html.contains("src=\"http"))
        let lanes = html.components(separatedBy: "aria-label=\"lane ").count - 1
        #expect(lanes >= 3 && lanes <= 5 + 1 && html.contains("aria-label=\"lane server\""), "\(lanes) lanes")
        // Every step in words, and the ending.
        let steps =
            html.components(separatedBy: "<tr><td>").count
            + html.components(separatedBy: "<tr class=\"failed\"><td>").count - 2
        #expect(steps >= 501, "\(steps) rows")
        #expect(html.contains(" pushes ") && html.contains(" pulls ") && html.contains("write by device"))
    }
}
