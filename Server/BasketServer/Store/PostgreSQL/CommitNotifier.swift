import BasketCore
import Foundation
import Postgres
import Synchronization

/// Tells the other instances about this instance's pushes: after each commit the push's list and
/// its new head are handed over here, and a thread of its own sends them with NOTIFY, as many as
/// have gathered meanwhile in one statement (a list pushed several times once, at its newest head;
/// payloads "<list id hex> <head>" joined by ";", each under PostgreSQL's 8,000 bytes).
///
/// Not NOTIFY inside each push's transaction: PostgreSQL takes one lock for the whole database
/// when a transaction that notified commits and holds it through the commit's flush to disk, so
/// every push of every instance waited for the one before it to reach the disk: one fsync each,
/// no group commit (about 110 pushes a second here, with the push answer's p99 at 3.6 s under a
/// burst). Now only these statements take that lock, one per batch.
///
/// A push is answered once committed; its notification follows within one batch (a flush to
/// disk). Should the instance die in between, the other instances' long-polls on that list hear
/// of the push at the list's next push or when their wait runs out (30 s at most), and their
/// clients lose nothing: the log has it.
final class CommitNotifier: Sendable {
    let url: String
    let channel: String
    private struct State {
        var pending = NewestHeads()
        var started = false
        var stopping = false
        /// Notifications sent, the statements that sent them, and those dropped (the database
        /// did not answer twice, or too many waited) (`/metrics`).
        var sent = 0
        var batches = 0
        var dropped = 0
    }
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// The most bytes of one NOTIFY's payload (PostgreSQL refuses 8,000 or more).
    static let maxPayloadBytes = 7_900
    /// The most lists waiting to be told; past it the oldest are dropped (their watchers elsewhere
    /// hear at their wait's end), so a database that stops answering cannot grow this without bound.
    static let maxPending = 100_000

    init(url: String, channel: String) {
        self.url = url
        self.channel = channel
    }

    /// Connects and starts the sending thread now, before the instance takes traffic: an
    /// instance that connected only at its first push left that push's watchers elsewhere
    /// waiting while it connected. Nothing happens when it runs already. When the database
    /// cannot be reached, the thread connects at the first batch.
    func start() {
        let connection = try? PostgresConnection(url: url)
        startThread(connection)
    }

    private func startThread(_ connection: PostgresConnection?) {
        let start: Bool = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard start else { return }
        // `PostgresConnection` is handed to the thread, which alone uses it from then on.
        let handOver = HandOver(connection)
        let thread = Thread { [self] in
            run(handOver.connection)
            finished.signal()
        }
        thread.name = "basket-notify"
        thread.start()
    }

    /// Hands over a committed push: `list`'s head is now `head`.
    func committed(_ list: ListID, head: Int64) {
        state.withLock { state in
            if !state.pending.note(list, head) && state.pending.count > Self.maxPending {
                state.pending.dropOldest()
                state.dropped += 1
            }
        }
        // A store used without serving (a command) starts the thread at its first push.
        startThread(nil)
        wake.signal()
    }

    /// Notifications sent so far, in how many statements, and how many were dropped.
    var counts: (sent: Int, batches: Int, dropped: Int) { state.withLock { ($0.sent, $0.batches, $0.dropped) } }

    /// Sends what is pending, then stops the thread.
    func stop() {
        let running: Bool = state.withLock { state in
            defer { state.stopping = true }
            return state.started && !state.stopping
        }
        guard running else { return }
        wake.signal()
        finished.wait()
    }

    /// The pushes a payload of ``payloads(_:)`` names (entries that do not parse are skipped).
    static func heads(in payload: some StringProtocol) -> [(ListID, Int64)] {
        payload.split(separator: ";").compactMap { entry in
            let parts = entry.split(separator: " ")
            guard parts.count == 2, let bytes = Hex.bytes(String(parts[0])), let id = ID128(bytes: bytes),
                let head = Int64(parts[1])
            else { return nil }
            return (ListID(raw: id), head)
        }
    }

    /// The payloads for `heads`, each at most ``maxPayloadBytes``.
    static func payloads(_ heads: [(ListID, Int64)]) -> [String] {
        var payloads: [String] = []
        var current = ""
        for (list, head) in heads {
            let entry = Hex.encode(list.raw.bytes) + " \(head)"
            if !current.isEmpty && current.utf8.count + 1 + entry.utf8.count > maxPayloadBytes {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? entry : ";" + entry
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }

    private func run(_ connected: PostgresConnection?) {
        var connection = connected
        while true {
            _ = wake.wait(timeout: .now() + 0.2)
            let (heads, stopping): ([(ListID, Int64)], Bool) = state.withLock { state in
                defer { state.pending = NewestHeads() }
                return (state.pending.heads, state.stopping)
            }
            if !heads.isEmpty {
                let payloads = Self.payloads(heads)
                // One retry on a new connection (the database restarted); then these are dropped.
                var delivered = false
                for attempt in 0..<2 where !delivered {
                    do {
                        if connection == nil { connection = try PostgresConnection(url: url) }
                        let array = "{" + payloads.map { "\"\($0)\"" }.joined(separator: ",") + "}"
                        _ = try connection!.prepared(
                            "SELECT pg_notify($1, p) FROM unnest($2::text[]) p", [channel, array])
                        state.withLock {
                            $0.sent += heads.count
                            $0.batches += 1
                        }
                        delivered = true
                    } catch {
                        connection = nil
                        if attempt == 0 { Thread.sleep(forTimeInterval: 0.1) }
                    }
                }
                if !delivered { state.withLock { $0.dropped += heads.count } }
            }
            if stopping { break }
        }
    }
}

/// A connection passed to the thread that will use it alone.
private final class HandOver: @unchecked Sendable {
    // `@unchecked Sendable`: written once here, read once by the thread it is handed to.
    let connection: PostgresConnection?
    init(_ connection: PostgresConnection?) { self.connection = connection }
}

/// The newest head of each list, in the order the lists were first seen: what the notifier has to
/// send, and what the listener read in one go (a list pushed several times counts once).
struct NewestHeads {
    private var newest: [ListID: Int64] = [:]
    private var order: [ListID] = []

    /// Records that `list`'s head is `head`; true when the list was already there.
    @discardableResult
    mutating func note(_ list: ListID, _ head: Int64) -> Bool {
        if let known = newest[list] {
            newest[list] = max(known, head)
            return true
        }
        newest[list] = head
        order.append(list)
        return false
    }

    /// Forgets the list seen first.
    mutating func dropOldest() {
        guard !order.isEmpty else { return }
        newest[order.removeFirst()] = nil
    }

    var count: Int { order.count }

    /// Each list with its newest head, in first-seen order.
    var heads: [(ListID, Int64)] { order.map { ($0, newest[$0]!) } }
}
