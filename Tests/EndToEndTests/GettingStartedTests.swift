import BasketCore
import BasketReplica
import BasketSearch
import Foundation
import TestServers
import TestSupport
import Testing

/// The code of the BasketReplica documentation's getting-started article
/// (Client/BasketReplica/BasketReplica.docc/GettingStarted.md), compiled and run against a real
/// server: every code block of the article must appear in this file as it is written there.
struct GettingStartedTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Client/BasketReplica/BasketReplica.docc/GettingStarted.md")

    /// The article's Swift code blocks, each as its lines without leading white space.
    static func codeBlocks() throws -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in try String(contentsOf: article, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        {
            if line.hasPrefix("```swift") {
                current = []
            } else if line.hasPrefix("```"), let block = current {
                blocks.append(block)
                current = nil
            } else if current != nil {
                current!.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        return blocks
    }

    @Test func everyCodeBlockOfTheArticleIsInThisTest() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
        let blocks = try Self.codeBlocks()
        #expect(blocks.count == 5)
        for block in blocks {
            #expect(source.contains(block.joined(separator: "\n")), "not in the test: \(block.joined(separator: "\n"))")
        }
    }

    @Test func theArticlesCodeRuns() async throws {
        let root = TemporaryDirectory("getting-started")
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let serverURL = try #require(URL(string: server.url))
        let directory = root.url.path

        // Open a replica and write
        let replica = try Replica(path: directory + "/basket.sqlite")
        let list = try replica.createList(title: "Shopping")
        try replica.add(["Milk", "Eggs", "Tea"], to: list.id)
        let milk = try #require(try replica.items(in: list.id).first { $0.name == "Milk" })
        try replica.check(milk.id, in: list.id)
        #expect(try replica.items(in: list.id, filter: .checked).map(\.name) == ["Milk"])

        // Observe changes
        let changes = replica.updates()
        try replica.add(["Bread"], to: list.id)
        for await change in changes {
            print("changed: \(change.items.count) item(s), from \(change.origin)")
            break
        }

        // Search as the user types
        let index = SearchIndex(items: try replica.items(in: list.id))
        let found = index.search(Query("te"))
        print(found.matches.map(\.item.name))  // ["Tea"]
        let offer = index.search(Query("Coffee")).offer  // "Coffee": not on the list yet
        #expect(found.matches.first?.item.name == "Tea")
        #expect(offer == "Coffee")

        // Sync with a server
        let signIn = HTTPSyncTransport(baseURL: serverURL, token: nil)
        try await signIn.signUp(name: "alice", password: "alice-password")
        let token = try await signIn.login(name: "alice", password: "alice-password", device: "phone")
        let engine = SyncEngine(replica: replica, transport: HTTPSyncTransport(baseURL: serverURL, token: token))
        let reports = try await engine.syncAll()
        print("sent \(reports.reduce(0) { $0 + $1.pushed }) changes")
        #expect(reports.reduce(0) { $0 + $1.pushed } > 0)
        #expect(try replica.outbox.count() == 0)

        // Keep a list live while the app is open
        let live = LiveSync(engine: engine, list: list.id) { event in
            if case .status(let status) = event { print("sync: \(status)") }
        }
        live.start()
        try replica.add(["Coffee"], to: list.id)
        live.changed()  // send now rather than at the next look (every 250 ms)
        let waiting = await live.flush(within: 2)  // before the app goes away: what is still unsent
        live.stop()
        // On a loaded run (two instances on PostgreSQL, other suites busy) 2 s may not be enough:
        // what flush says still waits is then in the outbox, for the next sync.
        let left = try replica.outbox.changes()  // flush counts changes as a person does: by item
        #expect(waiting >= left)
        if left > 0 { _ = try await engine.sync(list.id) }
        #expect(try replica.outbox.count() == 0)
        let elsewhere = try Replica(path: directory + "/other.sqlite")
        _ = try await SyncEngine(replica: elsewhere, transport: HTTPSyncTransport(baseURL: serverURL, token: token))
            .syncAll()
        #expect(try elsewhere.items(in: list.id).map(\.name).contains("Coffee"))
    }
}
