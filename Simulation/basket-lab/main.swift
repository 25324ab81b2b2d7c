import BasketTesting
import BasketTrace
import Foundation

// basket-lab: conflict scenarios (docs/conflicts.md), run in the lab or against real processes.
let usage = """
    usage: basket-lab run [--trace FILE.html] FILE…
           basket-lab replay [--server PATH] [--trace FILE.html] FILE…
    """
let help = """
    \(usage)

    Each FILE is a scenario (see docs/conflicts.md): named devices act on one shared list ('alice: add
    Milk', 'bob: check milk', 'alice: rename Milk to Oat milk', 'bob: quantity milk = 2', 'alice: title
    Weekend'), go offline and online, move their clocks ('alice: clock +10m'), sync ('sync all'), the
    server restarts or loses data ('server: restart', 'server: lose data'), and expectations say what
    each device shows ('expect all: Milk checked', 'expect bob: 1 item', 'expect all: same'). Every
    scenario ends with each device compared with the independent model of the merge rules. Files
    'basket-sim --emit-scenario' writes also use 'time: frozen', 'time +5s', 'maybe check X',
    'sync (faults N)' and 'network: deliver delayed (order N)'.

    run      in the conflict lab, in this process: real replicas and the real server code on
             SQLite files, a simulated network and clock (a scenario in real time takes a second
             a step). Fast, and the same run every time.
    replay   against real processes: a basket-server child on a loopback port (its backup and
             restore commands for 'server: backup' and 'lose data') and each device's commands
             through the CLI's own code, on the real clock or a frozen one.

      --server PATH     the basket-server to start (default: beside basket-lab, or $BASKET_SERVER)
      --trace FILE      draw the run (one scenario) as one self-contained HTML file, passed or failed

    Exit status 0 when every scenario passes, 1 when one fails, 64 for a malformed file or usage.
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("basket-lab: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") || arguments == ["help"] {
    print(help)
    exit(arguments.isEmpty ? 64 : 0)
}
let mode = arguments.removeFirst()
guard mode == "run" || mode == "replay" else { fail("unknown command '\(mode)'\n\(usage)", status: 64) }
var server: String?
var tracePath: String?
var files: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--server" where mode == "replay", "--trace":
        guard let value = arguments.first, !value.isEmpty else {
            fail("\(argument) needs a value\n\(usage)", status: 64)
        }
        arguments.removeFirst()
        if argument == "--trace" { tracePath = value } else { server = value }
    case let option where option.hasPrefix("-"):
        fail("unknown option \(option) for \(mode)\n\(usage)", status: 64)
    default: files.append(argument)
    }
}
if files.isEmpty { fail("give one or more scenario files\n\(usage)", status: 64) }
if tracePath != nil && files.count > 1 { fail("--trace draws one run: give one scenario file", status: 64) }
let serverBinary =
    server ?? ProcessInfo.processInfo.environment["BASKET_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
    ?? ((Bundle.main.executablePath ?? CommandLine.arguments[0]) as NSString).deletingLastPathComponent
    + "/basket-server"
if mode == "replay" && !FileManager.default.isExecutableFile(atPath: serverBinary) {
    fail("no basket-server at \(serverBinary); give --server PATH", status: 64)
}

var scenarios: [(name: String, scenario: Scenario)] = []
for file in files {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { fail("cannot read \(file)", status: 1) }
    do {
        scenarios.append(((file as NSString).lastPathComponent, try Scenario(parsing: text)))
    } catch {
        fail("\(file): \(error)", status: 64)
    }
}

/// Runs one scenario in a new world; prints PASS or FAIL with what each device showed.
@MainActor func run(_ name: String, _ scenario: Scenario) async -> Bool {
    let started = Date()
    let world: any ScenarioWorld
    do {
        world =
            mode == "run" ? try await Lab(for: scenario) : try ProcessWorld(for: scenario, serverBinary: serverBinary)
    } catch {
        print("FAIL \(name):0\n  the set-up failed: \(error)")
        return false
    }
    if tracePath != nil { world.recorder = TraceRecorder(title: name, devices: scenario.devices) }
    var failure: String?
    do {
        try await ScenarioRun(scenario).walk(in: world)
    } catch let failed as ScenarioRun.Failure {
        failure = "\(failed.line)\n" + failed.message
    } catch {
        failure = "0\n\(error)"
    }
    if let tracePath, let recorder = world.recorder {
        do {
            try await world.finishTrace()
            try recorder.trace.html().write(toFile: tracePath, atomically: true, encoding: .utf8)
            print("trace written to \(tracePath)")
        } catch {
            FileHandle.standardError.write(Data("basket-lab: cannot write the trace to \(tracePath): \(error)\n".utf8))
        }
    }
    (world as? Lab)?.close()
    guard let failure else {
        let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
        print("PASS \(name) (\(scenario.steps.count) steps, \(seconds) s)")
        return true
    }
    let lines = failure.split(separator: "\n", omittingEmptySubsequences: false)
    print("FAIL \(name):\(lines[0])")
    for line in lines.dropFirst() where !line.isEmpty { print("  \(line)") }
    return false
}

var failed = 0
for (name, scenario) in scenarios where !(await run(name, scenario)) { failed += 1 }
print("\(scenarios.count - failed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
