import Foundation
import TestServers
import TestSupport
import Testing

/// A small file system of its own (tmpfs, mounted by the test; needs root, which CI has).
enum SmallDisk {
    static let canMount: Bool = {
        let probe = TemporaryDirectory("mount-probe")
        guard (try? Executables.runShell("mount -t tmpfs -o size=1m tmpfs '\(probe.path)' 2>/dev/null"))?.status == 0
        else { return false }
        _ = try? Executables.runShell("umount '\(probe.path)'")
        return true
    }()
}

@Suite(
    .enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"),
    .disabled(
        if: ServerProcess.pairOnPostgres,
        "covered in the SQLite pass: it fills the file system under the SQLite store, which PostgreSQL servers do not use"
    ))
struct DiskFullTests {
    let root = TemporaryDirectory("disk-full")

    @Test func aFullDiskRefusesPushesWith507StoresNothingAndResumesWhenSpaceReturns() throws {
        let disk = root.file("small-disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(try Executables.runShell("mount -t tmpfs -o size=8m tmpfs '\(disk)'").status == 0)
        defer { _ = try? Executables.runShell("umount -l '\(disk)'") }

        let server = try ServerProcess(dataDirectory: disk + "/server")
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk")
        try alice.ok("sync")
        let before = try server.metric("basket_operations_stored")
        #expect(before != nil)

        // Fill the file system to the last block.
        _ = try Executables.runShell("dd if=/dev/zero of='\(disk)/filler' bs=16k 2>/dev/null; sync")
        try alice.ok("add", "--no-sync", (0..<3_000).map { "Item \($0)" }.joined(separator: ", "))
        let refused = try alice.run("sync")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("storage is full"), "\(refused.stderr)")
        // Nothing of the refused pushes is stored, the server keeps serving, the outbox is kept.
        #expect(try server.metric("basket_operations_stored") == before)
        #expect(
            try Executables.runShell("curl -s -o /dev/null -w '%{http_code}' \(server.url)/healthz").stdout == "200")
        let status = try alice.ok("status")
        #expect(status.contains("3000 changes"), "\(status)")  // 9,000 writes: 3,000 items

        // Space returns: the same sync goes through and another device gets everything.
        try FileManager.default.removeItem(atPath: disk + "/filler")
        try alice.ok("sync")
        #expect(try server.metric("basket_operations_stored") == before.map { $0 + 9_000 })
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.share(with: bob)
        #expect(try bob.listing().items.count == 3_001)
        #expect(server.stop() == 0)
    }
}
