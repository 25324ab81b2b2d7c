import BasketCore
import Foundation
import Postgres
import Synchronization

/// The store on PostgreSQL, for several `basket-server` instances behind a load balancer. Each
/// instance keeps a pool of connections. A push locks the list's row (so concurrent instances
/// number a list's operations without gaps), skips operations the log has (known from
/// `ListLogs`), writes the rest as one row of `pushes` (`PushRecords`); once committed, every
/// instance listening on `basket_ops` is told (`CommitNotifier`, batched).
public final class PostgresStore: Store, @unchecked Sendable {
    // `@unchecked Sendable`: the pool and the listener guard their own state.
    /// The database's URL.
    public let url: String
    /// The schema versions this instance's start applied (empty when the database was up to date
    /// or another instance migrated it).
    public let appliedMigrations: Range<Int>
    let pool: ConnectionPool
    private let listener: CommitListener
    /// Tells the other instances of this one's pushes, batched (not inside each push's commit).
    let notifier: CommitNotifier
    /// What this instance knows of each list's log, for pushes (`ListLogs`): caught up from the
    /// log under the list's row lock, as other instances push too.
    let logs = Mutex(ListLogs(capacity: 4_000_000))
    /// Each list's number and the start of its epoch, as pushes under the lock last read them:
    /// what a push in one statement needs (``append(_:to:receivedAt:limits:pusher:)``). A number
    /// is never reused, and the statement checks both against the row, so a stale entry costs a
    /// push the locked way, never a wrong write.
    let numbers = Mutex([ListID: (no: Int64, epochStarted: Int64)]())
    /// The most entries `numbers` keeps (about 100 bytes each).
    static let maxKnownNumbers = 200_000
    /// Pushes written in one statement, under the list's lock in a transaction, and the
    /// statements that found the list other than the log knew it (another instance had pushed,
    /// a quota) and wrote nothing.
    let pushesByWay = Mutex((oneStatement: 0, locked: 0, missed: 0))

    /// The NOTIFY channel: payload "<list id hex> <last sequence number>" for each push, several
    /// joined by ";"; "account <id>" when an account's tokens or password changed; "member <list
    /// id hex> <account id>" when a member was removed or given another role; "deleted <list id
    /// hex>" when a list was deleted.
    static let channel = "basket_ops"

    /// SQL that notifies every instance that the account in column `account` of `rows` changed.
    /// PostgreSQL sends one notification per distinct payload, at commit.
    static func notifyingAccounts(_ rows: String) -> String {
        "WITH changed AS (\(rows)) SELECT pg_notify('\(channel)', 'account ' || account) FROM changed"
    }

    /// Connects (with up to `connections` in the pool) and migrates the schema. Instances that
    /// start at once migrate one after the other (an advisory lock), so each sees the last version.
    public init(url: String, connections: Int = 8) throws {
        let url = Self.withDefaults(url)
        self.url = url
        pool = ConnectionPool(url: url, size: connections)
        listener = CommitListener(url: url, channel: Self.channel)
        notifier = CommitNotifier(url: url, channel: Self.channel)
        appliedMigrations = try pool.withConnection { try PostgresMigrations.migrate($0) }
    }

    /// `url` with the connection parameters basket-server wants unless the URL sets them: a
    /// connect timeout (an unreachable database fails a request in 10 s instead of hanging it
    /// for the system's TCP timeout) and an application name (to find the instances' connections
    /// in pg_stat_activity).
    public static func withDefaults(_ url: String) -> String {
        var added: [String] = []
        if !url.contains("connect_timeout=") { added.append("connect_timeout=10") }
        if !url.contains("application_name=") { added.append("application_name=basket-server") }
        guard !added.isEmpty else { return url }
        return url + (url.contains("?") ? "&" : "?") + added.joined(separator: "&")
    }

    /// Whether `text` names a PostgreSQL database (`postgres://…` or `postgresql://…`).
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Starts listening for the other instances' commits, and this instance's notifier, and
    /// returns once both are connected (or after 10 s): an instance that takes traffic before it
    /// listens misses the pushes of that moment, and one whose notifier is not connected tells
    /// the others of its first pushes late.
    public func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void) {
        notifier.start()
        listener.start(handler)
        let deadline = DispatchTime.now() + 10
        while !listener.isListening && DispatchTime.now() < deadline { usleep(5_000) }
    }

    public func gauges() -> [StoreGauge] {
        logs.withLock { $0.gauges(prefix: "basket_postgres") } + [
            StoreGauge(
                name: "basket_postgres_connections", help: "PostgreSQL connections open for requests (pooled).",
                value: Double(pool.openConnections)),
            StoreGauge(
                name: "basket_postgres_pushes_one_statement",
                help: "Pushes written in one statement (this instance's log of the list was up to date).",
                value: Double(pushesByWay.withLock { $0.oneStatement })),
            StoreGauge(
                name: "basket_postgres_pushes_locked",
                help: "Pushes written in a transaction under the list's lock (the log caught up first).",
                value: Double(pushesByWay.withLock { $0.locked })),
            StoreGauge(
                name: "basket_postgres_pushes_one_statement_missed",
                help: "Pushes tried in one statement that found the list moved on (then written locked).",
                value: Double(pushesByWay.withLock { $0.missed })),
            StoreGauge(
                name: "basket_postgres_notifications_sent",
                help: "Pushes this instance told the others about (NOTIFY basket_ops), at most one per list per batch.",
                value: Double(notifier.counts.sent)),
            StoreGauge(
                name: "basket_postgres_notification_batches",
                help: "Statements that sent those notifications (one flush to disk each).",
                value: Double(notifier.counts.batches)),
            StoreGauge(
                name: "basket_postgres_notifications_dropped",
                help:
                    "Pushes the other instances were not told about (the database failed twice); their long-polls hear at their wait's end.",
                value: Double(notifier.counts.dropped)),
            StoreGauge(
                name: "basket_postgres_listening",
                help: "1 while this instance listens for other instances' pushes (LISTEN basket_ops), else 0.",
                value: listener.isListening ? 1 : 0),
        ]
    }

    public func close() {
        notifier.stop()
        listener.stop()
        pool.dropIdle()
    }

    /// Runs `body` with a pooled connection; PostgreSQL errors become store errors where one fits.
    /// When the connection turns out to be dead (the database restarted, or the connection was
    /// cut while idle in the pool), `body` runs once more on a new one: every store call is
    /// safe to repeat (pushes are idempotent; a repeated create finds what the first made).
    func connected<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            do {
                return try pool.withConnection(body)
            } catch let error as PostgresError where error.connectionLost {
                // The idle connections most likely died with this one (a restart): drop them all.
                pool.dropIdle()
                return try pool.withConnection(body)
            }
        } catch let error as PostgresError {
            if Self.isRetryable(error) { throw StoreError.unavailable }
            switch error.sqlState {
            case "53100", "53200", "54000": throw StoreError.storageFull  // disk_full, out_of_memory, …
            case "P0002": throw StoreError.noSuchList
            default: throw StoreError.database(error.description)
            }
        }
    }

    /// Whether `error` is the database being away for a while rather than a fault of the
    /// request: a connection that could not be made or was lost again, a server shutting down or
    /// starting (57P01–57P03), a connection exception (08…), a serialization failure or deadlock
    /// (40001, 40P01), too many connections (53300), a standby that cannot write (25006).
    static func isRetryable(_ error: PostgresError) -> Bool {
        if error.connectionLost { return true }
        return error.sqlState.hasPrefix("08") || error.sqlState.hasPrefix("57P")
            || ["40001", "40P01", "53300", "25006"].contains(error.sqlState)
    }

    static func listParameter(_ list: ListID) -> String { PostgresConnection.bytea(list.raw.bytes) }
}

/// A thread that LISTENs on the store's channel and reports each committed push (on any
/// instance) to the handler. After losing its connection it reconnects and reports
/// ``CommitEvent/resumed`` (notifications may have been missed meanwhile).
final class CommitListener: Sendable {
    let url: String
    let channel: String
    private struct State {
        var started = false
        var stopping = false
        var listening = false
    }
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    init(url: String, channel: String) {
        self.url = url
        self.channel = channel
    }

    func start(_ handler: @escaping @Sendable (CommitEvent) -> Void) {
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let thread = Thread { [self] in
            run(handler)
            finished.signal()
        }
        thread.name = "basket-listen"
        thread.start()
    }

    /// Stops listening and waits (at most a poll interval) until the connection is closed.
    func stop() {
        let running: Bool = state.withLock { state in
            defer { state.stopping = true }
            return state.started && !state.stopping
        }
        if running { finished.wait() }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    /// The list a payload's hex names.
    private static func list(_ hex: Substring) -> ListID? {
        Hex.bytes(String(hex)).flatMap { ID128(bytes: $0) }.map { ListID(raw: $0) }
    }

    /// Whether the LISTEN connection is up.
    var isListening: Bool { state.withLock { $0.listening } }

    private func run(_ handler: @Sendable (CommitEvent) -> Void) {
        var first = true
        while !isStopping {
            do {
                let connection = try PostgresConnection(url: url)
                try connection.execute("LISTEN \(channel)")
                state.withLock { $0.listening = true }
                if !first { handler(.resumed) }
                first = false
                while !isStopping {
                    var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, 200)
                    // The pushes read together are reported once per list, at its newest
                    // cursor: a hot list pushed 50 times meanwhile costs its watchers one wake-up
                    // and one read of the log, not 50. A payload is "account <id>", or pushes
                    // (``CommitNotifier/payloads(_:)``).
                    var newest = NewestHeads()
                    for (_, payload) in try connection.notifications() {
                        let parts = payload.split(separator: " ")
                        if parts.count == 2, parts[0] == "account", let account = Int64(parts[1]) {
                            handler(.accountChanged(account))
                            continue
                        }
                        if parts.count == 3, parts[0] == "member", let list = Self.list(parts[1]),
                            let account = Int64(parts[2])
                        {
                            handler(.membershipChanged(list, account: account))
                            continue
                        }
                        if parts.count == 2, parts[0] == "deleted", let list = Self.list(parts[1]) {
                            handler(.listDeleted(list))
                            continue
                        }
                        if parts.count == 3, parts[0] == "shopping", let list = Self.list(parts[1]),
                            let at = Int64(parts[2])
                        {
                            handler(.shoppingChanged(list, at: at))
                            continue
                        }
                        if parts.count == 3, parts[0] == "inbox", let list = Self.list(parts[1]),
                            let at = Int64(parts[2])
                        {
                            handler(.inboxChanged(list, at: at))
                            continue
                        }
                        for (list, head) in CommitNotifier.heads(in: payload) { newest.note(list, head) }
                    }
                    for (list, head) in newest.heads { handler(.committed(list, head)) }
                }
            } catch {
                state.withLock { $0.listening = false }
                first = false
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }
}
