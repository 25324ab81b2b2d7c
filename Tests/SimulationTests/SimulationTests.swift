import BasketSimulation
import BasketTesting
import Testing

/// 2,000 deterministic simulation runs (four batches of 500 seeds, run in parallel): partitions,
/// lost requests and answers, duplicates, delays and reordering, clocks off by up to an hour,
/// server restarts and data loss. Every run must converge with no operation lost or duplicated.
/// `basket-sim --seed S --runs N` runs more (see docs/reliability.md).
struct SimulationTests {
    @Test(arguments: [1, 501, 1_001, 1_501] as [UInt64])
    func runsConvergeWithNothingLost(firstSeed: UInt64) async {
        let report = await Simulation.runManyOffThePool(from: firstSeed, runs: 500)
        #expect(report.failure == nil, "\(report.text)")
        #expect(report.runs == 500)
        // The faults really happened.
        #expect(report.counters.lostAnswers > 0 && report.counters.duplicated > 0 && report.counters.delayed > 0)
        #expect(report.counters.serverDataLosses > 0 && report.counters.epochChanges > 0)
        #expect(report.counters.clockCorrections > 0)
    }

    @Test func aPlanIsAPureFunctionOfItsSeed() {
        let a = Simulation.plan(seed: 42)
        let b = Simulation.plan(seed: 42)
        #expect(a.steps == b.steps && a.clockOffsets == b.clockOffsets)
        #expect(Simulation.plan(seed: 43).steps != a.steps)
        #expect(a.description.contains("seed 42"))
    }
}
