import BasketCore
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@testable import BasketServer

@Suite(.serialized)
struct ServiceLogTests {
    @Test func pushIsIdempotentAndSequenceNumbersAreGapFree() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let ops = harness.operations(list, names: ["Milk", "Bread", "Eggs"])
        let first = try await harness.push(ops, to: list, token: token)
        #expect(first.json["accepted"] as? Int == 3 && first.json["cursor"] as? Int == 3)
        let again = try await harness.push(
            ops + harness.operations(list, names: ["Salt"], offset: 5), to: list, token: token)
        #expect(
            again.json["accepted"] as? Int == 1 && again.json["duplicates"] as? Int == 3
                && again.json["cursor"] as? Int == 4)
        let page = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&limit=2", token: token)
        #expect(
            page.json["count"] as? Int == 2 && page.json["cursor"] as? Int == 2 && page.json["more"] as? Bool == true)
        let rest = try await harness.call("GET", "/v1/lists/\(list)/ops?after=2", token: token)
        #expect(try harness.pulled(rest).map(\.value) == [.text("Eggs"), .text("Salt")])
        #expect(rest.json["more"] as? Bool == false)
    }

    /// Pushes past ``BasketService/offloadedPushBytes`` are decoded and stored on the push threads:
    /// answered as small ones are, several at once, bad ones with their 4xx.
    @Test func largePushesAreAnsweredFromThePushThreads() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        var lists: [ListID] = []
        for _ in 0..<6 { lists.append(try await harness.newList(token)) }
        let batches = lists.map { list in harness.operations(list, names: (0..<400).map { "Item number \($0)" }) }
        #expect(OperationCodec.encode(batches[0]).count > BasketService.offloadedPushBytes)
        let answers = try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
            for (list, ops) in zip(lists, batches) {
                group.addTask {
                    let answer = try await harness.push(ops, to: list, token: token)
                    return (answer.status, answer.json["accepted"] as? Int ?? -1, answer.json["cursor"] as? Int ?? -1)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 6 && answers.allSatisfy { $0 == (200, 400, 400) })
        let again = try await harness.push(batches[0], to: lists[0], token: token)
        #expect(again.json["accepted"] as? Int == 0 && again.json["duplicates"] as? Int == 400)
        let page = try await harness.call("GET", "/v1/lists/\(lists[5])/ops?after=0", token: token)
        #expect(try harness.pulled(page) == batches[5])
        let garbage = "basket-ops 1\n" + String(repeating: "not an operation\n", count: 2_000)
        let invalid = try await harness.call("POST", "/v1/lists/\(lists[0])/ops", token: token, json: ["ops": garbage])
        #expect(invalid.status == 400 && invalid.error == "invalid_ops")
        let stranger = try await harness.signUp("mallory")
        let refused = try await harness.push(batches[1], to: lists[1], token: stranger)
        #expect(refused.status == 404)
    }

    @Test func badPushesAre4xxAndStoreNothing() async throws {
        let harness = try Harness { $0.maxBatch = 5 }
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let other = try await harness.newList(token)
        let invalid = try await harness.call(
            "POST", "/v1/lists/\(list)/ops", token: token, json: ["ops": "basket-ops 1\nL zz\n"])
        #expect(invalid.status == 400 && invalid.error == "invalid_ops")
        let tooMany = try await harness.push(
            harness.operations(list, names: (0..<6).map { "Item \($0)" }), to: list, token: token)
        #expect(tooMany.status == 400 && tooMany.error == "batch_too_large")
        let wrongList = try await harness.push(harness.operations(other, names: ["Milk"]), to: list, token: token)
        #expect(wrongList.status == 400 && wrongList.error == "wrong_list")
        let future = try await harness.push(
            harness.operations(list, names: ["Milk"], offset: 6 * 60_000), to: list, token: token)
        #expect(future.status == 400 && future.error == "clock_skew")
        #expect((future.json["serverTime"] as? NSNumber)?.uint64Value == harness.clock.milliseconds)
        #expect((future.json["offsetMilliseconds"] as? NSNumber)?.intValue == 6 * 60_000)
        let extra = try await harness.call(
            "POST", "/v1/lists/\(list)/ops", token: token, json: ["ops": "basket-ops 1\n", "x": 1])
        #expect(extra.status == 400 && extra.error == "unknown_field")
        for query in ["after=-1", "after=abc", "limit=0", "limit=999999", "wait=31", "wait=x"] {
            let answer = try await harness.call("GET", "/v1/lists/\(list)/ops?\(query)", token: token)
            #expect(answer.status == 400 && answer.error == "invalid_parameter", "\(query)")
        }
        #expect(try harness.store.statistics().operations == 0)
    }

    /// One bad operation in a batch refuses the whole batch, and the answer names its line.
    @Test func aPushWithOneBadTextValueIsRefusedWholeNamingTheLine() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let good = harness.operations(list, names: ["Milk", "Bread", "Eggs"])
        func with(_ field: Field, _ text: String) -> [Op] {
            var bad = good[1]
            bad.field = field
            bad.value = .text(text)
            return [good[0], bad, good[2]]
        }
        let flood = "a" + String(repeating: "\u{0301}", count: 1_800_000)  // 3.6 MB, one character
        let cases: [(String, [Op], String)] = [
            ("accent flood", with(.name, flood), "combining marks"),
            ("escape in a note", with(.note, "see \u{1B}]0;owned\u{7}"), "control characters"),
            ("C1 in a category", with(.category, "dairy\u{9B}2J"), "control characters"),
            ("NUL in a quantity", with(.quantity, "2\u{0}"), "control characters"),
            ("oversized note", with(.note, String(repeating: "n", count: 4_097)), "4096 bytes"),
            (
                "oversized title",
                [
                    good[0],
                    Op(
                        list: list, item: .list, field: .title, value: .text(String(repeating: "é", count: 1_100)),
                        version: good[1].version),
                ], "2048 bytes"
            ),
        ]
        for (label, ops, reason) in cases {
            let answer = try await harness.push(ops, to: list, token: token)
            let message = answer.json["message"] as? String ?? ""
            #expect(answer.status == 400 && answer.error == "invalid_ops", "\(label)")
            #expect(message.contains("line 4") && message.contains(reason), "\(label): \(message)")
        }
        #expect(try harness.store.statistics().operations == 0)
        #expect(try await harness.push(good, to: list, token: token).status == 200)
    }

    /// A long-poll whose wait runs out with nothing new gets the page a pull at once would: no
    /// operation, the same cursor and epoch, its history complete (the server answers it without
    /// reading the log).
    @Test func aLongPollThatRunsOutWithNothingNewGetsTheSamePageAsAPull() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        _ = try await harness.push(harness.operations(list, names: ["Milk", "Bread"]), to: list, token: token)
        let pulled = try await harness.call("GET", "/v1/lists/\(list)/ops?after=2", token: token)
        for _ in 0..<2 {
            let waited = try await harness.call("GET", "/v1/lists/\(list)/ops?after=2&wait=1", token: token)
            #expect(waited.status == 200)
            for key in ["count", "cursor", "epoch", "historyComplete", "more", "ops"] {
                #expect(
                    "\(waited.json[key] ?? "none")" == "\(pulled.json[key] ?? "none")",
                    "\(key): \(waited.json) vs \(pulled.json)")
            }
            #expect(waited.json["count"] as? Int == 0 && waited.json["cursor"] as? Int == 2)
        }
    }

    /// A device that hangs up while its long-poll is parked gives its place back at once, not
    /// when its wait runs out: devices reconnecting (a phone between networks) would otherwise
    /// fill their account's quota and the server's connections with long-polls nobody reads.
    @Test func aLongPollWhoseDeviceHangsUpGivesItsPlaceBack() async throws {
        let harness = try Harness { $0.maxWatchersPerAccount = 2 }
        let alice = try await harness.signUp("alice")
        let list = try await harness.newList(alice)
        let request = Array(
            "GET /v1/lists/\(list)/ops?after=0&wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(alice)\r\n\r\n"
                .utf8)
        // URLSession keeps its own connections open (or closes them): at most these stay.
        let before = harness.http.openConnections
        for _ in 0..<3 {
            let gone = [Loopback.connect(port: harness.http.port), Loopback.connect(port: harness.http.port)]
            for fd in gone { #expect(send(fd, request, request.count, 0) == request.count) }
            for _ in 0..<500 where harness.service.watcherCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(harness.service.watcherCount == 2)
            for fd in gone { close(fd) }
            for _ in 0..<500 where harness.service.watcherCount > 0 || harness.http.openConnections > before {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(harness.service.watcherCount == 0)
            #expect(harness.http.openConnections <= before)
        }
        // The quota is whole again: two more park, and a push answers both.
        async let first = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        async let second = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        for _ in 0..<500 where harness.service.watcherCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 2)
        _ = try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: alice)
        #expect(try await [first.status, second.status] == [200, 200])
    }

    /// One account can park only so many long-polls; another account is not affected, and a
    /// long-poll answered gives its place back.
    @Test func parkedLongPollsAreCappedPerAccount() async throws {
        let harness = try Harness { $0.maxWatchersPerAccount = 2 }
        let alice = try await harness.signUp("alice")
        let bob = try await harness.signUp("bob")
        let list = try await harness.newList(alice)
        let bobs = try await harness.newList(bob)
        async let first = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        async let second = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        for _ in 0..<500 where harness.service.watcherCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let third = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: alice)
        #expect(third.status == 429 && third.error == "too_many_watches" && third.headers["retry-after"] != nil)
        // Without a wait nothing is parked: still answered.
        #expect(try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: alice).status == 200)
        async let bobsWait = harness.call("GET", "/v1/lists/\(bobs)/ops?after=0&wait=20", token: bob)
        for _ in 0..<500 where harness.service.watcherCount < 3 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 3)
        _ = try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: alice)
        _ = try await harness.push(harness.operations(bobs, names: ["Tea"]), to: bobs, token: bob)
        let answers = try await [first.status, second.status, bobsWait.status]
        #expect(answers == [200, 200, 200])
        async let again = harness.call("GET", "/v1/lists/\(list)/ops?after=1&wait=20", token: alice)
        for _ in 0..<500 where harness.service.watcherCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 1)
        _ = try await harness.push(harness.operations(list, names: ["Bread"]), to: list, token: alice)
        #expect(try await again.status == 200)
    }

    @Test func aLongPollAnswersAsSoonAsSomethingArrivesOrWhenItsWaitRunsOut() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        async let waiting = harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=20", token: token)
        for _ in 0..<500 where harness.service.watcherCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(harness.service.watcherCount == 1)
        let started = Date()
        _ = try await harness.push(harness.operations(list, names: ["Milk"]), to: list, token: token)
        let woken = try await waiting
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try harness.pulled(woken).map(\.value) == [.text("Milk")])
        #expect(woken.json["cursor"] as? Int == 1)

        let empty = try await harness.call("GET", "/v1/lists/\(list)/ops?after=1&wait=1", token: token)
        #expect(empty.status == 200 && empty.json["count"] as? Int == 0 && empty.json["cursor"] as? Int == 1)
        #expect(harness.service.watcherCount == 0)
    }

    @Test func aLongPollWaitsNoLongerThanTheServersMaximum() async throws {
        let harness = try Harness { $0.maxWaitSeconds = 1 }
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let started = Date()
        let answer = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=30", token: token)
        #expect(answer.status == 200 && answer.json["count"] as? Int == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        let tooLong = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0&wait=31", token: token)
        #expect(tooLong.status == 400 && tooLong.error == "invalid_parameter")
    }

    @Test func compactionKeepsTheWinnersAndSaysHistoryIsIncomplete() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        let milk = ItemID(list: list, key: "milk")
        func op(_ checked: Bool, _ counter: UInt16) -> Op {
            .init(
                list: list, item: milk, field: .checked, value: .bool(checked),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: harness.clock.milliseconds, counter: counter),
                    replica: ReplicaID(rawValue: 3)))
        }
        _ = try await harness.push(
            [op(true, 1), op(false, 2), op(true, 3)] + harness.operations(list, names: ["Milk"]), to: list, token: token
        )
        let dropped = try harness.store.compact(receivedBefore: Int64(harness.clock.milliseconds) + 1)
        #expect(dropped == 2)
        let page = try await harness.call("GET", "/v1/lists/\(list)/ops?after=0", token: token)
        let ops = try harness.pulled(page)
        #expect(ops.filter { $0.field == .checked }.map(\.value) == [.bool(true)])
        #expect(page.json["historyComplete"] as? Bool == false)
        let later = try await harness.call("GET", "/v1/lists/\(list)/ops?after=3", token: token)
        #expect(later.json["historyComplete"] as? Bool == true)
    }

    @Test func metricsCountRequestsAndStoredOperations() async throws {
        let harness = try Harness()
        let token = try await harness.signUp("alice")
        let list = try await harness.newList(token)
        _ = try await harness.push(harness.operations(list, names: ["Milk", "Bread"]), to: list, token: token)
        let metrics = String(decoding: try await harness.call("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("basket_operations_stored 2"))
        #expect(metrics.contains("basket_watchers 0"))
        #expect(metrics.contains("basket_http_request_duration_seconds_bucket"))
        // Two operations and their two items, known to the store for the next push.
        let backend = harness.store is SQLiteStore ? "sqlite" : "postgres"
        #expect(metrics.contains("basket_\(backend)_log_entries 4"))
        #expect(
            !metrics.contains("basket_\(backend)_log_bytes 0\n") && metrics.contains("basket_\(backend)_log_bytes "))
    }
}
