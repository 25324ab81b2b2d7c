import BasketCore
import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Wake-ups that survive a crash: real `basket-server` processes on one PostgreSQL database, one
/// of them killed (SIGKILL) between a push's commit and its notification to the others. The
/// promise tested (docs/reliability.md): a committed change reaches a watcher on another instance
/// at once when the client retries its push through another instance (a duplicate announces the
/// head), and at the latest when the watcher's wait runs out (≤ the server's `--max-wait`, plus a
/// sweep tick) when nobody retries. These start their own database, so they run in the first
/// run of Scripts/test.sh (which has BASKET_TEST_POSTGRES), in its pass of suites run one at a
/// time: they time a wake-up, which the parallel pass's synchronous tests could hold up for
/// minutes (they hold the task pool's threads the long-polls need), and the second run skips them.
@Suite(
    .serialized,
    .enabled(if: TestPostgres.url != nil, "needs BASKET_TEST_POSTGRES (Scripts/test.sh starts a PostgreSQL)"))
struct WakeUpTests {
    let root = TemporaryDirectory("wake-up")

    struct Answer {
        var status: Int
        var json: [String: Any]
    }

    /// One request to `base`; nil when no answer came (the instance died).
    static func call(
        _ base: String, _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        timeout: Double = 60
    ) async -> Answer? {
        var request = URLRequest(url: URL(string: base + path)!, timeoutInterval: timeout)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try? JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        guard let (data, response) = try? await URLSession.shared.data(for: request),
            let http = response as? HTTPURLResponse
        else { return nil }
        return Answer(
            status: http.statusCode, json: (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    static func signUp(_ base: String, _ name: String) async throws -> String {
        let password = "\(name)-password"
        _ = await call(base, "POST", "/v1/accounts", json: ["name": name, "password": password])
        let login = await call(base, "POST", "/v1/tokens", json: ["name": name, "password": password])
        return try #require(login?.json["token"] as? String)
    }

    /// A push's body: one name write each, by replica 77, stamped now.
    static func body(_ names: [String], of list: ListID) -> [String: Any] {
        let ms = HybridClock.wallClockMilliseconds()
        let ops = names.enumerated().map { i, name in
            Op(
                list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name, value: .text(name),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: ms, counter: UInt16(i)), replica: ReplicaID(rawValue: 77)))
        }
        return ["ops": String(decoding: OperationCodec.encode(ops), as: UTF8.self)]
    }

    static func names(_ answer: Answer?) -> [String] {
        let ops = (try? OperationCodec.decode(Array((answer?.json["ops"] as? String ?? "").utf8))) ?? []
        return ops.compactMap { if case .text(let text) = $0.value { text } else { nil } }
    }

    /// A long-poll on `base` and when its answer came.
    static func poll(_ base: String, _ list: ListID, after: Int, token: String) async -> (Answer?, Date) {
        let answer = await call(base, "GET", "/v1/lists/\(list)/ops?after=\(after)&wait=30", token: token)
        return (answer, Date())
    }

    /// A gauge of one instance's /metrics. Asked with URLSession, not a child process: the test
    /// awaits it, and no thread of the pool its long-polls run on is blocked meanwhile.
    static func gauge(_ base: String, _ name: String) async -> Double? {
        guard let url = URL(string: base + "/metrics"),
            let (data, _) = try? await URLSession.shared.data(for: URLRequest(url: url, timeoutInterval: 30)),
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix(name + " ")
            })
        else { return nil }
        return Double(line.split(separator: " ")[1])
    }

    /// Waits (at most 60 s) until instance `base` has `count` parked long-polls; records an issue
    /// when they never park (the push would then reach them by another way than the one tested).
    /// It sleeps as a task: a blocked thread could be the one the long-polls need to be sent.
    static func parked(_ base: String, _ count: Int) async {
        let deadline = Date().addingTimeInterval(60)
        while (await gauge(base, "basket_watchers") ?? 0) < Double(count) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect((await gauge(base, "basket_watchers") ?? 0) >= Double(count), "\(base): the long-poll did not park")
    }

    /// Three instances on one database whose waits last `maxWait` seconds, instance 0 dying right
    /// after it commits a push to a new list; Alice's token and the list, made through instance 1.
    func start(maxWait: Int) async throws -> (ServerProcess, [String], ListID, String) {
        let list = ListID.random()
        let servers = try ServerProcess(
            onPostgres: 3, dataDirectory: root.file("server-\(list)"), arguments: ["--max-wait", "\(maxWait)"],
            environment: ["BASKET_PUBLIC_METRICS": "1"],
            instanceEnvironment: [0: ["BASKET_TEST_DIE_BEFORE_NOTIFY": Hex.encode(list.raw.bytes)]])
        let urls = (0..<3).map(servers.instanceURL)
        let token = try await Self.signUp(urls[1], "alice")
        #expect(
            await Self.call(urls[1], "POST", "/v1/lists", token: token, json: ["id": list.description])?.status == 201)
        return (servers, urls, list, token)
    }

    /// Nobody retries the push: the watchers on the other instances hear of it when their wait
    /// runs out (the wait compares its cursor with the list's head in the database), not with an
    /// empty "nothing new" at the old cursor and a whole further wait later.
    @Test func aPushWhoseInstanceDiedBeforeTellingReachesTheOthersWithinOneWait() async throws {
        let maxWait = 3
        let (servers, urls, list, token) = try await start(maxWait: maxWait)
        defer { servers.stop() }
        let (a, b, c) = (urls[0], urls[1], urls[2])
        async let onB = Self.poll(b, list, after: 0, token: token)
        async let onC = Self.poll(c, list, after: 0, token: token)
        await Self.parked(b, 1)
        await Self.parked(c, 1)
        let pushed = Date()
        let answer = await Self.call(
            a, "POST", "/v1/lists/\(list)/ops", token: token, json: Self.body(["Milk"], of: list))
        #expect(answer == nil, "instance 0 answered \(String(describing: answer?.status)) instead of dying")
        #expect(servers.instance(0)?.wait(timeout: 10)?.signaled == true, "instance 0 did not die")
        // Committed all the same: a pull through B finds it.
        #expect(Self.names(await Self.call(b, "GET", "/v1/lists/\(list)/ops?after=0", token: token)) == ["Milk"])
        for (name, (woken, at)) in [("B", await onB), ("C", await onC)] {
            #expect(
                woken?.status == 200 && Self.names(woken) == ["Milk"], "\(name): \(String(describing: woken?.json))")
            #expect(woken?.json["cursor"] as? Int == 1)
            let delay = at.timeIntervalSince(pushed)
            // One wait (3 s) and the sweep's tick; a few seconds more for a loaded machine.
            #expect(delay < Double(maxWait) + 5, "\(name) heard of the push after \(delay) s")
        }
        #expect((await Self.gauge(b, "basket_wakeups_caught_at_wait_end") ?? 0) >= 1)
    }

    /// The client retries its unanswered push through another instance: the push is a duplicate
    /// there, and the duplicate announces the list's head, so the watchers of every instance hear
    /// at once, long before their 30 s wait would run out.
    @Test func aRetriedPushThroughAnotherInstanceWakesEveryWatcherAtOnce() async throws {
        let (servers, urls, list, token) = try await start(maxWait: 30)
        defer { servers.stop() }
        let (a, b, c) = (urls[0], urls[1], urls[2])
        async let onB = Self.poll(b, list, after: 0, token: token)
        async let onC = Self.poll(c, list, after: 0, token: token)
        await Self.parked(b, 1)
        await Self.parked(c, 1)
        let body = Self.body(["Bread"], of: list)
        #expect(await Self.call(a, "POST", "/v1/lists/\(list)/ops", token: token, json: body) == nil)
        #expect(servers.instance(0)?.wait(timeout: 10)?.signaled == true, "instance 0 did not die")
        let retried = Date()
        let again = await Self.call(b, "POST", "/v1/lists/\(list)/ops", token: token, json: body)
        #expect(again?.status == 200 && again?.json["duplicates"] as? Int == 1 && again?.json["accepted"] as? Int == 0)
        for (name, (woken, at)) in [("B", await onB), ("C", await onC)] {
            #expect(Self.names(woken) == ["Bread"], "\(name): \(String(describing: woken?.json))")
            let delay = at.timeIntervalSince(retried)
            #expect(delay < 10, "\(name) heard of the push \(delay) s after the retry (its wait is 30 s)")
        }
        #expect((await Self.gauge(b, "basket_wakeups_caught_at_wait_end") ?? 0) == 0)
        #expect((await Self.gauge(c, "basket_wakeups_caught_at_wait_end") ?? 0) == 0)
    }
}
