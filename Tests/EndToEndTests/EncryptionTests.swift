import BasketCore
import BasketReplica
import BasketSeal
import Foundation
import Postgres
import TestServers
import TestSupport
import Testing

/// Lists encrypted end to end against a real server (SQLite, or two instances on PostgreSQL with
/// BASKET_TEST_STORE=postgres), through real `basket` processes and the client library:
/// a thousand random names, notes and quantities and ten titles go through the server, a member
/// of another account joins with the code and reads them, two offline adds of "Milk" meet, and
/// every byte the server wrote (its store files with their write-ahead logs, a backup, an export,
/// its log and its metrics) holds none of them. The same search on a plain list finds its words,
/// so the search would have found a leak.
@Suite(.serialized)
struct EncryptionTests {
    let root = TemporaryDirectory("encryption")

    /// `count` words no other test and no dictionary has, 14 lowercase letters each.
    static func words(_ count: Int, _ random: inout some RandomNumberGenerator) -> [String] {
        (0..<count).map { _ in String((0..<14).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &random)! })
        }
    }

    /// Every file under `path` (a folder or one file), as bytes.
    static func files(under path: String) -> [(String, Data)] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else {
            return (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [(path, $0)] } ?? []
        }
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.compactMap { name in
            let file = (path as NSString).appendingPathComponent(name)
            return (try? Data(contentsOf: URL(fileURLWithPath: file))).map { (file, $0) }
        }
    }

    /// The words of `words` (14 lowercase letters each) found anywhere in `haystack`, in one pass
    /// over each file: every 14-letter window of a run of lowercase letters is looked up.
    static func found(_ words: [String], in haystack: [(String, Data)]) -> Set<String> {
        func code(_ letters: some Collection<UInt8>) -> UInt64 {
            letters.prefix(12).reduce(UInt64(0)) { $0 << 5 | UInt64($1 - 0x61) }
        }
        var byCode: [UInt64: [String]] = [:]
        for word in words { byCode[code(word.utf8), default: []].append(word) }
        var found = Set<String>()
        for (_, data) in haystack {
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                var run = 0
                for index in 0..<bytes.count {
                    let byte = bytes[index]
                    run = (0x61...0x7a).contains(byte) ? run + 1 : 0
                    guard run >= 14 else { continue }
                    let start = index - 13
                    guard let candidates = byCode[code(bytes[start..<start + 12])] else { continue }
                    let window = Array(bytes[start...index])
                    for word in candidates where Array(word.utf8) == window { found.insert(word) }
                }
            }
        }
        return found
    }

    /// A new device of the account opens its encrypted lists after sign-in, its own and one it
    /// joined, with the keys another device left sealed to the account's key pair; a new password
    /// keeps them open (the private key wrapped again); the recovery code sets a third and opens
    /// them too. The server never holds the password or the code.
    @Test func aNewDeviceOfTheAccountOpensItsEncryptedListsAfterSignIn() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let phone = Device(root, "phone")
        try phone.ok("remote", "set", server.url)
        let signedUp = try phone.ok("signup", "alice", "--password-stdin", stdin: "alice-password\n")
        let code = try #require(
            signedUp.split(separator: "\n").first { $0.hasPrefix("Your recovery code: ") }?
                .dropFirst("Your recovery code: ".count).split(separator: " ").first.map(String.init))
        try phone.ok("list", "new", "Family", "--encrypted")
        try phone.ok("add", "Milk")
        try phone.ok("add", "Engagement ring")
        try phone.ok("sync")
        // Bob's encrypted list, joined on the phone with its whole code.
        let bob = try Device.signedUp("bob", on: server, in: root)
        try bob.ok("list", "new", "Bob's", "--encrypted")
        try bob.ok("add", "Eggs")
        try bob.ok("sync")
        let shared = try bob.ok("share", "--json")
        let invite = try #require(
            (try JSONSerialization.jsonObject(with: Data(shared.utf8)) as? [String: Any])?["code"] as? String)
        try phone.ok("join", invite)

        func names(_ device: Device, _ list: String) throws -> Set<String> {
            try device.ok("list", "use", list)
            return Set(try device.listing().items.map(\.name))
        }
        // A laptop signs in: both lists come with their keys.
        let laptop = Device(root, "laptop")
        try laptop.ok("remote", "set", server.url)
        let signedIn = try laptop.ok("login", "alice", "--password-stdin", stdin: "alice-password\n")
        #expect(!signedIn.contains("recovery code"), "a key pair is made once")
        #expect(try names(laptop, "Family") == ["Milk", "Engagement ring"])
        #expect(try names(laptop, "Bob's") == ["Eggs"])
        #expect(try laptop.ok("lists").contains("Family  (2 to buy, 2 items; owner, encrypted)"))

        // A new password: the laptop is signed out, a tablet signs in with it and reads the lists.
        try phone.ok("password", "--password-stdin", stdin: "alice-password\nalice-password-2\n")
        #expect(try laptop.run("sync").status != 0)
        let tablet = Device(root, "tablet")
        try tablet.ok("remote", "set", server.url)
        #expect(try tablet.run("login", "alice", "--password-stdin", stdin: "alice-password\n").status != 0)
        try tablet.ok("login", "alice", "--password-stdin", stdin: "alice-password-2\n")
        #expect(try names(tablet, "Family") == ["Milk", "Engagement ring"])

        // The password forgotten: the recovery code sets a third, and the lists open on a new device.
        let spare = Device(root, "spare")
        try spare.ok("remote", "set", server.url)
        let wrong = try spare.run(
            "recover", "alice", "--password-stdin", stdin: "\(String(code.reversed()))\nx-password-3\n")
        #expect(wrong.status != 0)
        try spare.ok("recover", "alice", "--password-stdin", stdin: "\(code)\nalice-password-3\n")
        try spare.ok("sync")
        #expect(try names(spare, "Family") == ["Milk", "Engagement ring"])
        #expect(try names(spare, "Bob's") == ["Eggs"])
        #expect(try tablet.run("sync").status != 0, "every other device is signed out")

        // What the server wrote holds neither a password nor the code, nor the lists' words.
        let written = Self.files(under: root.file("server"))
        let secrets = ["alice-password", code, "Engagement ring", "Eggs"]
        for secret in secrets {
            #expect(!written.contains { $0.1.range(of: Data(secret.utf8)) != nil }, "\(secret) is on the server")
        }
    }

    /// A long-lived encrypted list: the owner's device leaves a snapshot on the server once the log
    /// has grown (every 2,000 operations); a member who joins after starts from it and pulls only
    /// the tail after it, and reads every item; the snapshot holds none of the names in clear.
    @Test func aNewMemberStartsFromTheOwnersSnapshotThenTheTail() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Family")
        for batch in 0..<3 {
            try alice.ok("add", (0..<300).map { "Secret item \(batch * 300 + $0)" }.joined(separator: ", "))
        }
        let synced = try JSONSerialization.jsonObject(with: Data(try alice.ok("sync", "--json").utf8))
        let list = try #require(try alice.listing().list?.id)
        // 900 items, three registers each: past 2,000 operations, so the sync left a snapshot.
        let answer = try Executables.runShell(
            "curl -s -H 'Authorization: Bearer \(try alice.token())' '\(server.url)/v1/lists/\(list)/snapshot'")
        let snapshot = try #require(
            try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any], "\(synced)")
        let cursor = try #require(snapshot["cursor"] as? Int)
        #expect(cursor >= 2_700)
        let text = try #require(snapshot["snapshot"] as? String)
        #expect(text.hasPrefix("n1.0.") && !text.contains("Secret"))
        // Written after the snapshot: the tail a new member pulls.
        try alice.ok("add", "Tail one, Tail two")
        try alice.ok("check", "Secret item 5")

        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.share(with: bob)
        let items = try bob.listing().items
        #expect(items.count == 902)
        #expect(items.first { $0.name == "Secret item 5" }?.checked == true)
        #expect(Set(items.map(\.name)).isSuperset(of: ["Tail one", "Tail two", "Secret item 899"]))
        // Bob's copy began at the snapshot: its history before it is not here (a pull of the whole
        // log would have it all), and the server's log after it is what Bob pulled.
        let state = try Replica(path: bob.directory + "/basket.sqlite").syncState(of: try #require(ListID(hex: list)))
        #expect(state.historyIncomplete && state.cursor > cursor)
        #expect(try bob.ok("history", "Secret item 5").contains("incomplete"))
        #expect(try alice.exported().contains("Secret item 899") && bob.exported().contains("Secret item 899"))
    }

    /// A member removed, and a member leaving: the list takes no write until a remaining device made
    /// a new key and left it to the others (the remover's at once; after a departure, the next
    /// device that writes), and every other device takes it when the server refuses its old one.
    @Test func removingOrLosingAMemberRenewsTheListsKeyAndTheOthersFollow() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Family", "--encrypted")
        try alice.ok("add", "Milk")
        try alice.ok("sync")
        func join(_ name: String) throws -> Device {
            let device = try Device.signedUp(name, on: server, in: root)
            let shared = try alice.ok("share", "--json")
            let code = try #require(
                (try JSONSerialization.jsonObject(with: Data(shared.utf8)) as? [String: Any])?["code"] as? String)
            try device.ok("join", code)
            return device
        }
        let bob = try join("bob")
        let carol = try join("carol")
        let dan = try join("dan")

        // Alice removes Carol: her device makes the next key at once.
        let removed = try alice.ok("members", "rm", "carol", "--yes")
        #expect(removed.contains("The list has a new key, left to the other members"), "\(removed)")
        // Bob's device still holds the old key: its push is refused, it takes the new one, and sends.
        try bob.ok("add", "Bread")
        try bob.ok("sync")
        try alice.ok("sync")
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread"])
        #expect(Set(try dan.listing().items.map(\.name)) == ["Milk"])
        try dan.ok("sync")
        #expect(Set(try dan.listing().items.map(\.name)) == ["Milk", "Bread"])
        // Carol's copy stays hers, read-only, and learns nothing new.
        let carolSync = try carol.run("sync")
        #expect(Set(try carol.listing().items.map(\.name)) == ["Milk"], "\(carolSync.stdout)")

        // Dan leaves: the list awaits a key; Bob's next write makes it (an editor may, then), and
        // Alice's device follows.
        try dan.ok("leave", "--yes")
        try bob.ok("add", "Jam")
        try bob.ok("sync")
        try alice.ok("add", "Tea")
        try alice.ok("sync")
        try bob.ok("sync")
        #expect(Set(try bob.listing().items.map(\.name)) == ["Milk", "Bread", "Jam", "Tea"])
        #expect(Set(try alice.listing().items.map(\.name)) == ["Milk", "Bread", "Jam", "Tea"])
        // A new member joins with the keys in the code, the earlier ones too, and reads it all.
        let erin = try join("erin")
        try erin.ok("sync")
        #expect(Set(try erin.listing().items.map(\.name)) == ["Milk", "Bread", "Jam", "Tea"])
    }

    /// An owner encrypts a plain list: a member's device that wrote offline takes the keys at its
    /// next sync and its writes arrive sealed; both end with one list, names adding to the same
    /// items; the server keeps none of the list's words from then on.
    @Test func anOwnerEncryptsAPlainListAndEveryDeviceFollows() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        var random = SystemRandomNumberGenerator()
        let secrets = Self.words(12, &random)
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Family", "--unencrypted")
        try alice.ok("add", (secrets.prefix(10) + ["Milk"]).joined(separator: ", "))
        try alice.ok("shops", "add", "Lidl")
        try alice.ok("set", "Milk", "--shop", "Lidl")
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.share(with: bob)
        #expect(try bob.listing().items.count == 11)
        // Bob writes offline, before he hears of the conversion.
        try bob.ok("--no-sync", "add", "\(secrets[10]), Bread")
        try bob.ok("--no-sync", "check", "Milk")

        let said = try alice.ok("list", "encrypt")
        #expect(said.contains("Encrypted Family end to end: its keys went to 2 members"), "\(said)")
        #expect(try alice.ok("lists").contains("owner, encrypted"))
        let again = try alice.run("list", "encrypt")
        #expect(again.status != 0 && again.stderr.contains("already encrypted"))

        let synced = try bob.run("sync")
        #expect(
            synced.status == 0 && synced.stdout.contains("an owner encrypted it end to end"),
            "\(synced.stdout) \(synced.stderr)")
        #expect(try bob.ok("lists").contains("encrypted"))
        try alice.ok("sync")
        let names = Set(secrets.prefix(11) + ["Milk", "Bread"])
        for device in [alice, bob] {
            let items = try device.listing().items
            #expect(Set(items.map(\.name)) == names, "\(device.directory)")
            #expect(items.first { $0.name == "Milk" }?.checked == true, "\(device.directory)")
            #expect(try device.ok("ls", "--at-shop", "Lidl").contains("Milk"))
        }
        // A name added after the conversion lands on the converted item, on both devices.
        try bob.ok("add", "milk")
        try alice.ok("sync")
        #expect(try alice.listing().items.filter { ItemKey.normalize($0.name) == "milk" }.count == 1)

        // The server keeps none of the list's words: its export, and (SQLite) its files, whose
        // dropped pages were overwritten; PostgreSQL's dead rows wait for its vacuum (docs/encryption.md).
        let dump = root.file("export.jsonl")
        #expect(try server.command("export", dump).status == 0)
        var written = Self.files(under: dump)
        if server.database == nil { written += Self.files(under: server.dataDirectory) }
        let leaked = Self.found(Array(secrets.prefix(11)), in: written)
        #expect(leaked.isEmpty, "the server kept \(leaked.count) words of the converted list, e.g. \(leaked.prefix(3))")
        #expect(server.stop() == 0)
    }

    @Test func theServerKeepsNoneOfAnEncryptedListsWords() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        var random = SystemRandomNumberGenerator()
        let secretNames = Self.words(1_000, &random)
        let secretNotes = Self.words(1_000, &random)
        let secretQuantities = Self.words(1_000, &random)
        let secretTitles = Self.words(10, &random)
        let plainWords = Self.words(50, &random)

        // Alice makes ten encrypted lists and one plain one; the bulk goes through the client
        // library on her device's file, the sync through her `basket`.
        let alice = try Device.signedUp("alice", on: server, in: root)
        // Encrypted by default; the plain list is asked for.
        for title in secretTitles { try alice.ok("list", "new", title) }
        try alice.ok("list", "new", "Plain \(plainWords[0])", "--unencrypted")
        do {
            let keyring = SealKeyring()
            var configuration = Replica.Configuration()
            configuration.keyring = keyring
            configuration.synchronous = .off
            let replica = try Replica(path: alice.directory + "/basket.sqlite", configuration: configuration)
            let lists = try replica.lists()
            for (index, title) in secretTitles.enumerated() {
                let list = try #require(lists.first { $0.title == title })
                #expect(replica.isEncrypted(list.id))
                let items = (0..<100).map { n in
                    let at = index * 100 + n
                    return Replica.NewItem(name: secretNames[at], quantity: secretQuantities[at], note: secretNotes[at])
                }
                _ = try replica.add(items, to: list.id)
            }
            let plain = try #require(lists.first { $0.title.hasPrefix("Plain ") })
            #expect(!replica.isEncrypted(plain.id))
            _ = try replica.add(
                plainWords.dropFirst().map { Replica.NewItem(name: $0, note: "note " + $0) }, to: plain.id)
        }
        try alice.ok("sync")
        let listed = try alice.ok("lists")
        #expect(listed.contains("\(secretTitles[0])  (100 to buy, 100 items; owner, encrypted)"))
        #expect(listed.contains("Plain \(plainWords[0])  (49 to buy, 49 items; owner)"))

        // Bob, another account, joins the first list with the whole code and reads every item.
        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.ok("list", "use", secretTitles[0])
        let shared = try alice.ok("share", "--json")
        let code = try #require(
            (try JSONSerialization.jsonObject(with: Data(shared.utf8)) as? [String: Any])?["code"] as? String)
        #expect(code.contains(".k1."), "the terminal's code carries the keys after a dot")
        let withoutKeys = try bob.run("join", String(code.prefix { $0 != "." }))
        #expect(withoutKeys.status != 0 && withoutKeys.stderr.contains("encrypted end to end"))
        try bob.ok("join", code)
        let read = try bob.listing()
        #expect(read.list?.title == secretTitles[0])
        #expect(Set(read.items.map(\.name)) == Set(secretNames.prefix(100)))

        // Both add Milk offline; after both sync, one Milk on both.
        try alice.ok("--no-sync", "add", "Milk")
        try bob.ok("--no-sync", "add", "milk")
        try alice.ok("sync")
        try bob.ok("sync")
        try alice.ok("sync")
        for device in [alice, bob] {
            let milks = try device.listing().items.filter { ItemKey.normalize($0.name) == "milk" }
            #expect(milks.count == 1, "\(device.directory)")
        }

        // Going shopping at a shop with a secret name: the other member reads it, the server cannot.
        let secretShop = secretTitles[1] + " market"
        try alice.ok("shopping", "start", "--at", secretShop)
        let together = try bob.ok("shopping")
        #expect(together.contains("alice is shopping at \(secretShop)"), "\(together)")

        // Every byte the server wrote.
        let backup = root.file("backup.db")
        #expect(try server.backup(to: backup).status == 0)
        let dump = root.file("export.jsonl")
        #expect(try server.command("export", dump).status == 0)
        var written = Self.files(under: server.dataDirectory) + Self.files(under: backup) + Self.files(under: dump)
        written.append(("log", Data(server.log.utf8)))
        let metrics = try Executables.runShell("curl -s http://127.0.0.1:\(server.port)/metrics").stdout
        written.append(("metrics", Data(metrics.utf8)))
        if let database = server.database {
            let plainDump = root.file("plain.sql")
            #expect(
                try Executables.runShell("pg_dump --format=plain --file='\(plainDump)' '\(database.url)'").status == 0)
            written += Self.files(under: plainDump)
            // The cluster's files, write-ahead log included: these words are in no other test's data.
            let folder = try PostgresConnection(url: database.url).query("SHOW data_directory").string(0, 0) ?? ""
            written += Self.files(under: folder)
        }
        #expect(written.count >= 3)
        let leaked = Self.found(
            secretNames + secretNotes + secretQuantities + secretTitles + [secretShop], in: written)
        #expect(leaked.isEmpty, "the server wrote \(leaked.count) words of encrypted lists, e.g. \(leaked.prefix(3))")
        // The control: the plain list's words are found in what the server wrote, in its export,
        // and in the store's own files (SQLite's folder; PostgreSQL's cluster, whose pg_dump writes
        // the log's bytes in hex).
        #expect(Self.found(plainWords, in: written).count == plainWords.count)
        #expect(Self.found(plainWords, in: Self.files(under: dump)).count == plainWords.count)
        let store = written.filter { $0.0 != "log" && $0.0 != "metrics" && $0.0 != dump && $0.0 != backup }
        #expect(Self.found(plainWords, in: store).count == plainWords.count)
        #expect(server.stop() == 0)
    }
}
