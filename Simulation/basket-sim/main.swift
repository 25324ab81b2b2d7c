import BasketSimulation
import BasketTrace
import Foundation

// basket-sim: deterministic simulation runs (see Simulation/BasketSimulation).
let usage = "usage: basket-sim [--seed S] [--runs N] [--steps N] [--emit-scenario FILE] [--trace FILE.html]"
var seed: UInt64 = 1
var runs = 100
var steps = 60
var scenarioFile: String?
var traceFile: String?
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    if option == "--help" || option == "-h" {
        print(
            """
            \(usage)

            Runs N simulations, seeds S, S+1, …: a few replicas and a server exchange operations over a
            network that partitions, drops, duplicates, delays and reorders; clocks off by up to an hour;
            server restarts and data loss. After each run every replica and the server must hold the same
            state and every operation must be on the server. A failure prints its seed and the shortest
            list of steps that still fails; 'basket-sim --seed S --runs 1' replays it. Each device must also
            show what the independent model of the merge rules says for the writes it holds, and a write
            made after seeing another of the same register must beat it.

            --emit-scenario FILE   on a failure, write the shortest failing run as a scenario file that
                                   'basket-lab run FILE' replays in the lab and 'basket-lab replay FILE'
                                   against a real server
            --trace FILE.html      run seed S alone and draw it as one self-contained HTML file (lanes per
                                   device and the server, writes, pushes and pulls, who won and why)
            """)
        exit(0)
    }
    if option == "--emit-scenario" || option == "--trace" {
        guard let file = arguments.first, !file.isEmpty else {
            FileHandle.standardError.write(Data("basket-sim: \(option) needs a file\n\(usage)\n".utf8))
            exit(64)
        }
        if option == "--trace" { traceFile = file } else { scenarioFile = file }
        arguments.removeFirst()
        continue
    }
    guard let value = arguments.first.flatMap({ UInt64($0) }), value > 0 || option == "--seed" else {
        FileHandle.standardError.write(Data("basket-sim: \(option) needs a number\n\(usage)\n".utf8))
        exit(64)
    }
    arguments.removeFirst()
    switch option {
    case "--seed": seed = value
    case "--runs": runs = Int(value)
    case "--steps": steps = Int(value)
    default:
        FileHandle.standardError.write(Data("basket-sim: unknown option \(option)\n\(usage)\n".utf8))
        exit(64)
    }
}

if let traceFile {
    let (failure, trace) = Simulation.trace(Simulation.plan(seed: seed, steps: steps))
    do {
        try trace?.html().write(toFile: traceFile, atomically: true, encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("basket-sim: cannot write \(traceFile): \(error)\n".utf8))
        exit(1)
    }
    print(failure.map { "FAILED at seed \(seed): \($0)" } ?? "seed \(seed): converged, agrees with the model")
    print("trace written to \(traceFile)")
    finish(failure == nil ? 0 : 1)
}

/// Ends the process once the report is out, without the exit handlers: threads of the last run
/// (Swift concurrency's pool, a service winding down) may still be running, and a run under a
/// loaded test suite once ended in SIGABRT after its report was printed and its file written.
func finish(_ status: Int32) -> Never {
    fflush(nil)
    _exit(status)
}

let report = Simulation.runMany(from: seed, runs: runs, steps: steps) { done in
    if done % 100 == 0 { FileHandle.standardError.write(Data("\(done) runs\n".utf8)) }
}
print(report.text)
if let failure = report.failure, let scenarioFile {
    do {
        try Simulation.scenario(failure.plan, failure: failure.message).write(
            toFile: scenarioFile, atomically: true, encoding: .utf8)
        print("scenario written to \(scenarioFile) ('basket-lab run \(scenarioFile)' replays it)")
    } catch {
        FileHandle.standardError.write(Data("basket-sim: cannot write \(scenarioFile): \(error)\n".utf8))
        exit(1)
    }
}
finish(report.failure == nil ? 0 : 1)
