public import BasketCore
import Foundation
import Synchronization

/// Keeps one list in sync while an app is open: local changes leave within a second, other
/// devices' changes arrive as the server relays them, and the state of the connection is one
/// value a screen can show.
///
/// Two loops run in the background. The **sender** looks at the list's outbox every
/// `pollInterval` (and at once after ``changed()``) and sends what waits, so it also sends writes
/// that other processes made to the same replica file. The **listener** long-polls the server
/// and merges what arrives (``Replica/updates()`` fires for it). Failures are retried after 1 s,
/// 2 s, then every ``maxRetryPause`` (someone is looking at the screen: a server that is back is
/// noticed within seconds); after a failure the listener first syncs without waiting, so the
/// status says "synced" as soon as the server answers. Nothing is lost while offline: the outbox
/// keeps the writes.
///
/// ```swift
/// let live = LiveSync(engine: SyncEngine(replica: replica, transport: transport), list: list.id) { event in
///     if case .status(let status) = event { statusLine.show(status) }   // the app words it
/// }
/// live.start()
/// try replica.add(["Tea"], to: list.id)
/// live.changed()                                  // send now rather than within the poll interval
/// let waiting = await live.flush(within: 2)       // before the app goes away
/// live.stop()
/// ```
public final class LiveSync: Sendable {
    /// Where the list stands with the server, as a status line shows it.
    public enum Status: Hashable, Sendable {
        /// The first sync is under way.
        case connecting
        /// Nothing waits to be sent, and the server is listened to.
        case synced
        /// Local changes are being sent.
        case sending(pending: Int)
        /// The server cannot be reached (the device is offline, or the server is down); the
        /// changes wait in the outbox.
        case offline(pending: Int, reason: String)
        /// The server answered with an error (a refusal, an answer that could not be read).
        case failed(pending: Int, reason: String)

        /// Local changes not yet acknowledged by the server, as a person counts them
        /// (``Outbox/changes(in:)``).
        public var pending: Int {
            switch self {
            case .connecting, .synced: 0
            case .sending(let n), .offline(let n, _), .failed(let n, _): n
            }
        }
    }

    /// The longest pause between retries after a failure, in milliseconds.
    public static let maxRetryPause = 4_000

    /// The pause after `previous` (0 after a success): 1 s, 2 s, then ``maxRetryPause``.
    static func nextRetryPause(after previous: Int) -> Int {
        min(max(1_000, previous * 2), maxRetryPause)
    }

    /// What a ``LiveSync`` reports to its handler, from its own threads.
    public enum Event: Sendable {
        /// The status changed.
        case status(Status)
        /// A round of the listener merged what other devices wrote.
        case received(ListSyncReport)
    }

    /// The engine both loops use.
    public let engine: SyncEngine
    /// The list kept in sync.
    public let list: ListID
    /// How often the sender looks at the outbox without being told of a change.
    public let pollInterval: Duration
    /// How long one long-poll waits for news, in seconds.
    public let longPollSeconds: Int
    /// Whether local changes are sent (false: only received; they wait for an explicit sync).
    public let sends: Bool
    /// Whether the waiting changes are held back for now (written with `--no-sync`, by this
    /// process or another): asked before each send.
    private let hold: Hold

    /// Whether a list's waiting changes are held back by the app (the CLI's `--no-sync` keeps a
    /// mark in the replica's settings): asked before each send.
    public struct Hold: Sendable {
        let isHeld: @Sendable () -> Bool

        /// A hold that asks `isHeld` (a setting of the replica, say).
        public init(_ isHeld: @escaping @Sendable () -> Bool) { self.isHeld = isHeld }

        /// Never held.
        public static let never = Hold { false }
    }

    private func held() -> Bool { hold.isHeld() }
    private let handler: @Sendable (Event) -> Void

    private enum Connection: Hashable {
        case unknown, connected
        case offline(String)
        case failed(String)
    }

    private struct State {
        var connection = Connection.unknown
        var pending = 0
        var held = false
        var sending = false
        var status = Status.connecting
        var stopped = false
        var nudged = false
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - engine: the engine to sync with (its replica and transport).
    ///   - list: the list to keep in sync; it is registered on the server if it is not there yet.
    ///   - pollInterval: how often the outbox is looked at (250 ms: a write by another process
    ///     leaves within a second).
    ///   - longPollSeconds: how long one long-poll may wait (the server caps it).
    ///   - sends: false to only receive (local changes are counted, not sent).
    ///   - hold: whether the waiting changes are held back now.
    ///   - handler: told of every status change and every round that received something.
    public init(
        engine: SyncEngine, list: ListID, pollInterval: Duration = .milliseconds(250), longPollSeconds: Int = 25,
        sends: Bool = true, hold: Hold = .never, handler: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.engine = engine
        self.sends = sends
        self.hold = hold
        self.list = list
        self.pollInterval = pollInterval
        self.longPollSeconds = longPollSeconds
        self.handler = handler
    }

    /// The status now.
    public var status: Status { state.withLock { $0.status } }

    /// Starts both loops (again after ``stop()`` does nothing).
    public func start() {
        state.withLock { state in
            guard state.tasks.isEmpty, !state.stopped else { return }
            state.tasks = [
                Task.detached { [self] in await self.sendLoop() },
                Task.detached { [self] in await self.listenLoop() },
            ]
        }
    }

    /// Stops both loops: they end at their next look (within 50 ms), or when a request under way
    /// is answered (a long-poll: within its wait). The tasks are not cancelled: cancelling a task
    /// suspended in `URLSession.data(for:)` can deadlock in swift-corelibs-foundation (the
    /// cancellation handler waits for the session's queue while the queue waits to resume the
    /// task), which a test run here hit.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            state.tasks = []
        }
    }

    /// Tells the sender that a local write happened: it sends at once instead of at its next look.
    public func changed() { state.withLock { $0.nudged = true } }

    /// Sends what waits, for at most `seconds`; returns how many changes are still waiting. What
    /// an app calls before it goes away.
    public func flush(within seconds: Double) async -> Int {
        let outcome = await engine.sendPending(of: [list], within: seconds)
        update { $0.pending = outcome.waiting }
        return outcome.waiting
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Sleeps `milliseconds`, in steps, waking early when stopped (or, with `orNudged`, told of a change).
    private func pause(milliseconds: Int, orNudged: Bool = false) async {
        var left = milliseconds
        while left > 0 {
            if isStopped || (orNudged && state.withLock({ $0.nudged })) { return }
            try? await Task.sleep(for: .milliseconds(min(left, 50)))
            left -= 50
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let event: Status? = state.withLock { state in
            change(&state)
            let next: Status =
                switch state.connection {
                case .offline(let reason): .offline(pending: state.pending, reason: reason)
                case .failed(let reason): .failed(pending: state.pending, reason: reason)
                case .unknown, .connected:
                    state.sending || (state.pending > 0 && sends && !state.held)
                        ? .sending(pending: state.pending)
                        : state.pending > 0
                            ? .failed(
                                pending: state.pending,
                                reason: state.held
                                    ? "kept here (--no-sync); 'basket sync' sends them" : "auto-sync is off")
                            : state.connection == .unknown ? .connecting : .synced
                }
            guard next != state.status else { return nil }
            state.status = next
            return next
        }
        if let event { handler(.status(event)) }
    }

    private func connection(after error: any Error) -> Connection {
        if case SyncError.unreachable(let why) = error { return .offline(why) }
        if let error = error as? SyncError, case .server(_, let code, let message) = error {
            return .failed("\(message) (\(code))")
        }
        return .failed("\(error)")
    }

    private func sendLoop() async {
        let interval = max(10, Int(pollInterval / .milliseconds(1)))
        var retryPause = 0
        while !isStopped {
            await pause(milliseconds: max(interval, retryPause), orNudged: true)
            if isStopped { return }
            state.withLock { $0.nudged = false }
            guard let pending = try? engine.replica.pendingChanges(in: list) else { continue }
            let isHeld = pending > 0 && held()
            update {
                $0.pending = pending
                $0.held = isHeld
            }
            guard pending > 0, sends, !isHeld else {
                retryPause = 0
                continue
            }
            update { $0.sending = true }
            do {
                let report = try await engine.send(list)
                let left = (try? engine.replica.pendingChanges(in: list)) ?? pending
                if report.refusedPending > 0 {
                    // A viewer: the server will refuse these until the role changes; look again later.
                    retryPause = 60_000
                    update {
                        $0.connection = .failed("you can only view this list")
                        $0.pending = left
                        $0.sending = false
                    }
                } else {
                    retryPause = 0
                    update {
                        $0.connection = .connected
                        $0.pending = left
                        $0.sending = false
                    }
                }
            } catch {
                // Offline or refused: try again after a growing pause (a local change tries at once).
                retryPause = Self.nextRetryPause(after: retryPause)
                let connection = connection(after: error)
                update {
                    $0.connection = connection
                    $0.sending = false
                }
            }
        }
    }

    private func listenLoop() async {
        var caughtUp = false
        var retryPause = 0
        while !isStopped {
            do {
                let sending = sends && !held()
                let report =
                    caughtUp || !sending
                    ? try await engine.watchOnce(list, wait: caughtUp ? longPollSeconds : 0, sending: sending)
                    : try await engine.sync(list)
                caughtUp = true
                retryPause = 0
                let left = (try? engine.replica.pendingChanges(in: list)) ?? 0
                update {
                    if report.refusedPending == 0 { $0.connection = .connected }
                    $0.pending = left
                }
                if report.pulled > 0 || report.changedItems > 0 || report.epochChanged || report.roleChanged
                    || report.shoppingChanged || report.inboxWaiting > 0
                {
                    handler(.received(report))
                }
            } catch {
                if isStopped { return }
                let connection = connection(after: error)
                update { $0.connection = connection }
                // The next round syncs without waiting: the status changes as soon as the server
                // answers, not when a long-poll ends.
                caughtUp = false
                retryPause = Self.nextRetryPause(after: retryPause)
                await pause(milliseconds: retryPause)
            }
        }
    }
}
