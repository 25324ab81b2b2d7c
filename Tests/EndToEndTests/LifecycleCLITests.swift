import Foundation
import TestServers
import TestSupport
import Testing

/// Devices, passwords, invites and removed members, the way people meet them: real `basket`
/// processes against a real server, and the files they leave behind.
@Suite(.serialized)
struct LifecycleCLITests {
    let root = TemporaryDirectory("lifecycle")

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// `basket invites --json`'s rows.
    func invites(_ device: Device) throws -> [[String: Any]] {
        (try json(try device.ok("invites", "--json")) as? [String: Any])?["invites"] as? [[String: Any]] ?? []
    }

    func pending(_ device: Device) throws -> Int {
        (try json(try device.ok("status", "--json")) as? [String: Any])?["pending"] as? Int ?? -1
    }

    /// Alice signs out her laptop from her phone: the laptop's next sync is refused and says how to
    /// sign in again; its list and unsent changes stay; after signing in again they go through.
    /// A server started with `basket-lab replay`'s frozen clock says so at start, on stderr: a
    /// test switch left on in production would freeze every token's age.
    @Test func aFrozenClockIsAnnouncedAtStart() throws {
        let server = try ServerProcess(
            dataDirectory: root.file("frozen-server"), arguments: ["--frozen-clock", "1800000000000"])
        defer { server.stop() }
        #expect(server.log.contains("warning: the clock stands still at 1800000000000 ms"), "\(server.log)")
        let plain = try ServerProcess(dataDirectory: root.file("plain-server"))
        defer { plain.stop() }
        #expect(!plain.log.contains("warning"), "\(plain.log)")
    }

    /// One device used by two accounts, one after the other, writes for each under an id of its
    /// own: the members answer of a list both share does not show one device under both.
    @Test func anotherAccountOnTheSameDeviceWritesUnderANewReplicaID() throws {
        let server = try ServerProcess(dataDirectory: root.file("shared-device-server"))
        defer { server.stop() }
        let shared = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try shared.ok("list", "new", "Family")
        try shared.ok("add", "Milk")
        try shared.ok("sync")
        try shared.share(with: bob)
        try shared.ok("logout")
        try shared.ok("login", "bob", "--password-stdin", stdin: "bob-password\n")
        try shared.ok("--list", "Family", "add", "Eggs")
        try shared.ok("sync")
        let list = try #require(try bob.listing().list?.id)
        let answer = try Executables.runShell(
            "curl -s -H 'Authorization: Bearer \(try bob.token())' \(server.url)/v1/lists/\(list)/members")
        let members =
            (try? JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any])?["members"]
            as? [[String: Any]] ?? []
        let ids = Dictionary(
            uniqueKeysWithValues: members.map {
                ($0["account"] as? String ?? "", Set($0["replicas"] as? [String] ?? []))
            })
        #expect(ids["alice"]?.count == 1 && ids["bob"]?.count == 1, "\(answer.stdout)")
        #expect(ids["alice"]?.isDisjoint(with: ids["bob"] ?? []) == true, "\(answer.stdout)")
    }

    /// `basket delete-account`: a wrong password deletes nothing; the right one deletes the
    /// account: its own list is gone from the server, the shared one passes to Bob, this device
    /// is signed out and keeps its copies read-only.
    @Test func deletingAnAccountFromTheCommandLine() throws {
        let server = try ServerProcess(dataDirectory: root.file("delete-account-server"))
        defer { server.stop() }
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "new", "Mine")
        try alice.ok("add", "Secret")
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk")
        try alice.share(with: bob)
        let wrong = try alice.run("delete-account", "--yes", "--password-stdin", stdin: "wrong password\n")
        #expect(wrong.status != 0 && wrong.stderr.contains("invalid_credentials"), "\(wrong.stderr)")
        let done = try alice.ok("delete-account", "--yes", "--password-stdin", stdin: "alice-password\n")
        #expect(done.contains("1 list deleted, 1 list passed to another member, 0 lists left"), "\(done)")
        #expect(try alice.run("sync").status != 0)
        #expect(try alice.ok("--list", "Mine", "ls").contains("Secret"))
        try bob.ok("sync")
        #expect(try bob.ok("members").contains("bob") && !(try bob.ok("members")).contains("alice"))
        #expect(try bob.ok("members", "--json").contains("\"owner\""))
        let again = Device(root, "alice-again")
        try again.ok("remote", "set", server.url)
        let login = try again.run("login", "alice", "--password-stdin", stdin: "alice-password\n")
        #expect(login.status != 0)
    }

    @Test func aDeviceSignedOutFromAnotherKeepsItsListAndOutbox() throws {
        let server = try ServerProcess(dataDirectory: root.file("devices-server"))
        let phone = try Device.signedUp("alice", on: server, in: root)
        let laptop = Device(root, "alice-laptop")
        try laptop.ok("remote", "set", server.url)
        try laptop.ok("login", "alice", "--password-stdin", "--device", "laptop", stdin: "alice-password\n")
        try phone.ok("add", "Milk")
        try phone.ok("sync")
        try laptop.ok("sync")
        let devices = try #require(
            (try json(try phone.ok("devices", "--json")) as? [String: Any])?["devices"] as? [[String: Any]])
        #expect(devices.count == 2 && devices.last?["name"] as? String == "laptop")
        #expect((devices.first?["name"] as? String)?.hasPrefix("basket on ") == true)
        #expect(devices.map { $0["current"] as? Bool } == [true, false])
        let laptopID = try #require(devices.first { $0["name"] as? String == "laptop" }?["id"] as? String)
        let listed = try phone.ok("devices")
        #expect(listed.contains("laptop") && listed.contains("(this device)"))

        try laptop.ok("add", "--no-sync", "Bread, Eggs")
        let waiting = try pending(laptop)
        #expect(waiting > 0)
        #expect(try phone.ok("devices", "revoke", laptopID).contains("Signed out device"))
        let refused = try laptop.run("sync")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("this device is signed out") && refused.stderr.contains("basket login"))
        #expect(try pending(laptop) == waiting)
        #expect(try laptop.listing().items.map(\.name).sorted() == ["Bread", "Eggs", "Milk"])
        try laptop.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        try laptop.ok("sync")
        #expect(try pending(laptop) == 0)
        try phone.ok("sync")
        #expect(try phone.listing().items.map(\.name).sorted() == ["Bread", "Eggs", "Milk"])
    }

    @Test func aNewPasswordAndSigningOutEverywhere() throws {
        let server = try ServerProcess(dataDirectory: root.file("password-server"))
        let phone = try Device.signedUp("alice", on: server, in: root)
        let laptop = Device(root, "password-laptop")
        try laptop.ok("remote", "set", server.url)
        try laptop.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        let changed = try phone.ok("password", "--password-stdin", stdin: "alice-password\nbetter-secret-2\n")
        #expect(changed.contains("1 other device was signed out"))
        #expect(try laptop.run("sync").stderr.contains("this device is signed out"))
        let wrong = try laptop.run("login", "alice", "--password-stdin", stdin: "alice-password\n")
        #expect(wrong.status == 1 && wrong.stderr.contains("wrong account name or password"))
        try laptop.ok("login", "alice", "--password-stdin", stdin: "better-secret-2\n")
        #expect(try laptop.ok("logout", "--everywhere").contains("Signed out everywhere (2 devices)"))
        #expect(try phone.run("sync").stderr.contains("this device is signed out"))
        let notSignedIn = try laptop.run("sync")
        #expect(notSignedIn.status != 0 && notSignedIn.stderr.contains("not signed in"))
    }

    /// Invites: as many uses as asked, listed without their codes, withdrawn; a member removed by
    /// the owner is told so by its next sync, keeps its list and unsent changes, and its old code
    /// does not bring it back.
    @Test func invitesAndARemovedMember() throws {
        let server = try ServerProcess(dataDirectory: root.file("invites-server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bob", on: server, in: root)
        let carol = try Device.signedUp("carol", on: server, in: root)
        let dave = try Device.signedUp("dave", on: server, in: root)
        try alice.ok("list", "new", "Family")
        try alice.ok("add", "Milk")
        let shared = try #require(
            try json(try alice.ok("share", "--uses", "3", "--expires", "2d", "--json")) as? [String: Any])
        let code = try #require(shared["code"] as? String)
        #expect(shared["usesLeft"] as? Int == 3)
        let text = try alice.ok("share", "--role", "viewer")
        #expect(text.contains("Works once, until"))
        let listed = try alice.ok("invites")
        #expect(listed.contains("3 uses left") && listed.contains("1 use left") && !listed.contains(code))
        let rows = try invites(alice)
        let viewerInvite = try #require(rows.first { $0["role"] as? String == "viewer" }?["id"] as? String)
        #expect(try alice.ok("invites", "revoke", viewerInvite).contains("Withdrew invite"))
        #expect(try invites(alice).count == 1)
        for bad in [
            ["--uses", "0"], ["--uses", "101"], ["--expires", "10s"], ["--expires", "31d"], ["--expires", "x"],
        ] {
            let refused = try Executables.run("basket", ["--db", alice.directory, "share"] + bad)
            #expect(refused.status == 64, "\(bad)")
        }

        try bob.ok("join", code)
        try carol.ok("join", code)
        try bob.ok("add", "Tea")
        try bob.ok("sync")
        try bob.ok("add", "Coffee", "--no-sync")  // not sent yet
        let unsent = try pending(bob)
        #expect(unsent == 4)  // Coffee: its name, checked and deleted registers, and its aisle
        #expect(try alice.ok("sync").contains("received"))
        let members = try invites(alice)
        #expect(members.first?["usesLeft"] as? Int == 1)
        // The owner removes Bob (the server's API: the CLI has no command for it yet).
        let config = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: alice.directory + "/config.json")))
                as? [String: Any])
        let token = try #require(config["token"] as? String)
        let removed = try RawHTTP.request(
            port: server.port, "DELETE", "/v1/lists/\(try listID(alice))/members/bob",
            headers: ["Authorization": "Bearer \(token)"])
        #expect(removed.status == 204)
        let told = try bob.run("sync")
        #expect(told.status == 0)
        #expect(told.stderr.contains("You are no longer a member of Family on the server"))
        #expect(told.stderr.contains("1 change that was not sent"))  // Coffee: four writes, one change
        #expect(try pending(bob) == unsent)
        #expect(try bob.listing().items.map(\.name).sorted() == ["Coffee", "Milk", "Tea"])
        let rejoin = try bob.run("join", code)
        #expect(rejoin.status == 1 && rejoin.stderr.contains("no such invite"))
        // The code Bob joined with was withdrawn with his removal: its last use would let him back
        // in as a new account. Someone new needs a new code.
        let late = try dave.run("join", code)
        #expect(late.status == 1 && late.stderr.contains("no such invite"))
        #expect(try invites(alice).isEmpty)
        try dave.ok(
            "join", try #require(try json(try alice.ok("share", "--json")) as? [String: Any])["code"] as! String)
    }

    func listID(_ device: Device) throws -> String {
        try #require(try device.listing().list?.id)
    }

    /// Files that hold lists and tokens are private; a plain-http server elsewhere is warned about.
    @Test func filesArePrivateAndPlainHTTPIsWarnedAbout() throws {
        let server = try ServerProcess(dataDirectory: root.file("modes-server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("add", "Milk")
        try alice.ok("sync")
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
        }
        #expect(try mode(alice.directory) == 0o700)
        #expect(try mode(alice.directory + "/basket.sqlite") == 0o600)
        #expect(try mode(alice.directory + "/config.json") == 0o600)
        let wal = alice.directory + "/basket.sqlite-wal"
        if FileManager.default.fileExists(atPath: wal) { #expect(try mode(wal) == 0o600) }
        try alice.ok("export", root.file("alice.ops"))
        #expect(try mode(root.file("alice.ops")) == 0o600)
        #expect(try mode(server.dataDirectory) == 0o700)
        #expect(try mode(server.dataDirectory + "/basket-server.sqlite") == 0o600)
        let backup = root.file("modes-backup.sqlite")
        #expect(try Executables.run("basket-server", ["--data", server.dataDirectory, "backup", backup]).status == 0)
        #expect(try mode(backup) == 0o600)
        let export = root.file("modes-export.jsonl")
        #expect(try Executables.run("basket-server", ["--data", server.dataDirectory, "export", export]).status == 0)
        #expect(try mode(export) == 0o600)
        // No temporary file is left beside the config.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: alice.directory).allSatisfy { !$0.hasSuffix(".tmp") })

        let elsewhere = try alice.run("remote", "set", "http://192.0.2.10:8080")
        #expect(elsewhere.status == 0 && elsewhere.stderr.contains("travel in clear"))
        let loopback = try alice.run("remote", "set", "http://127.0.0.1:8080")
        #expect(loopback.status == 0 && !loopback.stderr.contains("clear"))
        let tls = try alice.run("remote", "set", "https://basket.example.org")
        #expect(tls.status == 0 && !tls.stderr.contains("clear"))
    }

    /// `--signup invite-only`: an account only with a code from `basket-server signup-invite`.
    @Test func signupByInviteOnly() throws {
        let server = try ServerProcess(
            dataDirectory: root.file("signup-server"), arguments: ["--signup", "invite-only"])
        let made = try Executables.run(
            "basket-server", ["--data", server.dataDirectory, "signup-invite", "--uses", "1"])
        #expect(made.status == 0)
        let code = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.count == 19 && made.stderr.contains("basket signup NAME --invite"))
        let alice = Device(root, "signup-alice")
        try alice.ok("remote", "set", server.url)
        let without = try alice.run("signup", "alice", "--password-stdin", stdin: "alice-password\n")
        #expect(without.status == 1 && without.stderr.contains("invite"))
        try alice.ok("signup", "alice", "--password-stdin", "--invite", code, stdin: "alice-password\n")
        let bob = Device(root, "signup-bob")
        try bob.ok("remote", "set", server.url)
        let used = try bob.run("signup", "bob", "--password-stdin", "--invite", code, stdin: "bob-password\n")
        #expect(used.status == 1 && used.stderr.contains("used up"))
    }
}
