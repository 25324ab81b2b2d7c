import BasketCore
import BasketReplica
import Foundation
import TestServers
import TestSupport
import Testing

/// A real basket-server attacked the way a stranger on the internet would: floods of signups,
/// password guessing, many connections from one address, oversized values, and look-ups in the
/// access log. Several client addresses come from 127.0.0.x (one machine, many sources). These
/// run against one server process, in a pass of their own (Scripts/test.sh): with two instances
/// behind the test proxy every connection would come from the proxy's address, and beside the
/// kill and load tests on two cores the flood's latency would measure those tests.
@Suite(.serialized)
struct AbuseTests {
    let root = TemporaryDirectory("abuse")

    func answer(
        _ server: ServerProcess, from source: String = "127.0.0.1", _ method: String, _ path: String,
        token: String? = nil, json: [String: Any]? = nil
    ) throws -> RawHTTP.Answer {
        try RawHTTP.request(
            port: server.port, from: source, method, path,
            headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:], json: json)
    }

    /// Alice, signed up and in on the server at `url`, with a new list registered there.
    static func aliceWithAList(_ url: URL) async throws -> (HTTPSyncTransport, ListID) {
        let anonymous = HTTPSyncTransport(baseURL: url, token: nil)
        try await anonymous.signUp(name: "alice", password: "alice-password")
        let alice = HTTPSyncTransport(
            baseURL: url, token: try await anonymous.login(name: "alice", password: "alice-password"))
        let list = ListID.random()
        _ = try await alice.createList(list)
        return (alice, list)
    }

    /// 200 signup requests at once, again and again for five seconds, at the real password cost
    /// (600,000 PBKDF2 iterations): the hashing queue takes what it can and answers the rest 503
    /// at once, so a signed-in user's pushes keep their pace (p99 under a second).
    /// Alice pushes one new item every 20 ms until `deadline`, from a thread of her own with a
    /// blocking client; each push's latency, and what failed.
    static func pushes(port: Int, token: String, list: ListID, from first: Int, until deadline: Date) async -> (
        latencies: [Double], failures: [String]
    ) {
        await withCheckedContinuation { done in
            Thread.detachNewThread {
                var latencies: [Double] = []
                var failures: [String] = []
                var n = first
                while Date() < deadline {
                    n += 1
                    let name = "Item \(n)"
                    let op = Op(
                        list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name,
                        value: .text(name),
                        version: Version(
                            timestamp: HybridTimestamp(milliseconds: HybridClock.wallClockMilliseconds(), counter: 0),
                            replica: ReplicaID(rawValue: 9)))
                    let before = Date()
                    let status =
                        (try? RawHTTP.request(
                            port: port, "POST", "/v1/lists/\(list)/ops",
                            headers: ["Authorization": "Bearer \(token)"],
                            json: ["ops": String(decoding: OperationCodec.encode([op]), as: UTF8.self)]
                        ).status) ?? 0
                    latencies.append(Date().timeIntervalSince(before))
                    if status != 200 { failures.append("push \(n): \(status)") }
                    Thread.sleep(forTimeInterval: 0.02)
                }
                done.resume(returning: (latencies, failures))
            }
        }
    }

    /// Runs `request(attacker, round)` in a loop on `threads` threads of their own until
    /// `deadline`, pausing `pause` seconds after each; returns a wait for the end that gives how
    /// many answers had each status.
    /// With `niced`, the threads run at the lowest priority (nice 19): an attacker's own CPU is
    /// not the server's in real life, and on this machine the 24 threads would otherwise measure
    /// the scheduler sharing two cores among them, the server and the victim.
    static func flood(
        threads: Int, until deadline: Date, pause: Double = 0, niced: Bool = false,
        _ request: @escaping @Sendable (Int, Int) -> Int
    ) -> @Sendable () -> [Int: Int] {
        let statuses = Locked<[Int: Int]>([:])
        let finished = DispatchGroup()
        for attacker in 0..<threads {
            finished.enter()
            Thread.detachNewThread {
                // On Linux a thread is a task of its own: "who 0" is the calling thread only.
                if niced { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) }
                var round = 0
                while Date() < deadline {
                    round += 1
                    let status = request(attacker, round)
                    statuses.withLock { $0[status, default: 0] += 1 }
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                }
                finished.leave()
            }
        }
        return {
            finished.wait()
            return statuses.withLock { $0 }
        }
    }

    @Test func aSignupFloodDoesNotStallOtherUsersPushes() async throws {
        let server = try ServerProcess(
            dataDirectory: root.file("flood"), arguments: ["--password-iterations", "600000"])
        let url = try #require(URL(string: server.url))
        let (alice, list) = try await Self.aliceWithAList(url)
        let token = try #require(alice.token)

        // The same pushes for two seconds before the flood: what this machine gives them today.
        let calm = await Self.pushes(
            port: server.port, token: token, list: list, from: 0, until: Date().addingTimeInterval(2))
        let calmSorted = calm.latencies.sorted()
        let calmP99 = try #require(calmSorted.isEmpty ? nil : calmSorted[Int(Double(calmSorted.count - 1) * 0.99)])
        #expect(calm.failures.isEmpty, "\(calm.failures.prefix(3))")

        // 200 threads of their own (concurrentPerform would run as many as there are cores).
        // Long enough for four sign-ins of at most 1.5 s each (a second to answer, half a second
        // apart) between the flood's first half second and its last second.
        let deadline = Date().addingTimeInterval(8)
        let finished = Self.flood(threads: 200, until: deadline) { attacker, round in
            (try? RawHTTP.request(
                port: server.port, "POST", "/v1/accounts",
                json: ["name": "flood-\(attacker)-\(round)", "password": "flood-password"]
            ).status) ?? 0
        }
        // Alice pushes from a thread of her own with a blocking client, so what is measured is
        // the server (and the machine), not Swift's task pool.
        let flooded = await Self.pushes(port: server.port, token: token, list: list, from: 1_000, until: deadline)
        let seen = await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: finished()) }
        }
        let sorted = flooded.latencies.sorted()
        let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        print(
            "signup flood: \(seen) answers; alice's \(sorted.count) pushes p50 \(sorted[sorted.count / 2]) s, p99 \(p99) s "
                + "(before the flood: p99 \(calmP99) s)"
        )
        #expect(flooded.failures.isEmpty, "\(flooded.failures.prefix(3))")
        #expect(sorted.count >= 20)
        // A second, or twenty times the calm p99 on a machine slow enough today to need more: a
        // stalled server (signups hashing on the request threads) answers in several seconds.
        let bound = max(1.0, 20 * calmP99)
        #expect(p99 < bound, "p99 of pushes during the flood: \(p99) s (calm: \(calmP99) s, bound \(bound) s)")
        // Every signup was either taken or refused at once (busy, or too many from the address).
        #expect(Set(seen.keys).isSubset(of: [201, 429, 503]), "\(seen)")
        #expect((seen[503] ?? 0) + (seen[429] ?? 0) > (seen[201] ?? 0))
        #expect(try answer(server, "GET", "/healthz").status == 200)
    }

    /// One push of a name write under each of `replicas`, to `list`.
    static func writes(_ list: ListID, replicas: Range<UInt64>) -> [String: Any] {
        let ms = HybridClock.wallClockMilliseconds()
        let ops = replicas.map { replica in
            Op(
                list: list, item: ItemID(list: list, key: ItemKey.normalize("junk \(replica)")), field: .name,
                value: .text("junk \(replica)"),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: ms, counter: 0), replica: ReplicaID(rawValue: replica)))
        }
        return ["ops": String(decoding: OperationCodec.encode(ops), as: UTF8.self)]
    }

    /// Attack: one account binds as many device ids to its list as it may (100; it bound
    /// 1,000,000 in 6 s before they were capped), then 24 threads of it call the heaviest routes
    /// it may: the members answer of that list, new lists (past its quota), pushes under yet more
    /// device ids, its lists. Alice pushes every 20 ms meanwhile: her p99 stays within 50 ms
    /// (or three times her p99 before the attack, on a machine slow enough today to need more),
    /// and /healthz answers at once. Each members answer names all of Mallory's 100 ids.
    @Test func oneAccountHammeringTheHeaviestRoutesLeavesOthersPushesWithin50ms() async throws {
        let server = try ServerProcess(dataDirectory: root.file("hammer"))
        let url = try #require(URL(string: server.url))
        let (alice, aliceList) = try await Self.aliceWithAList(url)
        let token = try #require(alice.token)
        let anonymous = HTTPSyncTransport(baseURL: url, token: nil)
        try await anonymous.signUp(name: "mallory", password: "mallory-password")
        let mallory = try await anonymous.login(name: "mallory", password: "mallory-password")
        let list = ListID.random()
        let port = server.port
        let auth = ["Authorization": "Bearer \(mallory)"]
        #expect(
            try RawHTTP.request(port: port, "POST", "/v1/lists", headers: auth, json: ["id": list.description]).status
                == 201)
        let path = "/v1/lists/\(list)/ops"
        #expect(
            try RawHTTP.request(port: port, "POST", path, headers: auth, json: Self.writes(list, replicas: 1..<101))
                .status == 200)
        let refused = try RawHTTP.request(
            port: port, "POST", path, headers: auth, json: Self.writes(list, replicas: 101..<102))
        #expect(refused.status == 403 && refused.json["error"] as? String == "too_many_replicas", "\(refused.status)")
        let members = try RawHTTP.request(port: port, "GET", "/v1/lists/\(list)/members", headers: auth)
        let named = (members.json["members"] as? [[String: Any]])?.first?["replicas"] as? [String]
        #expect(named?.count == 100, "the members answer names \(named?.count ?? 0) of Mallory's 100 ids")

        let calm = await Self.pushes(
            port: port, token: token, list: aliceList, from: 0, until: Date().addingTimeInterval(2))
        let calmSorted = calm.latencies.sorted()
        let calmP99 = try #require(calmSorted.isEmpty ? nil : calmSorted[Int(Double(calmSorted.count - 1) * 0.99)])

        let deadline = Date().addingTimeInterval(6)
        let finished = Self.flood(threads: 24, until: deadline, niced: true) { attacker, round in
            let answer: RawHTTP.Answer?
            switch (attacker + round) % 4 {
            case 0: answer = try? RawHTTP.request(port: port, "GET", "/v1/lists/\(list)/members", headers: auth)
            case 1:
                answer = try? RawHTTP.request(
                    port: port, "POST", "/v1/lists", headers: auth, json: ["id": ListID.random().description])
            case 2:
                let first = UInt64(1_000 + attacker * 100_000 + round * 10)
                answer = try? RawHTTP.request(
                    port: port, "POST", path, headers: auth, json: Self.writes(list, replicas: first..<first + 10))
            default: answer = try? RawHTTP.request(port: port, "GET", "/v1/lists", headers: auth)
            }
            return answer?.status ?? 0
        }
        let hammered = await Self.pushes(port: port, token: token, list: aliceList, from: 1_000, until: deadline)
        let health = Date()
        #expect(try answer(server, "GET", "/healthz").status == 200)
        let healthSeconds = Date().timeIntervalSince(health)
        let seen = await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: finished()) }
        }
        let sorted = hammered.latencies.sorted()
        let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        print(
            "one account hammering: \(seen) answers; alice's \(sorted.count) pushes p50 \(sorted[sorted.count / 2]) s,"
                + " p99 \(p99) s (before: p99 \(calmP99) s); /healthz in \(healthSeconds) s")
        #expect(hammered.failures.isEmpty, "\(hammered.failures.prefix(3))")
        #expect(sorted.count >= 20)
        let bound = max(0.05, 3 * calmP99)
        #expect(p99 < bound, "p99 of Alice's pushes while Mallory hammers: \(p99) s (calm: \(calmP99) s)")
        #expect(healthSeconds < 1)
        // Mallory's lists stopped at the quota, her new device ids at their cap.
        #expect(Set(seen.keys).isSubset(of: [200, 201, 403]), "\(seen)")
    }

    /// Attack: 24 threads sign up from other addresses (127.0.0.10–33), at the real password cost,
    /// for eight seconds; Alice signs in from 127.0.0.2 every half second meanwhile (six times). Signups are
    /// counted per address before any hashing, one address has at most two password jobs, and
    /// sign-ins go before signups: each of Alice's sign-ins is answered 201 within 1.5 s, or
    /// three times a sign-in measured before the flood on a slower machine (queued behind the
    /// signups, it would wait for dozens of password jobs).
    /// Then the same flood with made-up signup invites on an invite-only server: refused before
    /// any hashing, and Alice's sign-ins are as quick.
    @Test(arguments: ["open", "invite-only"])
    func aSignupFloodFromOtherAddressesLeavesSignInsAnsweredPromptly(_ signup: String) throws {
        let server = try ServerProcess(
            dataDirectory: root.file("signup-flood-\(signup)"),
            arguments: ["--password-iterations", "600000", "--signup", signup])
        var aliceSignup: [String: Any] = ["name": "alice", "password": "alice-password"]
        if signup == "invite-only" {
            let made = try Executables.run(
                "basket-server", ["--data", server.dataDirectory, "signup-invite", "--uses", "1"])
            aliceSignup["invite"] = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try answer(server, from: "127.0.0.2", "POST", "/v1/accounts", json: aliceSignup).status == 201)
        // A sign-in without the flood, measured now: the bound below is relative to it, so a slow
        // machine is not mistaken for sign-ins queued behind signups (which would wait for dozens
        // of password jobs: many times this).
        let aliceSignsIn = { () -> (status: Int, seconds: Double) in
            let before = Date()
            let status =
                (try? self.answer(
                    server, from: "127.0.0.2", "POST", "/v1/tokens",
                    json: ["name": "alice", "password": "alice-password"]
                ).status) ?? 0
            return (status, Date().timeIntervalSince(before))
        }
        let calm = [aliceSignsIn(), aliceSignsIn()]
        #expect(calm.allSatisfy { $0.status == 201 })
        let quiet = calm.map(\.seconds).max() ?? 0
        let bound = max(1.5, 3 * quiet)

        // Long enough for four sign-ins of at most 1.5 s each (a second to answer, half a second
        // apart) between the flood's first half second and its last second.
        let deadline = Date().addingTimeInterval(8)
        // 50 a second each: 1,200 a second in all (unpaced, the test's own threads take the cores).
        let finished = Self.flood(threads: 24, until: deadline, pause: 0.02) { attacker, round in
            var body: [String: Any] = ["name": "flood-\(attacker)-\(round)", "password": "flood-password"]
            if signup == "invite-only" { body["invite"] = "AAAA-BBBB-CCCC-\(attacker)" }
            return
                (try? RawHTTP.request(
                    port: server.port, from: "127.0.0.\(10 + attacker)", "POST", "/v1/accounts", json: body
                ).status) ?? 0
        }
        Thread.sleep(forTimeInterval: 0.5)  // the flood under way
        var signIns: [(status: Int, seconds: Double)] = []
        while signIns.count < 6 && Date().addingTimeInterval(1) < deadline {
            signIns.append(aliceSignsIn())
            Thread.sleep(forTimeInterval: 0.5)
        }
        let seen = finished()
        print("signup flood (\(signup)) from 24 addresses: \(seen); Alice's sign-ins: \(signIns), quiet \(quiet) s")
        #expect(signIns.count >= 4)
        for (status, seconds) in signIns {
            #expect(
                status == 201 && seconds < bound,
                "Alice's sign-in during the flood: \(status) after \(seconds) s (quiet: \(quiet) s)")
        }
        if signup == "invite-only" {
            #expect(Set(seen.keys) == [403], "\(seen)")
        } else {
            // Each address has at most 20 signups a minute: 24 addresses, at most 480 accounts.
            #expect((seen[201] ?? 0) <= 480 && (seen[429] ?? 0) > 0, "\(seen)")
        }
        #expect(try answer(server, "GET", "/healthz").status == 200)
    }

    /// Attack: 64 connections from four addresses announce the largest body on routes a stranger
    /// may call (sign-in, and a push with a made-up token) and then send next to nothing. Bodies
    /// are charged as they arrive, sign-in takes 4 KiB at most and a large push needs a good
    /// token before its body is read: Alice signs in (201) and pushes within a second while the
    /// sockets stay open, and the server holds no body for them.
    @Test func announcedBodiesFreezeNothing() throws {
        let server = try ServerProcess(dataDirectory: root.file("announced"))
        #expect(
            try answer(
                server, from: "127.0.0.2", "POST", "/v1/accounts",
                json: ["name": "alice", "password": "alice-password"]
            ).status == 201)
        let list = ListID.random()
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for n in 0..<64 {
            let fd = Loopback.connect(port: server.port, from: "127.0.0.\(40 + n % 4)")
            #expect(fd >= 0)
            held.append(fd)
            let path = n % 2 == 0 ? "/v1/tokens" : "/v1/lists/\(list)/ops"
            let head =
                "POST \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer made-up\r\n"
                + "Content-Type: application/json\r\nContent-Length: 4194304\r\n\r\n{"
            _ = Array(head.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        Thread.sleep(forTimeInterval: 0.5)
        for round in 0..<3 {
            let before = Date()
            let signIn = try answer(
                server, from: "127.0.0.2", "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
            let token = try #require(signIn.json["token"] as? String)
            if round == 0 {
                #expect(try answer(server, "POST", "/v1/lists", token: token, json: ["id": "\(list)"]).status == 201)
            }
            let push = try answer(
                server, from: "127.0.0.2", "POST", "/v1/lists/\(list)/ops", token: token,
                json: [
                    "ops": String(decoding: OperationCodec.encode([Self.item(list, "Round \(round)")]), as: UTF8.self)
                ])
            let seconds = Date().timeIntervalSince(before)
            #expect(
                signIn.status == 201 && push.status == 200 && seconds < 1,
                "\(signIn.status) \(push.status) \(seconds) s")
        }
        // The sockets are still open: the server has read their heads and holds nothing for them.
        let peek = held.filter { fd in
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) < 0 && errno == EAGAIN
        }
        #expect(peek.count == 64)
    }

    /// A new item named `name` on `list`, stamped now by replica 9.
    static func item(_ list: ListID, _ name: String) -> Op {
        Op(
            list: list, item: ItemID(list: list, key: ItemKey.normalize(name)), field: .name, value: .text(name),
            version: Version(
                timestamp: HybridTimestamp(milliseconds: HybridClock.wallClockMilliseconds(), counter: 0),
                replica: ReplicaID(rawValue: 9)))
    }

    /// An attacker guessing Alice's password from 127.0.0.1 is throttled there; Alice signs in
    /// from 127.0.0.2 at once, and so does her right password from anywhere but the attacker's.
    @Test func aVictimSignsInFromAnotherAddressWhileTheAttackerIsThrottled() throws {
        let server = try ServerProcess(dataDirectory: root.file("guess"))
        let created = try answer(
            server, "POST", "/v1/accounts", json: ["name": "alice", "password": "alice-password"])
        #expect(created.status == 201)
        var statuses: [Int] = []
        for guess in 0..<30 {
            statuses.append(
                try answer(server, "POST", "/v1/tokens", json: ["name": "alice", "password": "guess-\(guess)"]).status)
        }
        #expect(statuses.prefix(3) == [401, 401, 401])
        #expect(statuses.contains(429))
        #expect(Set(statuses).isSubset(of: [401, 429]))
        let attacker = try answer(
            server, "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        #expect(attacker.status == 429 && attacker.headers["retry-after"] != nil)
        let victim = try answer(
            server, from: "127.0.0.2", "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
        #expect(victim.status == 201 && victim.json["token"] is String)
    }

    /// With `--connections-per-address 4`, a fifth connection from one address is closed unanswered;
    /// another address is served, and so is the first once it lets one go.
    @Test func connectionsPerAddressAreLimited() throws {
        let server = try ServerProcess(
            dataDirectory: root.file("connections"), environment: ["BASKET_CONNECTIONS_PER_ADDRESS": "4"])
        let held = (0..<4).map { _ in Loopback.connect(port: server.port, from: "127.0.0.3") }
        #expect(held.allSatisfy { $0 >= 0 })
        // Once the server has accepted the four, a fifth from the same address is closed unanswered
        // (polled: until it has, a fifth is still served).
        // (The heavy pass twice saw the fifth still served, once for the whole 20 s, and never
        // alone: the four are held at high descriptor numbers, out of reach of a stray close of a
        // number this process freed (`Loopback.connect`), and a failure says how many are held.)
        var refused = false
        var servedBefore = 0
        let deadline = Date().addingTimeInterval(20)
        while !refused && Date() < deadline {
            do {
                _ = try answer(server, from: "127.0.0.3", "GET", "/healthz")
                servedBefore += 1
                Thread.sleep(forTimeInterval: 0.05)
            } catch is RawHTTP.Failure {
                refused = true
            }
        }
        // Which of the four the test still holds (a connection closed under it is not the server's fault).
        let stillHeld = held.filter { Loopback.peerPort($0) == server.port }.count
        #expect(
            refused,
            "a fifth connection from 127.0.0.3 was still served after 20 s (\(servedBefore) times, \(stillHeld) of 4 held)"
        )
        #expect(try answer(server, from: "127.0.0.4", "GET", "/healthz").status == 200)
        close(held[0])
        var served = false
        for _ in 0..<50 where !served {
            served = (try? answer(server, from: "127.0.0.3", "GET", "/healthz").status) == 200
            if !served { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(served)
        held.dropFirst().forEach { close($0) }
    }

    /// Values that cost memory refused by a real server: the combining-accent flood and every text
    /// field past its byte limit, each a 400 that stores nothing.
    @Test func oversizedValuesAreRefusedAndStoreNothing() async throws {
        let server = try ServerProcess(dataDirectory: root.file("values"))
        let url = try #require(URL(string: server.url))
        let (alice, list) = try await Self.aliceWithAList(url)
        let item = ItemID(list: list, key: "milk")
        let now = HybridClock.wallClockMilliseconds()
        let values: [(Field, String)] = [
            (.name, "a" + String(repeating: "\u{0301}", count: 1_800_000)),
            (.name, String(repeating: "🇫🇷", count: 257)),
            (.quantity, String(repeating: "9", count: 257)),
            (.category, String(repeating: "c", count: 257)),
            (.note, String(repeating: "n", count: 4_097)),
            (.note, "\u{1B}[2J\u{1B}]0;owned\u{7}"),
        ]
        for (index, (field, text)) in values.enumerated() {
            let op = Op(
                list: list, item: item, field: field, value: .text(text),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: now, counter: UInt16(index)),
                    replica: ReplicaID(rawValue: 3)))
            do {
                _ = try await alice.push([op], to: list)
                Issue.record("\(field) of \(text.utf8.count) bytes was accepted")
            } catch let error as SyncError {
                #expect(error.code == "invalid_ops", "\(error)")
            }
        }
        let page = try await alice.pull(list, after: 0, limit: 100, wait: 0)
        #expect(page.operations.isEmpty && page.cursor == 0)
    }

    /// `/metrics` tells how many accounts and lists a server holds: by default the public port
    /// answers it 404, and only `--public-metrics` (or `--metrics-listen`) serves it.
    @Test func metricsArePrivateUnlessAskedFor() throws {
        let closed = try ServerProcess(
            dataDirectory: root.file("metrics-default"), environment: ["BASKET_PUBLIC_METRICS": "0"])
        #expect(try answer(closed, "GET", "/metrics").status == 404)
        #expect(try answer(closed, "GET", "/healthz").status == 200)
        let open = try ServerProcess(
            dataDirectory: root.file("metrics-public"), arguments: ["--public-metrics"],
            environment: ["BASKET_PUBLIC_METRICS": "0"])
        let metrics = try answer(open, "GET", "/metrics")
        #expect(metrics.status == 200 && String(decoding: metrics.body, as: UTF8.self).contains("basket_accounts"))
    }

    /// The access log holds no invite code and no raw control character; `/metrics` is served
    /// only on the address `--metrics-listen` names; a 500 would say nothing of the internals.
    @Test func theAccessLogHidesSecretsAndMetricsCanBePrivate() throws {
        let server = try ServerProcess(
            dataDirectory: root.file("log"), arguments: ["--metrics-listen", "127.0.0.1:0"],
            environment: ["BASKET_QUIET": "0"])
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("/metrics on http://") })
        let metricsPort = try #require(Int(line.split(separator: ":").last ?? ""))
        #expect(try answer(server, "GET", "/metrics").status == 404)
        let metrics = try RawHTTP.request(port: metricsPort, "GET", "/metrics")
        #expect(metrics.status == 200 && String(decoding: metrics.body, as: UTF8.self).contains("basket_watchers"))

        let created = try answer(
            server, "POST", "/v1/accounts", json: ["name": "alice", "password": "alice-password"])
        #expect(created.status == 201)
        let token = try #require(
            try answer(server, "POST", "/v1/tokens", json: ["name": "alice", "password": "alice-password"])
                .json["token"] as? String)
        #expect(try answer(server, "POST", "/v1/invites/SECRET-CODE-1234", token: token).status == 404)
        #expect(try answer(server, "GET", "/v1/%0Afake%E2%80%AEtxt.exe", token: token).status == 404)
        #expect(try answer(server, "GET", "/v1/%1B%5B31mred%07", token: token).status == 404)
        // The access log line of the last request is written after its answer: wait for it.
        for _ in 0..<100 where !server.log.contains("31mred") {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let log = server.log
        #expect(log.contains("/v1/invites/…"))
        #expect(!log.contains("SECRET-CODE"))
        #expect(!log.contains(token))
        #expect(!log.contains("\u{1B}") && !log.contains("\u{7}"))
        #expect(log.contains("\\x1b[31mred\\x07"), "\(log)")
        // A newline is \x0a, and the right-to-left override that would show "exe.txt" is named.
        #expect(!log.contains("\u{202E}"))
        #expect(log.contains("/v1/\\x0afake\\u{202e}txt.exe"), "\(log)")
    }

    /// A list filled to its byte quota (16 MiB here) refuses the next push whole; four clients
    /// pulling all of it at once, three times each, move the server's memory by less than 48 MB
    /// (pages stop at about 1 MiB, however large the values).
    @Test func aListAtItsQuotaIsRefusedAndPullingItKeepsMemoryBounded() async throws {
        let server = try ServerProcess(dataDirectory: root.file("quota"), arguments: ["--max-list-mb", "16"])
        let url = try #require(URL(string: server.url))
        let (alice, list) = try await Self.aliceWithAList(url)
        let note = String(repeating: "n", count: 4_000)
        var pushed = 0
        var refused: SyncError?
        var batch = 0
        while refused == nil && batch < 20 {
            let now = HybridClock.wallClockMilliseconds()
            let ops = (0..<500).map { n in
                Op(
                    list: list, item: ItemID(list: list, key: "item \(batch) \(n)"), field: .note, value: .text(note),
                    version: Version(
                        timestamp: HybridTimestamp(milliseconds: now, counter: UInt16(n)),
                        replica: ReplicaID(rawValue: 5)))
            }
            do {
                _ = try await alice.push(ops, to: list)
                pushed += ops.count
            } catch let error as SyncError {
                refused = error
            }
            batch += 1
        }
        #expect(refused?.code == "list_too_large", "\(String(describing: refused))")
        #expect(pushed >= 3_500 && pushed <= 4_200, "\(pushed) operations of 4 KB fit in 16 MiB")

        let baseline = try #require(server.residentBytes)
        let peak = Locked(baseline)
        let sampling = Task.detached {
            while !Task.isCancelled {
                if let now = server.residentBytes { peak.withLock { $0 = max($0, now) } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let token = try #require(alice.token)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let client = HTTPSyncTransport(baseURL: url, token: token)
                    var received = 0
                    for _ in 0..<3 {
                        var cursor: Int64 = 0
                        while true {
                            let page = try await client.pull(list, after: cursor, limit: 5_000, wait: 0)
                            received += page.operations.count
                            cursor = page.cursor
                            if !page.more { break }
                        }
                    }
                    return received
                }
            }
            for try await received in group { #expect(received == pushed * 3) }
        }
        sampling.cancel()
        let grown = peak.withLock { $0 } - baseline
        print(
            "quota: \(pushed) operations (16 MiB); RSS \(baseline >> 20) MB, peak while 4 clients pulled \((baseline + grown) >> 20) MB"
        )
        #expect(grown < 48 << 20, "the server grew by \(grown >> 20) MB while four clients pulled the list")
    }
}
