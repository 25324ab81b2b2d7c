import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// `basket history` as a person reads it: whole values up to a column, then "…";
/// local times; who wrote, by name; where a renamed item went.
struct CLIHistoryTests {
    let root = TemporaryDirectory("history")

    @Test func historyNamesPeopleTellsLocalTimeAndFollowsARename() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        try bob.ok("check", "milk")
        try alice.ok("sync")
        try alice.ok("rename", "milk", "--to", "Organic whole milk from the farm")

        let text = try alice.ok("history", "organic", environment: ["TZ": "UTC"])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("  Renamed from Milk ('basket history Milk')"), "\(text)")
        // Not a terminal: the name whole (it was cut at 24 columns), then two spaces, then the time.
        #expect(lines.contains { $0.hasPrefix("   * \"Organic whole milk from the farm\"  20") }, "\(text)")
        #expect(lines.contains { $0.hasSuffix("you, this device") })
        // The old item's history says where it went, and who checked it.
        let old = try alice.ok("history", "Milk", environment: ["TZ": "UTC"])
        #expect(old.contains("Renamed to Organic whole milk from the farm"), "\(old)")
        let checkedBy = old.split(separator: "\n").first { $0.hasPrefix("   * true") }
        #expect(checkedBy?.hasSuffix("bobby") == true, "\(old)")
        #expect(!old.contains("replica "), "\(old)")

        // Local time: the same write nine hours apart in Tokyo and UTC; --json in ISO UTC.
        func hour(_ tz: String) throws -> Int {
            let line = try alice.ok("history", "Milk", environment: ["TZ": tz]).split(separator: "\n")
                .first { $0.hasPrefix("   * \"Milk\"") }
            let time = try #require(line?.split(separator: " ").first { $0.contains(":") })
            return try #require(Int(time.prefix(2)))
        }
        #expect((try hour("UTC") + 9) % 24 == (try hour("Asia/Tokyo")))
        let json = try JSONSerialization.jsonObject(with: Data(try alice.ok("history", "--json", "Milk").utf8))
        let history = try #require((json as? [String: Any])?["history"] as? [[String: Any]])
        #expect(history.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
        #expect(history.contains { $0["field"] as? String == "checked" && $0["by"] as? String == "bobby" })
        #expect((json as? [String: Any])?["renamedTo"] as? String == "Organic whole milk from the farm")
        // `devices` and `invites` in local time too (they printed UTC before).
        _ = try alice.ok("share")
        for command in ["devices", "invites"] {
            func hour(_ tz: String) throws -> Int {
                let text = try alice.ok(command, environment: ["TZ": tz])
                #expect(!text.contains("UTC"), "\(text)")
                let time = try #require(
                    text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
                        .first { $0.count == 5 && $0.dropFirst(2).first == ":" })
                return try #require(Int(String(time.prefix(2))))
            }
            #expect((try hour("UTC") + 9) % 24 == (try hour("Asia/Tokyo")), "\(command)")
        }

        // Offline (no server answering), writes are told by device, never by a guess.
        _ = server.stop()
        let offline = try alice.ok("history", "Milk")
        #expect(offline.contains("another device (") && offline.contains("you, this device"), "\(offline)")
    }

    /// A rename and a removal a moment later: the removal was taken for
    /// the end of the rename ("Oat milk: Renamed from butter", "butter: Renamed to Oat milk").
    @Test func aRenameIsLinkedByItsOwnWritesNeverByTiming() throws {
        let device = Device(root, "solo")
        try device.ok("add", "Milk, Butter")
        try device.ok("rename", "milk", "--to", "Oat milk")
        try device.ok("rm", "butter")
        let oat = try device.ok("history", "oat milk")
        #expect(oat.contains("Renamed from Milk") && !oat.contains("Butter"), "\(oat)")
        let butter = try device.ok("history", "butter")
        #expect(!butter.contains("Renamed"), "\(butter)")
        let milk = try device.ok("history", "milk")
        #expect(milk.contains("Renamed to Oat milk"), "\(milk)")
        // Renamed into a name the list had before: the link is found again, the latest one said.
        try device.ok("rename", "oat milk", "--to", "Butter")
        let again = try device.ok("history", "butter")
        #expect(again.contains("Renamed from Oat milk") && !again.contains("Renamed to"), "\(again)")
    }

    /// On a terminal a long value is wrapped in its column, every word kept (it was cut at 24
    /// columns with "…").
    @Test func onATerminalALongValueIsWrappedNotCut() throws {
        let device = Device(root, "wrap")
        try device.ok("add", "Organic whole milk from the farm down the road")
        let pane = try TmuxPane(
            command: "sh -c '\(Executables.path("basket")) --db \(device.directory) history organic; sleep 60'")
        let screen = pane.wait("the history") { $0.contains("name:") && $0.contains("road") }
        #expect(!screen.contains("…"), "\(screen)")
        let rows = screen.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("   * \"Organic whole milk ") }, "\(screen)")
        #expect(rows.contains { $0.hasPrefix("     ") && $0.contains("road\"") }, "\(screen)")
    }
}
