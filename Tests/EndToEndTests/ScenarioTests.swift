import Foundation
import TestServers
import TestSupport
import Testing

/// The conflict rules of docs/conflicts.md, run as scenario files by `basket scenario run`
/// against a real basket-server process and real replica files.
struct ScenarioTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenarios")
    let root = TemporaryDirectory("scenarios")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".scenario") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    func run(_ files: [String]) throws -> ProcessResult {
        try Executables.run(
            "basket", ["scenario", "run", "--server", Executables.path("basket-server")] + files, timeout: 600)
    }

    @Test func everyShippedScenarioPasses() throws {
        let files = Self.files
        #expect(files.count == 35)  // docs/reliability.md's count
        let result = try run(files)
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

    @Test func aFailedExpectationShowsWhatEachDeviceHas() throws {
        let file = root.file("wrong.scenario")
        try """
        alice: add Milk
        sync all
        bob: check milk
        expect all: Milk checked
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run([file])
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
    }
}
