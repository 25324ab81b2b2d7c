import Foundation
import TestServers
import TestSupport
import Testing

/// The conflict rules of docs/conflicts.md, run as scenario files by `basket-lab`: in the conflict
/// lab (`run`: one process, simulated network and clock) and against a real basket-server process
/// and the CLI's commands (`replay`).
struct ScenarioTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenarios")
    let root = TemporaryDirectory("scenarios")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".scenario") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    /// `basket-lab run` (the lab) or, `replay`, against a real server.
    func run(_ files: [String], replay: Bool = false) throws -> ProcessResult {
        try Executables.run(
            "basket-lab",
            (replay ? ["replay", "--server", Executables.path("basket-server")] : ["run"]) + files, timeout: 600)
    }

    @Test(arguments: [false, true])
    func everyShippedScenarioPasses(replay: Bool) throws {
        let files = Self.files
        #expect(files.count == 41)  // docs/reliability.md's count
        let result = try run(files, replay: replay)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\(files.count) passed, 0 failed"), "\(result.stdout)")
        // Every rule of docs/conflicts.md names its scenario, and every scenario is named there.
        let doc = try String(
            contentsOf: Self.folder.deletingLastPathComponent().appendingPathComponent("docs/conflicts.md"),
            encoding: .utf8)
        for file in files {
            let name = (file as NSString).lastPathComponent
            #expect(doc.contains(name), "docs/conflicts.md does not name \(name)")
        }
    }

    @Test(arguments: [false, true])
    func aFailedExpectationShowsWhatEachDeviceHas(replay: Bool) throws {
        let file = root.file("wrong.scenario")
        try """
        alice: add Milk
        sync all
        bob: check milk
        expect all: Milk checked
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run([file], replay: replay)
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAIL wrong.scenario:4"), "\(result.stdout)")
        #expect(result.stdout.contains("alice Milk is unchecked"), "\(result.stdout)")
        #expect(result.stdout.contains("alice: \"Shopping\": [ ] Milk"), "\(result.stdout)")
        #expect(result.stdout.contains("bob: \"Shopping\": [x] Milk"), "\(result.stdout)")
        #expect(result.stdout.contains("0 passed, 1 failed"))
    }

    @Test func aMalformedScenarioIsAUsageErrorNamingTheLine() throws {
        let file = root.file("bad.scenario")
        try "alice: add Milk\nalice: fly away\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run([file])
        #expect(result.status == 64)
        #expect(result.stderr.contains("bad.scenario: line 2: unknown action 'fly'"), "\(result.stderr)")
        let missing = try run([root.file("missing.scenario")])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read"), "\(missing.stderr)")
        let noFiles = try Executables.run("basket-lab", ["run"])
        #expect(noFiles.status == 64 && noFiles.stderr.contains("give one or more scenario files"))
        let unknown = try Executables.run("basket-lab", ["fly"])
        #expect(unknown.status == 64 && unknown.stderr.contains("unknown command 'fly'"))
    }

    /// The shipped `basket` links neither the reference model nor the tracer: conflict testing
    /// is a development tool's.
    @Test func theShippedCommandHasNoScenarioRunner() throws {
        let help = try Executables.run("basket", ["help"])
        #expect(!help.stdout.contains("scenario"), "\(help.stdout)")
        let run = try Executables.run("basket", ["scenario", "run", "x.scenario"])
        #expect(run.status == 64 && run.stderr.contains("unknown command"), "\(run.stderr)")
    }
}
