import BasketCore
import Foundation
import Synchronization
import Testing

@testable import BasketServer
@testable import HTTPServer

/// Long-polls parked in `Watchers`, alone: waits run out on one sweep (no timer per watcher),
/// each watcher is answered once, and what runs out is forgotten.
struct WatchersTests {
    /// Counts the pages it is asked for; each page says which cursor it answers.
    final class Pages: Sendable {
        let built = Atomic(0)
        func answer(_ list: ListID, _ after: Int64, _ limit: Int) -> HTTPResponse {
            built.wrappingAdd(1, ordering: .relaxed)
            return .body(Array("after \(after)".utf8), contentType: "text/plain")
        }
    }

    static func body(_ responder: Responder) -> String? {
        responder.take().map { String(decoding: $0.body, as: UTF8.self) }
    }

    static func waitUntil(_ seconds: Double, _ done: () -> Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() && Date() < deadline { usleep(10_000) }
    }

    @Test func watchersAreAnsweredWhenTheirWaitRunsOutAndForgotten() throws {
        let pages = Pages()
        let store = Heads(5)
        let watchers = Watchers(
            maxPerAccount: 1_000, answer: pages.answer, readHeads: store.read, nothingNew: store.nothingNew)
        let lists = (0..<10).map { _ in ListID.random() }
        let started = Date()
        var short: [Responder] = []
        var long: [Responder] = []
        for index in 0..<1_000 {
            let responder = Responder()
            let seconds = index % 2 == 0 ? 0.3 : 30
            try watchers.park(
                list: lists[index % 10], after: 5, limit: 10, account: 1, seconds: seconds, responder: responder
            ) { 5 }
            if index % 2 == 0 { short.append(responder) } else { long.append(responder) }
        }
        #expect(watchers.count == 1_000)
        #expect(!short.contains { $0.hasResponded })
        Self.waitUntil(5) { short.allSatisfy { $0.hasResponded } }
        let elapsed = Date().timeIntervalSince(started)
        #expect(short.allSatisfy { Self.body($0) == "nothing after 5 of 5" })
        #expect(elapsed >= 0.3, "answered after \(elapsed) s, before the 0.3 s wait ran out")
        #expect(elapsed < 3, "the 0.3 s waits ran out after \(elapsed) s")
        #expect(!long.contains { $0.hasResponded })
        #expect(watchers.count == 500)
        // The account's places came back: 500 more may park under its limit of 1,000.
        for index in 0..<500 {
            try watchers.park(
                list: lists[index % 10], after: 5, limit: 10, account: 1, seconds: 30, responder: Responder()
            ) { 5 }
        }
        #expect(watchers.count == 1_000)
        watchers.close()
        #expect(long.allSatisfy { $0.hasResponded })
        #expect(watchers.count == 0)
    }

    @Test func aWatcherWokenByAPushIsNotAnsweredAgainWhenItsWaitRunsOut() throws {
        let pages = Pages()
        let store = Heads(5)
        let watchers = Watchers(answer: pages.answer, readHeads: store.read, nothingNew: store.nothingNew)
        let list = ListID.random()
        let responders = (0..<100).map { _ in Responder() }
        for responder in responders {
            try watchers.park(list: list, after: 5, limit: 10, account: 1, seconds: 0.2, responder: responder) { 5 }
        }
        watchers.publish(list: list, cursor: 6)
        #expect(responders.allSatisfy { Self.body($0) == "after 5" })
        #expect(pages.built.load(ordering: .relaxed) == 1, "one page for 100 watchers at one cursor")
        #expect(watchers.count == 0)
        usleep(600_000)
        #expect(pages.built.load(ordering: .relaxed) == 1, "a woken watcher was answered again at its expiry")
    }

    /// The lists' heads as a store holds them: every list is at `cursor` unless set otherwise;
    /// counts its reads and the answers given from them without a page. Reads fail while
    /// `failing` is set.
    final class Heads: Sendable {
        let reads = Atomic(0)
        let given = Atomic(0)
        let failing = Atomic(false)
        let cursors = Mutex([ListID: Int64]())
        let cursor: Int64
        init(_ cursor: Int64) { self.cursor = cursor }

        func read(_ lists: [ListID]) throws -> [ListID: LogHead] {
            reads.wrappingAdd(1, ordering: .relaxed)
            if failing.load(ordering: .relaxed) { throw StoreError.unavailable }
            let set = cursors.withLock { $0 }
            return Dictionary(
                uniqueKeysWithValues: lists.map {
                    ($0, LogHead(cursor: set[$0] ?? cursor, epoch: "e", compactedThrough: 0))
                })
        }

        func nothingNew(_ list: ListID, _ after: Int64, _ head: LogHead) -> HTTPResponse {
            given.wrappingAdd(1, ordering: .relaxed)
            return .body(Array("nothing after \(after) of \(head.cursor)".utf8), contentType: "text/plain")
        }
    }

    /// A wait that runs out while the list's head in the store is still the watcher's cursor is
    /// answered "nothing new" from one read of the lists' heads per sweep, without a page of the
    /// log (100,000 devices make 3,300 such answers a second); when the heads cannot be read, the
    /// page is built once per list and cursor in a sweep, not once per watcher.
    @Test(arguments: [true, false])
    func waitsRunningOutWithNothingNewReadNoLog(headsReadable: Bool) throws {
        let pages = Pages()
        let store = Heads(5)
        store.failing.store(!headsReadable, ordering: .relaxed)
        let watchers = Watchers(answer: pages.answer, readHeads: store.read, nothingNew: store.nothingNew)
        let lists = [ListID.random(), ListID.random()]
        let responders = (0..<200).map { _ in Responder() }
        for (index, responder) in responders.enumerated() {
            try watchers.park(
                list: lists[index % 2], after: 5, limit: 10, account: 1, seconds: 0.2, responder: responder
            ) { 5 }
        }
        Self.waitUntil(5) { responders.allSatisfy { $0.hasResponded } }
        #expect(responders.allSatisfy { Self.body($0) == (headsReadable ? "nothing after 5 of 5" : "after 5") })
        // All 200 ran out in one sweep, or in two if a tick fell between them.
        let built = pages.built.load(ordering: .relaxed)
        let given = store.given.load(ordering: .relaxed)
        let reads = store.reads.load(ordering: .relaxed)
        #expect(reads >= 1 && reads <= 2, "\(reads) reads of the heads for one or two sweeps")
        if headsReadable {
            #expect(built == 0 && given >= 2 && given <= 4, "\(built) pages, \(given) without")
        } else {
            #expect(built >= 2 && built <= 4 && given == 0, "\(built) pages, \(given) without")
        }
        // A list whose head moved on is read: its watcher parked before the push learnt of it.
        let late = Responder()
        try watchers.park(list: lists[0], after: 5, limit: 10, account: 1, seconds: 30, responder: late) { 5 }
        watchers.publish(list: lists[0], cursor: 7)
        #expect(Self.body(late) == "after 5")
    }

    /// A push committed by an instance that died before it told the others: this instance still
    /// believes the list is at 5. The first wait on the list to run out reads the real head (7),
    /// is answered with the page after its cursor, not "nothing new", and wakes the list's other
    /// watchers here at once, though their own waits have long to go.
    @Test func aWaitThatRunsOutFindsAPushNobodyToldOfAndWakesTheListsOtherWatchers() throws {
        let pages = Pages()
        let store = Heads(5)
        let watchers = Watchers(answer: pages.answer, readHeads: store.read, nothingNew: store.nothingNew)
        let list = ListID.random()
        let other = ListID.random()
        let short = Responder()
        let long = (0..<3).map { _ in Responder() }
        let elsewhere = Responder()
        try watchers.park(list: list, after: 5, limit: 10, account: 1, seconds: 0.2, responder: short) { 5 }
        for responder in long {
            try watchers.park(list: list, after: 5, limit: 10, account: 2, seconds: 30, responder: responder) { 5 }
        }
        try watchers.park(list: other, after: 5, limit: 10, account: 3, seconds: 30, responder: elsewhere) { 5 }
        store.cursors.withLock { $0[list] = 7 }
        Self.waitUntil(5) { short.hasResponded && long.allSatisfy(\.hasResponded) }
        #expect(Self.body(short) == "after 5")
        #expect(long.allSatisfy { Self.body($0) == "after 5" })
        #expect(!elsewhere.hasResponded, "a list whose head did not move keeps its watchers")
        #expect(watchers.caughtUp == 1)
        #expect(watchers.count == 1)
        watchers.close()
    }
}
