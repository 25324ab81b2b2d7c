import BasketCore
import BasketServer
import BasketServerCLI
import Foundation
import TestServers
import TestSupport
import Testing

/// `basket-server export` / `import`: a whole store out to JSON lines and into a new store.
struct StoreDumpTests {
    @Test func aStoreExportedAndImportedIsTheSameStore() async throws {
        let harness = try Harness()
        let alice = try await harness.signUp("alice")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(alice)
        try await harness.join(list, owner: alice, member: bob, role: "viewer")
        let invite = try await harness.call("POST", "/v1/lists/\(list)/invites", token: alice, json: ["role": "editor"])
        try #require(invite.status == 201)
        _ = try await harness.push(
            harness.operations(list, names: (0..<300).map { "Item \($0)" }), to: list, token: alice)
        let other = try await harness.newList(bob)
        _ = try await harness.push(harness.operations(other, names: ["Crème fraîche", "Øl"]), to: other, token: bob)

        let folder = TemporaryDirectory("dump")
        let dump = folder.file("store.jsonl")
        let counts = try harness.store.export(to: dump)
        #expect(counts["accounts"] == 2 && counts["lists"] == 2 && counts["members"] == 3 && counts["ops"] == 302)
        // The viewer's single-use invite was used up (and its use recorded); the editor invite is out.
        #expect(counts["tokens"] == 2 && counts["invites"] == 1 && counts["invite_uses"] == 1)

        let copy = try SQLiteStore(path: folder.file("copy.sqlite"), fsyncEveryCommit: false)
        #expect(try copy.importDump(from: dump) == counts)
        // Exported again, the copy gives the same bytes; and it serves the same log.
        let again = folder.file("again.jsonl")
        _ = try copy.export(to: again)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == Data(contentsOf: URL(fileURLWithPath: again)))
        for id in [list, other] {
            let original = try harness.store.page(of: id, after: 0, limit: 5_000)
            let copied = try copy.page(of: id, after: 0, limit: 5_000)
            #expect(original.encoded == copied.encoded && original.cursor == copied.cursor)
            #expect(original.epoch == copied.epoch)
        }
        #expect(try copy.account(named: "alice")?.passwordHash == harness.store.account(named: "alice")?.passwordHash)

        // Not into a store that holds something; a malformed dump changes nothing.
        #expect(throws: StoreDump.FormatError.self) { try copy.importDump(from: dump) }
        let broken = folder.file("broken.jsonl")
        let lines = try String(contentsOfFile: dump, encoding: .utf8).split(separator: "\n")
        try (lines.prefix(5).joined(separator: "\n") + "\n{\"table\":\"ops\",\"row\":[1]}\n")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let empty = try SQLiteStore(path: folder.file("empty.sqlite"), fsyncEveryCommit: false)
        #expect(throws: StoreDump.FormatError.self) { try empty.importDump(from: broken) }
        #expect(try empty.statistics().accounts == 0 && empty.statistics().operations == 0)
        // A value a store cannot keep: a number that is not whole, an object that is not bytes.
        for value in ["1.5", #"{"hex":"zz"}"#, #"{"other":1}"#, "[1]", "true"] {
            let bad =
                lines.prefix(2).joined(separator: "\n") + "\n{\"table\":\"accounts\",\"row\":[9,\"x\",\(value)]}\n"
            try bad.write(toFile: broken, atomically: true, encoding: .utf8)
            #expect(throws: StoreDump.FormatError.self, "\(value)") { try empty.importDump(from: broken) }
        }
        #expect(try empty.statistics().accounts == 0 && empty.statistics().operations == 0)
        #expect(throws: StoreDump.FormatError.self) { try empty.importDump(from: folder.file("missing.jsonl")) }
        #expect(throws: StoreDump.FormatError.self) { try harness.store.export(to: dump) }  // exists
    }

    @Test func theServerCommandExportsAndImports() throws {
        let folder = TemporaryDirectory("dump-command")
        let source = folder.file("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: source + "/basket-server.sqlite", fsyncEveryCommit: false)
        _ = try store.createAccount(name: "alice", passwordHash: "x")
        let dump = folder.file("dump.jsonl")
        #expect(ServerCommand.main(["--data", source, "export", dump], environment: [:]) == 0)
        let target = folder.file("target")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        #expect(ServerCommand.main(["--data", target, "import", dump], environment: [:]) == 0)
        #expect(try SQLiteStore(path: target + "/basket-server.sqlite").account(named: "alice") != nil)
        // Twice: the store is not empty any more.
        #expect(ServerCommand.main(["--data", target, "import", dump], environment: [:]) == 1)
        #expect(ServerCommand.main(["--data", target, "import"], environment: [:]) == 64)
    }

    /// `basket-server export` from a SQLite data folder, `import` into PostgreSQL with --store,
    /// and back: the files are the same bytes.
    @Test(.enabled(if: TestPostgres.url != nil, Comment(rawValue: TestPostgres.unavailable)))
    func theServerCommandMovesAStoreToPostgreSQLAndBack() throws {
        let folder = TemporaryDirectory("dump-postgres")
        let source = folder.file("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: source + "/basket-server.sqlite", fsyncEveryCommit: false)
        let alice = try store.createAccount(name: "alice", passwordHash: "x")
        let list = ListID.random()
        _ = try store.createList(list, owner: alice.id)
        _ = try store.append(
            [
                Op(
                    list: list, item: ItemID(list: list, key: "milk"), field: .name, value: .text("Milk"),
                    version: Version(
                        timestamp: HybridTimestamp(milliseconds: 1_764_400_000_000, counter: 0),
                        replica: ReplicaID(rawValue: 9)))
            ], to: list, receivedAt: 5)
        let dump = folder.file("dump.jsonl")
        #expect(ServerCommand.main(["--data", source, "export", dump], environment: [:]) == 0)
        let database = try TestDatabase()
        #expect(ServerCommand.main(["import", dump], environment: ["BASKET_STORE": database.url]) == 0)
        let back = folder.file("back.jsonl")
        #expect(ServerCommand.main(["--store", database.url, "export", back], environment: [:]) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dump)) == Data(contentsOf: URL(fileURLWithPath: back)))
        // Not twice into the same database.
        #expect(ServerCommand.main(["--store", database.url, "import", dump], environment: [:]) == 1)
        let target = folder.file("target")
        #expect(ServerCommand.main(["--data", target, "import", back], environment: [:]) == 0)
        #expect(try SQLiteStore(path: target + "/basket-server.sqlite").head(of: list).cursor == 1)
    }
}
