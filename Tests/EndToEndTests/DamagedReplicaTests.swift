import BasketReplica
import Foundation
import SQLite
import TestServers
import TestSupport
import Testing

/// A replica file damaged on disk: every command names it and points to `basket doctor`, which
/// rebuilds it from the server and keeps the unsynced changes that can still be read.
struct DamagedReplicaTests {
    let root = TemporaryDirectory("damaged")

    /// Overwrites one page of the file with 0xFF bytes.
    func smash(page: Int, of path: String) throws {
        let pageSize = try Connection(path: path).scalar("PRAGMA page_size")!.integerValue!
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((page - 1) * Int(pageSize)))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: Int(pageSize)))
        try handle.close()
    }

    /// A server, and alice with the list "Family" holding `names`, synced.
    func synced(_ names: String, encrypted: Bool = false) throws -> (ServerProcess, Device) {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        if encrypted {
            try alice.ok("list", "new", "Family", "--encrypted")
        } else {
            try alice.ok("list", "new", "Family", "--unencrypted")
        }
        try alice.ok("add", names)
        try alice.ok("sync")
        return (server, alice)
    }

    func rootPage(of table: String, in path: String) throws -> Int {
        let value = try Connection(path: path).scalar("SELECT rootpage FROM sqlite_master WHERE name = ?", .text(table))
        return Int(value!.integerValue!)
    }

    @Test func doctorRebuildsADamagedItemsTableAndKeepsTheUnsyncedChanges() throws {
        let (server, alice) = try synced((0..<300).map { "Item \($0)" }.joined(separator: ", "))
        try alice.ok("add", "--no-sync", "Unsynced one, Unsynced two")  // in the outbox only
        let path = alice.directory + "/basket.sqlite"
        try smash(page: try rootPage(of: "items", in: path), of: path)

        let refused = try alice.run("ls")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the replica \(path) is damaged"), "\(refused.stderr)")
        #expect(refused.stderr.contains("basket doctor"))

        let doctor = try alice.ok("doctor")
        #expect(doctor.contains("\(path) is damaged"), "\(doctor)")
        #expect(doctor.contains("6 changes not yet synced"), "\(doctor)")
        #expect(doctor.contains("6 unsynced changes pushed"), "\(doctor)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: alice.directory)
            .filter { $0.hasPrefix("basket.sqlite.damaged-") }
        #expect(!aside.isEmpty)

        #expect(try alice.listing().items.count == 302)
        #expect(try alice.ok("doctor").contains("is sound"))
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.share(with: bob)
        let names = Set(try bob.listing().items.map(\.name))
        #expect(names.count == 302 && names.contains("Unsynced one") && names.contains("Unsynced two"))
    }

    @Test func aFileThatIsNoLongerADatabaseIsRebuiltFromTheServer() throws {
        let (server, alice) = try synced("Milk, Bread")
        defer { withExtendedLifetime(server) {} }  // the server runs until the test ends
        let path = alice.directory + "/basket.sqlite"
        try smash(page: 1, of: path)

        let refused = try alice.run("add", "Eggs")
        #expect(refused.status == 1 && refused.stderr.contains("the replica \(path) is damaged"), "\(refused.stderr)")
        let doctor = try alice.ok("doctor")
        #expect(doctor.contains("Unreadable"), "\(doctor)")
        #expect(doctor.contains("Rebuilt from"), "\(doctor)")
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread"])
        try alice.ok("add", "Eggs")
        try alice.ok("sync")
    }

    /// An encrypted list's keys live in the replica file. A damaged items table leaves them
    /// readable: the rebuilt replica takes them back and reads the list at once. A file that is no
    /// longer a database loses them with the account's key pair: the doctor says so, reads none of
    /// the list's sealed values as text, and signing in again opens it from the account's envelope.
    @Test func anEncryptedListsKeysComeBackAfterADamagedFileIsRebuilt() throws {
        let (server, alice) = try synced("Milk, Bread", encrypted: true)
        defer { withExtendedLifetime(server) {} }
        let path = alice.directory + "/basket.sqlite"
        try smash(page: try rootPage(of: "items", in: path), of: path)
        let repaired = try alice.ok("doctor")
        #expect(repaired.contains("Rebuilt from") && !repaired.contains("no keys"), "\(repaired)")
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread"])
        try alice.ok("add", "Eggs")
        try alice.ok("sync")

        try smash(page: 1, of: path)
        let rebuilt = try alice.ok("doctor")
        #expect(rebuilt.contains("1 encrypted list has no keys on this device now"), "\(rebuilt)")
        #expect(!(try alice.ok("lists")).contains("s1."), "no sealed value was read as text")
        try alice.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        try alice.ok("sync")
        try alice.ok("list", "use", "Family")
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread", "Eggs"])
    }

    @Test func aTruncatedFileIsNamedAndRebuiltFromTheServer() throws {
        let (server, alice) = try synced((0..<500).map { "Item \($0)" }.joined(separator: ", "))
        defer { withExtendedLifetime(server) {} }  // the server runs until the test ends
        let path = alice.directory + "/basket.sqlite"
        // Everything into the main file first: pages still in the WAL would survive the cut.
        try Connection(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size / 2)) == 0)  // a copy cut short

        #expect(ReplicaFile.damage(at: path) != nil)
        let refused = try alice.run("ls")
        #expect(refused.status == 1 && refused.stderr.contains("the replica \(path) is damaged"), "\(refused.stderr)")
        let doctor = try alice.ok("doctor")
        #expect(doctor.contains("Rebuilt from"), "\(doctor)")
        #expect(try alice.listing().items.count == 500)
    }

    @Test func withoutAServerDoctorKeepsWhatCanBeRead() throws {
        let alice = Device(root, "offline")
        try alice.ok("add", "Milk, Bread")
        let path = alice.directory + "/basket.sqlite"
        try smash(page: try rootPage(of: "items", in: path), of: path)
        let doctor = try alice.ok("doctor")
        #expect(doctor.contains("No server is configured"), "\(doctor)")
        // The outbox held both adds: the items come back from it.
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread"])
    }
}
