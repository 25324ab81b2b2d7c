import BasketCore
import Foundation
import HTTPServer
import Synchronization

/// Long-polling readers of lists. A watcher parks its request until an operation after its
/// cursor is published, or until its wait runs out. Parking checks "anything newer?" under the
/// same lock that publishing takes, so no wake-up is lost.
final class Watchers: Sendable {
    struct Watcher {
        var id: UInt64
        var after: Int64
        var limit: Int
        var account: Int64
        /// The hash of the token it was parked with (a revoked token's watchers are answered).
        var token: String
        var responder: Responder
    }

    private struct State {
        /// Parked watchers by list, then by id: a watcher whose wait ran out is found without a
        /// scan of its list's others (10,000 on one list expire every 30 s).
        var waiting: [ListID: [UInt64: Watcher]] = [:]
        var heads: [ListID: Int64] = [:]
        var nextID: UInt64 = 0
        /// Parked watchers per account, bounded by `maxPerAccount`.
        var perAccount: [Int64: Int] = [:]
        /// Who may expire at each tick of the sweep (``tick``): a watcher already answered is
        /// simply not found then.
        var expiries: [Int64: [(list: ListID, id: UInt64)]] = [:]
        /// The last tick swept.
        var swept: Int64
        /// Whether a sweep is scheduled (one is while any expiry is pending).
        var sweeping = false
        var closed = false

        /// Takes parked watcher `id` of `list` out (nil when it was answered already).
        mutating func remove(_ list: ListID, _ id: UInt64) -> Watcher? {
            guard let watcher = waiting[list]?.removeValue(forKey: id) else { return nil }
            if waiting[list]!.isEmpty { waiting[list] = nil }
            unpark(watcher.account)
            return watcher
        }

        /// Forgets one parked watcher of `account`.
        mutating func unpark(_ account: Int64) {
            let left = (perAccount[account] ?? 1) - 1
            perAccount[account] = left > 0 ? left : nil
        }
    }
    private let state: Mutex<State>
    /// The period of the sweep that answers watchers whose wait ran out: one timer at a time
    /// for all of them (and none while nobody waits), not one each. 10,000 watchers parked
    /// again after every push made 10,000 timers, each alive for the whole wait. A wait runs
    /// out at most this late.
    static let tick = 0.1
    let maxPerAccount: Int
    /// Answers a watcher: the page after its cursor.
    private let answer: @Sendable (ListID, Int64, Int) -> HTTPResponse
    /// Reads the heads of lists as the store holds them now (one statement per 500 lists): what
    /// a wait that runs out compares its cursor with.
    private let readHeads: @Sendable ([ListID]) throws -> [ListID: LogHead]
    /// Answers a watcher with nothing after its cursor: the page a read of the log would give.
    private let nothingNew: @Sendable (ListID, Int64, LogHead) -> HTTPResponse
    /// Waits that ran out and found their list's head ahead of what this instance had been told:
    /// pushes whose notification never came (the pushing instance died between its commit and
    /// its notification, or the notification was dropped) (`/metrics`).
    private let caughtUpCount = Atomic<Int>(0)
    /// Waits that ran out (answered by the sweep) since start (`/metrics`).
    private let ranOutCount = Atomic<Int>(0)

    init(
        maxPerAccount: Int = .max, answer: @escaping @Sendable (ListID, Int64, Int) -> HTTPResponse,
        readHeads: @escaping @Sendable ([ListID]) throws -> [ListID: LogHead],
        nothingNew: @escaping @Sendable (ListID, Int64, LogHead) -> HTTPResponse
    ) {
        self.maxPerAccount = maxPerAccount
        self.answer = answer
        self.readHeads = readHeads
        self.nothingNew = nothingNew
        state = Mutex(State(swept: Self.ticksPassed(at: DispatchTime.now().uptimeNanoseconds)))
    }

    /// Waits that ran out and found pushes this instance had not been told of.
    var caughtUp: Int { caughtUpCount.load(ordering: .relaxed) }
    /// Waits that ran out since start.
    var ranOut: Int { ranOutCount.load(ordering: .relaxed) }

    private func scheduleSweep() {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.tick) { [weak self] in self?.sweep() }
    }

    /// The tick at or after `nanoseconds` of uptime: a wait that runs out then is filed there.
    private static func ticks(from nanoseconds: UInt64) -> Int64 {
        let tickNanoseconds = UInt64(tick * 1e9)
        return Int64((nanoseconds + tickNanoseconds - 1) / tickNanoseconds)
    }

    /// The last tick at or before `nanoseconds` of uptime: the ticks a sweep then may answer.
    private static func ticksPassed(at nanoseconds: UInt64) -> Int64 {
        Int64(nanoseconds / UInt64(tick * 1e9))
    }

    /// Answers the watchers whose wait has run out. Only ticks whose time has come are swept: a
    /// sweep that swept the tick after now (as it did) answered waits up to a tick early.
    ///
    /// A wait that runs out compares its cursor with its list's head as the store holds it (one
    /// read of the lists' rows per sweep, not of their logs), not with the head this instance was
    /// told: a push committed by an instance that died before it could tell the others is so
    /// answered at the latest when the wait runs out, and the list's other watchers here with it.
    ///
    /// Every device's wait runs out every 30 s when nothing happens: 100,000 devices make 3,300
    /// such answers a second. One whose list has nothing after its cursor gets the empty page
    /// built from the head read (no read of the log); the others' pages are built once per list
    /// and cursor within a sweep.
    private func sweep() {
        let now = Self.ticksPassed(at: DispatchTime.now().uptimeNanoseconds)
        let (due, known, again): ([(ListID, Watcher)], [ListID: Int64], Bool) = state.withLock { state in
            var due: [(ListID, Watcher)] = []
            var known: [ListID: Int64] = [:]
            while state.swept < now {
                state.swept += 1
                for (list, id) in state.expiries.removeValue(forKey: state.swept) ?? [] {
                    guard let watcher = state.remove(list, id) else { continue }
                    due.append((list, watcher))
                    known[list] = state.heads[list] ?? 0
                }
            }
            state.sweeping = !state.expiries.isEmpty
            return (due, known, state.sweeping)
        }
        if again { scheduleSweep() }
        guard !due.isEmpty else { return }
        ranOutCount.add(due.count, ordering: .relaxed)
        // When the read fails (the database is away), each page is read on its own, and answers
        // what that read gives (a 503 while the store is away).
        let heads = try? readHeads(Array(known.keys))
        var pages: [PageKey: HTTPResponse] = [:]
        for (list, watcher) in due {
            let key = PageKey(list: list, after: watcher.after, limit: watcher.limit)
            if let built = pages[key] {
                watcher.responder.respond(built)
                continue
            }
            let response: HTTPResponse
            if let head = heads?[list], head.cursor <= watcher.after {
                response = nothingNew(list, watcher.after, head)
            } else {
                response = answer(list, watcher.after, watcher.limit)
            }
            pages[key] = response
            watcher.responder.respond(response)
        }
        // Pushes nobody told this instance of: its other watchers of those lists hear now too.
        for (list, head) in heads ?? [:] where head.cursor > known[list] ?? .max {
            caughtUpCount.add(1, ordering: .relaxed)
            publish(list: list, cursor: head.cursor)
        }
    }

    /// The page a watcher is answered with depends on these alone.
    private struct PageKey: Hashable {
        var list: ListID
        var after: Int64
        var limit: Int
    }

    var count: Int { state.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    /// Parks `responder` until something after `after` is published, or `seconds` pass.
    /// `currentHead` reads the list's last sequence number when this list has none cached.
    /// - Throws: 429 `too_many_watches` when `account` has `maxPerAccount` parked already.
    func park(
        list: ListID, after: Int64, limit: Int, account: Int64, token: String = "", seconds: Double,
        responder: Responder, currentHead: () throws -> Int64
    ) throws {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        let parked: UInt64? = try state.withLock { state in
            if state.closed { return nil }
            let head: Int64
            if let known = state.heads[list] {
                head = known
            } else {
                head = try currentHead()
                state.heads[list] = head
            }
            if head > after { return nil }
            guard state.perAccount[account, default: 0] < maxPerAccount else {
                throw HTTPError(
                    .tooManyWatches,
                    "this account has \(maxPerAccount) long-polls waiting already; ask without wait, or later",
                    headers: [("Retry-After", "5")])
            }
            state.perAccount[account, default: 0] += 1
            state.nextID += 1
            state.waiting[list, default: [:]][state.nextID] = Watcher(
                id: state.nextID, after: after, limit: limit, account: account, token: token, responder: responder)
            // Never in a tick already swept.
            let due = max(state.swept + 1, Self.ticks(from: deadline))
            state.expiries[due, default: []].append((list, state.nextID))
            if !state.sweeping {
                state.sweeping = true
                scheduleSweep()
            }
            return state.nextID
        }
        guard let parked else { return responder.respond(answer(list, after, limit)) }
        // A device that went away leaves at once: its place counts against its account's limit.
        responder.onHangUp { [weak self] in self?.forget(list: list, id: parked) }
    }

    /// Forgets a parked watcher whose client hung up (it is answered by the listener).
    private func forget(list: ListID, id: UInt64) {
        state.withLock { _ = $0.remove(list, id) }
    }

    /// Wakes every watcher of `list` behind `cursor`. Call after the operations are committed.
    func publish(list: ListID, cursor: Int64) {
        let woken: [Watcher] = state.withLock { state in
            state.heads[list] = max(state.heads[list] ?? 0, cursor)
            guard let all = state.waiting[list] else { return [] }
            let wake = all.values.filter { $0.after < cursor }
            if wake.count == all.count {
                state.waiting[list] = nil
            } else {
                for watcher in wake { state.waiting[list]![watcher.id] = nil }
            }
            for watcher in wake { state.unpark(watcher.account) }
            return wake
        }
        // Most watchers wait at the same cursor: build each distinct page once.
        var pages: [PageKey: HTTPResponse] = [:]
        for watcher in woken {
            let key = PageKey(list: list, after: watcher.after, limit: watcher.limit)
            let response = pages[key] ?? answer(list, watcher.after, watcher.limit)
            pages[key] = response
            watcher.responder.respond(response)
        }
    }

    /// Every (list, account) with a long-poll parked, each once: what is checked again after
    /// notifications of removals may have been lost (at most the instance's parked watchers).
    func parkedMembers() -> [(list: ListID, account: Int64)] {
        state.withLock { state in
            state.waiting.flatMap { list, watchers in Set(watchers.values.map(\.account)).map { (list, $0) } }
        }
    }

    /// Forgets the heads it knew and publishes each watched list's current head (after reports of
    /// other instances' commits were lost for a while).
    func refresh(readHead: (ListID) throws -> Int64) {
        let lists: [ListID] = state.withLock { state in
            state.heads.removeAll()
            return Array(state.waiting.keys)
        }
        for list in lists {
            if let head = try? readHead(list) { publish(list: list, cursor: head) }
        }
    }

    /// Answers `account`'s watchers of `list` at once: with `response` (it was removed from the
    /// list), or with their page when `response` is nil (its role changed: it asks again as what
    /// it is now).
    func dismiss(account: Int64, list: ListID, with response: HTTPResponse?) {
        dismiss(account: account, list: list) { after, limit in response ?? self.answer(list, after, limit) }
    }

    /// Answers `account`'s watchers of `list` at once, each with what `answering` gives for its
    /// cursor and page size (a page that carries the account's new role).
    func dismiss(account: Int64, list: ListID, answering: (Int64, Int) -> HTTPResponse) {
        let dismissed: [Watcher] = state.withLock { state in
            guard let all = state.waiting[list] else { return [] }
            let gone = all.values.filter { $0.account == account }
            for watcher in gone { state.waiting[list]![watcher.id] = nil }
            if state.waiting[list]!.isEmpty { state.waiting[list] = nil }
            for watcher in gone { state.unpark(watcher.account) }
            return gone
        }
        for watcher in dismissed { watcher.responder.respond(answering(watcher.after, watcher.limit)) }
    }

    /// Answers `account`'s watchers whose token `isValid` no longer accepts with `response`, at
    /// once (a device signed out, a password changed). `isValid` is asked once per token, outside
    /// the lock, and only about this account's watchers.
    func dismiss(account: Int64, unless isValid: (String) -> Bool, with response: HTTPResponse) {
        let tokens: Set<String> = state.withLock { state in
            // Most revocations find the account with nothing parked: no walk over every watcher.
            guard state.perAccount[account] != nil else { return [] }
            return Set(state.waiting.values.flatMap { $0.values.filter { $0.account == account }.map(\.token) })
        }
        let revoked = tokens.filter { !isValid($0) }
        guard !revoked.isEmpty else { return }
        let dismissed: [Watcher] = state.withLock { state in
            var gone: [Watcher] = []
            for list in Array(state.waiting.keys) {
                let leaving = state.waiting[list]!.values.filter { $0.account == account && revoked.contains($0.token) }
                for watcher in leaving { state.waiting[list]![watcher.id] = nil }
                if state.waiting[list]!.isEmpty { state.waiting[list] = nil }
                gone += leaving
            }
            for watcher in gone { state.unpark(watcher.account) }
            return gone
        }
        for watcher in dismissed { watcher.responder.respond(response) }
    }

    /// Answers every watcher of `list` at once, each with what `answering` gives for its cursor and
    /// page size (a page that says who is shopping now); they park again.
    func dismissAll(list: ListID, answering: (Int64, Int) -> HTTPResponse) {
        let dismissed: [Watcher] = state.withLock { state in
            let gone = Array((state.waiting.removeValue(forKey: list) ?? [:]).values)
            for watcher in gone { state.unpark(watcher.account) }
            return gone
        }
        for watcher in dismissed { watcher.responder.respond(answering(watcher.after, watcher.limit)) }
    }

    /// Answers every watcher of `list` with `response` (the list was deleted), and forgets its head.
    func dismissAll(list: ListID, with response: HTTPResponse) {
        let dismissed: [Watcher] = state.withLock { state in
            state.heads[list] = nil
            let gone = Array((state.waiting.removeValue(forKey: list) ?? [:]).values)
            for watcher in gone { state.unpark(watcher.account) }
            return gone
        }
        for watcher in dismissed { watcher.responder.respond(response) }
    }

    /// Answers every watcher with what it has (an empty page); later parks answer at once.
    func close() {
        let all: [(ListID, Watcher)] = state.withLock { state in
            state.closed = true
            defer {
                state.waiting.removeAll()
                state.perAccount.removeAll()
                state.expiries.removeAll()
            }
            return state.waiting.flatMap { list, watchers in watchers.values.map { (list, $0) } }
        }
        for (list, watcher) in all { watcher.responder.respond(answer(list, watcher.after, watcher.limit)) }
    }
}
