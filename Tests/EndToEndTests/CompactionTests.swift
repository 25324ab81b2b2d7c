import BasketCore
import BasketReplica
import Foundation
import TestServers
import TestSupport
import Testing

/// Compaction end to end: `basket-server compact` against a running server, a pull cut in two by
/// it, and a device that joins afterwards knowing its history is incomplete.
struct CompactionTests {
    let root = TemporaryDirectory("compaction")

    /// Alice's list: Milk checked, unchecked and checked again (three superseded `checked`
    /// writes once the last one wins), and Bread.
    func aliceWithHistory(_ server: ServerProcess) throws -> Device {
        let alice = try Device.signedUp("alice", on: server, in: root)
        try alice.ok("list", "new", "Family", "--unencrypted")  // read here by a replica without keys
        try alice.ok("add", "Milk, Bread")
        try alice.ok("check", "milk")
        try alice.ok("uncheck", "milk")
        try alice.ok("check", "milk")
        try alice.ok("sync")
        return alice
    }

    func state(_ replica: Replica, _ list: ListID) throws -> Set<String> {
        Set(
            try replica.items(in: list, filter: .all).map {
                "\($0.name) checked=\($0.isChecked) deleted=\($0.isDeleted)"
            })
    }

    /// `basket-server compact --retention-days 0` drops exactly the superseded writes; a device
    /// joining afterwards gets the same state, and `basket history` tells it that older writes are
    /// missing, while the device that saw them all keeps a complete history.
    @Test func compactionKeepsTheStateAndANewDeviceKnowsItsHistoryIsIncomplete() throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try aliceWithHistory(server)
        let before = try #require(try server.metric("basket_operations_stored"))
        let compacted = try server.compact(retentionDays: 0)
        #expect(compacted.status == 0, "\(compacted.stdout) \(compacted.stderr)")
        #expect(try server.metric("basket_operations_stored") == before - 3)

        let bob = try Device.signedUp("bob", on: server, in: root)
        try alice.share(with: bob)
        let names = { (device: Device) in try device.listing().items.map { "\($0.name) \($0.checked)" }.sorted() }
        #expect(try names(bob) == names(alice))
        #expect(try names(bob) == ["Bread false", "Milk true"])

        struct History: Decodable {
            struct Entry: Decodable { var field: String }
            var historyComplete: Bool
            var history: [Entry]
        }
        func history(_ device: Device) throws -> History {
            try JSONDecoder().decode(History.self, from: Data(try device.ok("history", "milk", "--json").utf8))
        }
        let bobs = try history(bob)
        let alices = try history(alice)
        #expect(!bobs.historyComplete && alices.historyComplete)
        #expect(bobs.history.filter { $0.field == "checked" }.count == 1)
        #expect(alices.history.filter { $0.field == "checked" }.count == 4)
        #expect(try bob.ok("history", "milk").contains("incomplete: the server had dropped superseded writes"))
        #expect(try !alice.ok("history", "milk").contains("incomplete"))
    }

    /// A pull cut in two by a compaction: the first page taken before it, the rest after. The
    /// replica built from the pages has exactly Alice's state, and the pages after say the
    /// history is incomplete.
    @Test func aCompactionBetweenTwoPagesOfAPullLeavesTheStateExact() async throws {
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try aliceWithHistory(server)
        let aliceReplica = try Replica(path: alice.directory + "/basket.sqlite")
        let list = try #require(try aliceReplica.lists().first?.id)
        let transport = HTTPSyncTransport(baseURL: try #require(URL(string: server.url)), token: try alice.token())
        let reader = try Replica(path: root.file("reader.sqlite"))

        let first = try await transport.pull(list, after: 0, limit: 3, wait: 0)
        #expect(first.operations.count == 3 && first.more && first.historyComplete)
        try reader.merge(first.operations)
        let compacted = try server.compact(retentionDays: 0)
        #expect(compacted.status == 0, "\(compacted.stdout) \(compacted.stderr)")
        var cursor = first.cursor
        var rest: [PulledPage] = []
        for _ in 0..<10 {
            let page = try await transport.pull(list, after: cursor, limit: 3, wait: 0)
            try reader.merge(page.operations)
            rest.append(page)
            cursor = page.cursor
            if !page.more { break }
        }
        #expect(rest.first?.historyComplete == false)
        #expect(rest.last?.more == false)
        #expect(try state(reader, list) == state(aliceReplica, list))
        #expect(try state(reader, list).contains("Milk checked=true deleted=false"))
    }
}
