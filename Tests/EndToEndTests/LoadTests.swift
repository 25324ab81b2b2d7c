import BasketCore
import BasketReplica
import Foundation
import Synchronization
import TestServers
import TestSupport
import Testing

/// 200 clients push and watch at once for 60 seconds (BASKET_LOAD_SECONDS changes it) against
/// a real server: no request fails, no acknowledged operation is missing, and the server's
/// memory does not keep growing.
struct LoadTests {
    let root = TemporaryDirectory("load")

    @Test func twoHundredClientsPushingAndWatchingForAMinute() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["BASKET_LOAD_SECONDS"] ?? "") ?? 60
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let url = try #require(URL(string: server.url))
        let signup = HTTPSyncTransport(baseURL: url, token: nil)
        try await signup.signUp(name: "load", password: "load-password")
        let lists = (0..<20).map { _ in ListID.random() }
        let owner = HTTPSyncTransport(
            baseURL: url, token: try await signup.login(name: "load", password: "load-password"))
        for list in lists { _ = try await owner.createList(list) }

        // Twenty devices' tokens (a login costs a PBKDF2 on the server), shared by the 200 clients.
        var tokens: [String] = []
        for _ in 0..<20 { tokens.append(try await signup.login(name: "load", password: "load-password")) }
        let failures = Locked<[String]>([])
        let acknowledged = Locked<Set<Op>>([])
        let deliveries = Locked(0)
        let deadline = Date().addingTimeInterval(seconds)
        var memory: [Int] = []
        var cache: [Int] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<200 {
                let token = tokens[client % tokens.count]
                group.addTask {
                    let transport = HTTPSyncTransport(baseURL: url, token: token)
                    let list = lists[client % lists.count]
                    let replica = ReplicaID(rawValue: UInt64(client + 1))
                    var cursor: Int64 = 0
                    var batch = 0
                    while Date() < deadline {
                        batch += 1
                        let ops = (0..<5).map { n in
                            let name = "client \(client) batch \(batch) item \(n)"
                            return Op(
                                list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name,
                                value: .text(name),
                                version: Version(
                                    timestamp: HybridTimestamp(
                                        milliseconds: HybridClock.wallClockMilliseconds(), counter: UInt16(n)),
                                    replica: replica))
                        }
                        do {
                            _ = try await transport.push(ops, to: list)
                            acknowledged.withLock { $0.formUnion(ops) }
                            let page = try await transport.pull(list, after: cursor, limit: 5_000, wait: 1)
                            cursor = page.cursor
                            deliveries.withLock { $0 += page.operations.count }
                        } catch {
                            failures.withLock { $0.append("client \(client): \(error)") }
                        }
                    }
                }
            }
            // The server's memory, every 5 seconds after a warm-up of 10.
            group.addTask {}
            try await Task.sleep(for: .seconds(min(10, seconds / 3)))
            while Date() < deadline {
                if let bytes = server.residentBytes {
                    memory.append(bytes)
                    cache.append(Self.logCacheBytes(server))
                }
                try await Task.sleep(for: .seconds(min(5, seconds / 6)))
            }
            try await group.waitForAll()
        }
        let errors = failures.withLock { $0 }
        #expect(errors.isEmpty, "\(errors.count) failed requests, e.g. \(errors.prefix(3))")

        // Every acknowledged operation is in the server's log, once.
        var onServer = Set<Op>()
        var rows = 0
        for list in lists {
            var cursor: Int64 = 0
            while true {
                let page = try await owner.pull(list, after: cursor, limit: 5_000, wait: 0)
                onServer.formUnion(page.operations)
                rows += page.operations.count
                cursor = page.cursor
                if !page.more { break }
            }
        }
        let pushed = acknowledged.withLock { $0 }
        #expect(pushed.isSubset(of: onServer), "\(pushed.subtracting(onServer).count) acknowledged operations missing")
        #expect(rows == onServer.count)
        // Memory is flat: the last reading is within 25% (and 32 MB per instance: each has its own
        // malloc arenas) of the first after warm-up, apart from the stores' tables of lists' logs,
        // summed over the instances like the memory, which grow with the operations stored up to
        // their bound (counted twice: a table that grew leaves its old one to malloc).
        let first = try #require(memory.first)
        let last = try #require(memory.last)
        let cacheGrowth = max(0, (cache.last ?? 0) - (cache.first ?? 0))
        #expect(
            last <= first + max(first / 4, server.instances * (32 << 20)) + 2 * cacheGrowth,
            "RSS grew from \(first >> 20) MB to \(last >> 20) MB, the log tables by \(cacheGrowth >> 20) MB")
        print(
            "load: 200 clients for \(Int(seconds)) s, \(pushed.count) operations pushed, "
                + "\(deliveries.withLock { $0 }) delivered to watchers, \(errors.count) errors, server RSS "
                + memory.map { "\($0 >> 20)" }.joined(separator: "/") + " MB, of which log tables "
                + cache.map { "\($0 >> 20)" }.joined(separator: "/") + " MB")
        #expect(server.stop() == 0)
    }

    /// `basket_sqlite_log_bytes` or `basket_postgres_log_bytes` from the servers' /metrics, summed
    /// over the instances (each keeps its own tables).
    static func logCacheBytes(_ server: ServerProcess) -> Int {
        (try? server.metric("basket_sqlite_log_bytes")) ?? (try? server.metric("basket_postgres_log_bytes")) ?? 0
    }
}
