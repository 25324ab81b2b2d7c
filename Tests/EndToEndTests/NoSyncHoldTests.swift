import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// `--no-sync` keeps a write here even with `basket sync --watch` running on the same replica:
/// the watcher says so and sends it only after an explicit `basket sync`.
struct NoSyncHoldTests {
    let root = TemporaryDirectory("hold")

    @Test func aWatcherDoesNotSendWhatNoSyncKept() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let (alice, bob) = try Device.family(on: server, in: root)
        let watcher = try Subprocess(
            Executables.path("basket"), ["--db", alice.directory, "sync", "--watch"])
        defer {
            watcher.signal(SIGTERM)
            if watcher.wait(timeout: 5) == nil { watcher.kill() }
        }
        let deadline = Date().addingTimeInterval(20)
        while !watcher.stdout.contains("Watching") && Date() < deadline { usleep(10_000) }
        #expect(watcher.stdout.contains("Watching"))

        try alice.ok("--no-sync", "add", "Tea")
        // The watcher sees the write and says it keeps it here: then it has decided not to send.
        let seen = Date().addingTimeInterval(30)
        while !(watcher.stdout.contains("+ Tea") && watcher.stderr.contains("kept here (--no-sync)")) && Date() < seen {
            usleep(10_000)
        }
        #expect(watcher.stderr.contains("kept here (--no-sync)"), "\(watcher.stdout)\n\(watcher.stderr)")
        try bob.ok("sync")
        #expect(!(try bob.listing().items.map(\.name)).contains("Tea"))
        let status = try alice.ok("status")
        #expect(status.contains("1 change not yet sent"), "\(status)")
        // An explicit sync sends it, and lets the watcher send again.
        try alice.ok("sync")
        try bob.ok("sync")
        #expect(try bob.listing().items.map(\.name).contains("Tea"))
        try bob.ok("add", "Jam")
        try alice.ok("--no-sync", "check", "milk")
        try alice.ok("sync")
        try alice.ok("--no-sync", "add", "Eggs")
        try alice.ok("sync")  // released
        try alice.ok("add", "--no-sync", "Bread")  // held again
        try alice.ok("add", "Soap")  // a write that sends takes what was kept along, before it exits
        try bob.ok("sync")
        let names = try bob.listing().items.map(\.name)
        #expect(names.contains("Bread") && names.contains("Soap") && names.contains("Eggs"), "\(names)")
    }
}
