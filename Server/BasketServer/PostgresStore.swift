public import BasketCore
import Foundation
import Postgres
import Synchronization

/// The store on PostgreSQL, for several `basket-server` instances behind a load balancer. Each
/// instance keeps a pool of connections. A push locks the list's row (so concurrent instances
/// number a list's operations without gaps), skips operations the log has (known from
/// ``ListLogs``), writes the rest as one row of `pushes` (``PushRecords``), and notifies every
/// instance listening on `basket_ops`.
public final class PostgresStore: Store, @unchecked Sendable {
    // `@unchecked Sendable`: the pool and the listener guard their own state.
    public let url: String
    /// The schema versions this instance's start applied (empty when the database was up to date
    /// or another instance migrated it).
    public let appliedMigrations: Range<Int>
    let pool: ConnectionPool
    private let listener: CommitListener
    /// What this instance knows of each list's log, for pushes (``ListLogs``): caught up from the
    /// log under the list's row lock, as other instances push too.
    let logs = Mutex(ListLogs(capacity: 4_000_000))

    /// The NOTIFY channel: payload "<list id hex> <last sequence number>" for a push, or
    /// "account <id>" when an account's tokens or password changed.
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

    public func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void) {
        listener.start(handler)
    }

    public func gauges() -> [StoreGauge] {
        logs.withLock { $0.gauges(prefix: "basket_postgres") } + [
            StoreGauge(
                name: "basket_postgres_connections", help: "PostgreSQL connections open for requests (pooled).",
                value: Double(pool.openConnections)),
            StoreGauge(
                name: "basket_postgres_listening",
                help: "1 while this instance listens for other instances' pushes (LISTEN basket_ops), else 0.",
                value: listener.isListening ? 1 : 0),
        ]
    }

    public func close() {
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
            switch error.sqlState {
            case "53100", "53200", "54000": throw StoreError.storageFull  // disk_full, out_of_memory, …
            case "P0002": throw StoreError.noSuchList
            default: throw StoreError.database(error.description)
            }
        }
    }

    static func listParameter(_ list: ListID) -> String { PostgresConnection.bytea(list.raw.bytes) }

    // MARK: Accounts and tokens

    public func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws
        -> Account
    {
        try connected { db in
            try db.transaction {
                if let signupInvite {
                    let used = try db.prepared(
                        """
                        UPDATE signup_invites SET uses_left = uses_left - 1
                        WHERE hash = $1 AND expires > $2 AND uses_left > 0 RETURNING uses_left
                        """, [signupInvite, "\(now)"])
                    guard used.count == 1 else { throw StoreError.noSuchInvite }
                    _ = try db.prepared("DELETE FROM signup_invites WHERE uses_left <= 0", [])
                }
                let rows = try db.prepared(
                    "INSERT INTO accounts(name, password) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING id",
                    [name, passwordHash])
                guard rows.count == 1 else { throw StoreError.accountExists }
                return Account(id: rows.int64(0, 0), name: name, passwordHash: passwordHash)
            }
        }
    }

    public func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws {
        try connected { db in
            _ = try db.prepared(
                "INSERT INTO signup_invites(hash, created, expires, uses_left) VALUES ($1, $2, $3, $4)",
                [hash, "\(createdAt)", "\(expiresAt)", "\(uses)"])
        }
    }

    public func signupInviteWorks(hash: String, now: Int64) throws -> Bool {
        try connected { db in
            try db.prepared(
                "SELECT 1 FROM signup_invites WHERE hash = $1 AND expires > $2 AND uses_left > 0", [hash, "\(now)"]
            ).count == 1
        }
    }

    public func account(named name: String) throws -> Account? {
        try connected { db in
            let rows = try db.prepared("SELECT id, name, password FROM accounts WHERE name = $1", [name])
            return rows.count == 0
                ? nil : Account(id: rows.int64(0, 0), name: rows.string(0, 1)!, passwordHash: rows.string(0, 2)!)
        }
    }

    public func setPasswordHash(_ hash: String, of account: Int64) throws {
        try connected {
            _ = try $0.prepared(
                Self.notifyingAccounts("UPDATE accounts SET password = $1 WHERE id = $2 RETURNING id AS account"),
                [hash, "\(account)"])
        }
    }

    public func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws {
        try connected { db in
            _ = try db.prepared(
                "INSERT INTO tokens(hash, id, account, device, created, last_used) VALUES ($1, $2, $3, $4, $5, $5)",
                [hash, id, "\(account)", device, "\(createdAt)"])
        }
    }

    static func tokenInfo(_ rows: Rows, _ row: Int, from column: Int) -> TokenInfo {
        TokenInfo(
            id: rows.string(row, column) ?? "", device: rows.string(row, column + 1) ?? "",
            created: rows.int64(row, column + 2), lastUsed: rows.int64(row, column + 3))
    }

    public func session(forTokenHash hash: String) throws -> (Account, TokenInfo)? {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT a.id, a.name, a.password, t.id, t.device, t.created, t.last_used
                FROM tokens t JOIN accounts a ON a.id = t.account WHERE t.hash = $1
                """, [hash])
            guard rows.count == 1 else { return nil }
            return (
                Account(id: rows.int64(0, 0), name: rows.string(0, 1)!, passwordHash: rows.string(0, 2)!),
                Self.tokenInfo(rows, 0, from: 3)
            )
        }
    }

    public func touchToken(hash: String, at now: Int64) throws {
        try connected { _ = try $0.prepared("UPDATE tokens SET last_used = $2 WHERE hash = $1", [hash, "\(now)"]) }
    }

    public func tokens(of account: Int64) throws -> [TokenInfo] {
        try connected { db in
            let rows = try db.prepared(
                "SELECT id, device, created, last_used FROM tokens WHERE account = $1 ORDER BY created, id",
                ["\(account)"])
            return (0..<rows.count).map { Self.tokenInfo(rows, $0, from: 0) }
        }
    }

    public func revokeToken(hash: String) throws {
        try connected {
            _ = try $0.prepared(Self.notifyingAccounts("DELETE FROM tokens WHERE hash = $1 RETURNING account"), [hash])
        }
    }

    public func revokeToken(id: String, of account: Int64) throws -> Bool {
        try connected { db in
            try db.prepared(
                Self.notifyingAccounts("DELETE FROM tokens WHERE id = $1 AND account = $2 RETURNING account"),
                [id, "\(account)"]
            ).count == 1
        }
    }

    public func revokeTokens(of account: Int64, keeping: String?) throws -> Int {
        try connected { db in
            try db.prepared(
                Self.notifyingAccounts(
                    "DELETE FROM tokens WHERE account = $1 AND hash IS DISTINCT FROM $2 RETURNING account"),
                ["\(account)", keeping]
            ).count
        }
    }

    // MARK: Lists, members, invites

    public func createList(_ list: ListID, owner: Int64) throws -> Membership {
        try connected { db in
            let epoch = StoredOps.newEpoch()
            let rows = try db.prepared(
                """
                WITH list AS (
                    INSERT INTO lists(id, epoch, created_by) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING no)
                INSERT INTO members(list, account, role) SELECT no, $3, 'owner' FROM list RETURNING list
                """, [Self.listParameter(list), epoch, "\(owner)"])
            guard rows.count == 1 else { throw StoreError.listExists }
            return Membership(list: list, role: .owner, epoch: epoch, cursor: 0)
        }
    }

    public func memberships(of account: Int64) throws -> [Membership] {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT l.id, m.role, l.epoch, l.last_seq FROM members m JOIN lists l ON l.no = m.list
                WHERE m.account = $1 ORDER BY l.no
                """, ["\(account)"])
            return (0..<rows.count).map { row in
                Membership(
                    list: ListID(raw: ID128(bytes: rows.bytes(row, 0)!)!),
                    role: Role(rawValue: rows.string(row, 1) ?? "") ?? .viewer, epoch: rows.string(row, 2) ?? "",
                    cursor: rows.int64(row, 3))
            }
        }
    }

    public func role(of account: Int64, in list: ListID) throws -> Role? {
        try connected { db in
            let rows = try db.prepared(
                "SELECT m.role FROM members m JOIN lists l ON l.no = m.list WHERE l.id = $1 AND m.account = $2",
                [Self.listParameter(list), "\(account)"])
            return rows.count == 0 ? nil : rows.string(0, 0).flatMap(Role.init(rawValue:))
        }
    }

    public func listCount(of account: Int64) throws -> Int {
        try connected { db in
            Int(
                try db.prepared(
                    """
                    SELECT count(*) FROM lists l WHERE l.created_by = $1
                        OR EXISTS (SELECT 1 FROM members m WHERE m.list = l.no AND m.account = $1)
                    """, ["\(account)"]
                ).int64(0, 0))
        }
    }

    public func members(of list: ListID) throws -> [Member] {
        try connected { db in
            let owned = try db.prepared(Member.replicasQuery("$1"), [Self.listParameter(list)])
            var replicas: [Int64: [ReplicaID]] = [:]
            for row in 0..<owned.count {
                replicas[owned.int64(row, 0), default: []].append(StoredOps.replica(owned.int64(row, 1)))
            }
            let rows = try db.prepared(
                """
                SELECT a.name, m.role, m.account FROM members m JOIN lists l ON l.no = m.list
                JOIN accounts a ON a.id = m.account WHERE l.id = $1 ORDER BY a.name
                """, [Self.listParameter(list)])
            return (0..<rows.count).map {
                Member(
                    account: rows.string($0, 0) ?? "", role: Role(rawValue: rows.string($0, 1) ?? "") ?? .viewer,
                    replicas: replicas[rows.int64($0, 2)] ?? [])
            }
        }
    }

    @discardableResult
    public func removeMember(_ account: Int64, from list: ListID) throws -> Bool {
        try connected { db in
            try db.transaction {
                let (no, role, owners, members) = try Self.lockMember(account, of: list, db)
                if role == "owner" && owners == 1 && members > 1 { throw StoreError.lastOwner }
                if members == 1 {
                    // The last member: nobody could reach the list again, so it goes.
                    try Self.deleteList(no, db)
                    return true
                }
                _ = try db.prepared("DELETE FROM members WHERE list = $1 AND account = $2", [no, "\(account)"])
                // Who may no longer invite has no invites out.
                _ = try db.prepared("DELETE FROM invites WHERE list = $1 AND created_by = $2", [no, "\(account)"])
                return false
            }
        }
    }

    /// Locks the list's row (membership changes of one list are serialized across instances) and
    /// reads the member's role and the list's owner and member counts. Call inside a transaction.
    private static func lockMember(_ account: Int64, of list: ListID, _ db: PostgresConnection) throws -> (
        no: String?, role: String, owners: Int64, members: Int64
    ) {
        let found = try db.prepared("SELECT no FROM lists WHERE id = $1 FOR UPDATE", [listParameter(list)])
        guard found.count == 1 else { throw StoreError.noSuchList }
        let no = found.string(0, 0)
        let counts = try db.prepared(
            """
            SELECT (SELECT role FROM members WHERE list = $1 AND account = $2),
                (SELECT count(*) FROM members WHERE list = $1 AND role = 'owner'),
                (SELECT count(*) FROM members WHERE list = $1)
            """, [no, "\(account)"])
        guard let role = counts.string(0, 0) else { throw StoreError.noSuchMember }
        return (no, role, counts.int64(0, 1), counts.int64(0, 2))
    }

    public func setRole(_ role: Role, of account: Int64, in list: ListID) throws {
        try connected { db in
            try db.transaction {
                let (no, current, owners, _) = try Self.lockMember(account, of: list, db)
                if current == Role.owner.rawValue && role != .owner && owners == 1 { throw StoreError.lastOwner }
                _ = try db.prepared(
                    "UPDATE members SET role = $3 WHERE list = $1 AND account = $2", [no, "\(account)", role.rawValue])
                _ = try db.prepared(Self.dropInvitesAboveRole, [no, "\(account)", role.rawValue])
            }
        }
    }

    public func deleteList(_ list: ListID) throws -> Bool {
        try connected { db in
            try db.transaction {
                let found = try db.prepared("SELECT no FROM lists WHERE id = $1 FOR UPDATE", [Self.listParameter(list)])
                guard found.count == 1, let no = found.string(0, 0) else { return false }
                try Self.deleteList(no, db)
                return true
            }
        }
    }

    /// Deletes list `no` with its log, members and invites. Call inside a transaction holding the list's row lock.
    private static func deleteList(_ no: String?, _ db: PostgresConnection) throws {
        for table in ["pushes", "invites", "members", "replicas"] {
            _ = try db.prepared("DELETE FROM \(table) WHERE list = $1", [no])
        }
        _ = try db.prepared("DELETE FROM lists WHERE no = $1", [no])
    }

    /// ``SharedSQL/insertInvite``, the list's row locked as a removal or a change of role locks
    /// it, and the maker's membership row too: either they wait for this insert (and withdraw
    /// what it stored) or it waits for them (and finds the maker gone or demoted).
    static let insertInvite = SharedSQL.sql(SharedSQL.insertInvite + " FOR UPDATE OF l FOR SHARE OF m RETURNING id") {
        "$\($0)"
    }
    static let dropInvitesAboveRole = SharedSQL.sql(SharedSQL.dropInvitesAboveRole) { "$\($0)" }

    public func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?
    ) throws {
        try connected { db in
            try db.transaction {
                // Expired invites go first: they count against nothing, and the table stays bounded.
                _ = try db.prepared(
                    "DELETE FROM invites WHERE list = (SELECT no FROM lists WHERE id = $1) AND expires <= $2",
                    [Self.listParameter(list), "\(createdAt)"])
                let rows = try db.prepared(
                    Self.insertInvite,
                    [
                        hash, id, Self.listParameter(list), role.rawValue, "\(createdBy)", "\(createdAt)",
                        "\(expiresAt)", "\(uses)", "\(limits.perList)", "\(limits.perMember)", title,
                    ])
                guard rows.count == 0 else { return }
                let found = try db.prepared(
                    """
                    SELECT l.no, m.role FROM lists l LEFT JOIN members m ON m.list = l.no AND m.account = $2
                    WHERE l.id = $1
                    """, [Self.listParameter(list), "\(createdBy)"])
                guard found.count == 1 else { throw StoreError.noSuchList }
                let maker = found.string(0, 1).flatMap(Role.init(rawValue:))
                guard let maker, maker != .viewer, role <= maker else { throw StoreError.noSuchMember }
                throw StoreError.tooManyInvites
            }
        }
    }

    public func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> Membership {
        try connected { db in
            try db.transaction {
                let rows = try db.prepared(
                    """
                    SELECT i.list, i.role, l.id, l.epoch, l.last_seq, m.role FROM invites i
                    JOIN lists l ON l.no = i.list LEFT JOIN members m ON m.list = i.list AND m.account = $3
                    WHERE i.hash = $1 AND i.expires > $2 AND i.uses_left > 0 FOR UPDATE OF l, i
                    """, [hash, "\(now)", "\(account)"])
                guard rows.count == 1 else { throw StoreError.noSuchInvite }
                let invited = Role(rawValue: rows.string(0, 1) ?? "") ?? .viewer
                let current = rows.string(0, 5).flatMap(Role.init(rawValue:))
                let usedBefore =
                    try db.prepared("SELECT 1 FROM invite_uses WHERE hash = $1 AND account = $2", [hash, "\(account)"])
                    .count == 1
                if usedBefore {
                    // The same code again: harmless for a member (another of its devices), refused for
                    // an account that was removed or left since.
                    guard let current else { throw StoreError.noSuchInvite }
                    return Membership(
                        list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: current,
                        epoch: rows.string(0, 3) ?? "", cursor: rows.int64(0, 4))
                }
                if let current {
                    // A member already: its role changes only through the members route, and the
                    // invite stays for whom it was meant.
                    return Membership(
                        list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: current,
                        epoch: rows.string(0, 3) ?? "", cursor: rows.int64(0, 4))
                }
                let members = try db.prepared("SELECT count(*) FROM members WHERE list = $1", [rows.string(0, 0)])
                if members.int64(0, 0) >= Int64(maxMembers) { throw StoreError.tooManyMembers }
                let role = invited
                _ = try db.prepared(
                    "INSERT INTO members(list, account, role) VALUES ($1, $2, $3)",
                    [rows.string(0, 0), "\(account)", role.rawValue])
                _ = try db.prepared("UPDATE invites SET uses_left = uses_left - 1 WHERE hash = $1", [hash])
                _ = try db.prepared(
                    "INSERT INTO invite_uses(hash, account) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    [hash, "\(account)"])
                _ = try db.prepared("DELETE FROM invites WHERE hash = $1 AND uses_left <= 0", [hash])
                return Membership(
                    list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: role, epoch: rows.string(0, 3) ?? "",
                    cursor: rows.int64(0, 4))
            }
        }
    }

    static let inviteColumns = "i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left"

    static func inviteInfo(_ rows: Rows, _ row: Int) -> InviteInfo {
        InviteInfo(
            id: rows.string(row, 0) ?? "", role: Role(rawValue: rows.string(row, 1) ?? "") ?? .viewer,
            createdBy: rows.string(row, 2) ?? "", created: rows.int64(row, 3), expires: rows.int64(row, 4),
            usesLeft: Int(rows.int64(row, 5)))
    }

    public func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview? {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT l.id, i.title, i.role, coalesce(a.name, ''), i.expires,
                    EXISTS (SELECT 1 FROM members m WHERE m.list = i.list AND m.account = $3)
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE i.hash = $1 AND i.expires > $2 AND i.uses_left > 0
                """, [hash, "\(now)", "\(account)"])
            guard rows.count == 1, let id = rows.bytes(0, 0).flatMap({ ID128(bytes: $0) }) else { return nil }
            return Wire.InvitePreview(
                list: ListID(raw: id), title: rows.string(0, 1),
                role: Role(rawValue: rows.string(0, 2) ?? "") ?? .viewer,
                createdBy: rows.string(0, 3) ?? "", expiresAt: rows.int64(0, 4), member: rows.string(0, 5) == "t")
        }
    }

    public func invites(of list: ListID, now: Int64) throws -> [InviteInfo] {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT \(Self.inviteColumns)
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE l.id = $1 AND i.expires > $2 AND i.uses_left > 0 ORDER BY i.created, i.id
                """, [Self.listParameter(list), "\(now)"])
            return (0..<rows.count).map { Self.inviteInfo(rows, $0) }
        }
    }

    public func revokeInvite(id: String, of list: ListID) throws -> InviteInfo? {
        try connected { db in
            try db.transaction {
                let found = try db.prepared("SELECT no FROM lists WHERE id = $1", [Self.listParameter(list)])
                guard found.count == 1 else { throw StoreError.noSuchList }
                let rows = try db.prepared(
                    """
                    DELETE FROM invites i USING lists l WHERE l.no = i.list AND l.id = $1 AND i.id = $2
                    RETURNING \(Self.inviteColumns.replacingOccurrences(of: "coalesce(a.name, '')",
                        with: "coalesce((SELECT name FROM accounts WHERE id = i.created_by), '')"))
                    """, [Self.listParameter(list), id])
                return rows.count == 1 ? Self.inviteInfo(rows, 0) : nil
            }
        }
    }

    // MARK: Maintenance

    public func statistics() throws -> StoreStatistics {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT (SELECT coalesce(sum(last_seq - dropped), 0) FROM lists), (SELECT count(*) FROM lists),
                    (SELECT count(*) FROM accounts),
                    pg_database_size(current_database())
                """)
            return StoreStatistics(
                operations: rows.int64(0, 0), lists: rows.int64(0, 1), accounts: rows.int64(0, 2),
                databaseBytes: rows.int64(0, 3))
        }
    }

    /// Gives every list a new epoch (after restoring a backup made with pg_dump: clients then
    /// push again what the backup does not hold). Returns the lists renewed.
    public func renewEpochs() throws -> Int {
        try connected { db in
            // 16 hex digits, as StoredOps.newEpoch makes them.
            try db.query(
                """
                UPDATE lists SET epoch = substr(md5(random()::text || no::text || clock_timestamp()::text), 1, 16),
                    epoch_started = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                """
            )
            .changed
        }
    }
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
                    for (_, payload) in try connection.notifications() {
                        let parts = payload.split(separator: " ")
                        if parts.count == 2, parts[0] == "account", let account = Int64(parts[1]) {
                            handler(.accountChanged(account))
                            continue
                        }
                        guard parts.count == 2, let bytes = Hex.bytes(String(parts[0])),
                            let id = ID128(bytes: bytes), let cursor = Int64(parts[1])
                        else { continue }
                        handler(.committed(ListID(raw: id), cursor))
                    }
                }
            } catch {
                state.withLock { $0.listening = false }
                first = false
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }
}
