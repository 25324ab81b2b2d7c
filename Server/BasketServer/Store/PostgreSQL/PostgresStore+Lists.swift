public import BasketCore
import Foundation
import Postgres
import Synchronization

// PostgresStore: lists, members, invites.
extension PostgresStore {
    public func createList(_ list: ListID, owner: Int64, encrypted: Bool) throws -> MembershipRecord {
        try connected { db in
            let epoch = StoredOps.newEpoch()
            let rows = try db.prepared(
                """
                WITH list AS (
                    INSERT INTO lists(id, epoch, created_by, encrypted) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (id) DO NOTHING RETURNING no)
                INSERT INTO members(list, account, role) SELECT no, $3, 'owner' FROM list RETURNING list
                """, [Self.listParameter(list), epoch, "\(owner)", encrypted ? "true" : "false"])
            guard rows.count == 1 else { throw StoreError.listExists }
            return MembershipRecord(list: list, role: .owner, epoch: epoch, cursor: 0, encrypted: encrypted)
        }
    }

    public func memberships(of account: Int64) throws -> [MembershipRecord] {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT l.id, m.role, l.epoch, l.last_seq, l.encrypted FROM members m JOIN lists l ON l.no = m.list
                WHERE m.account = $1 ORDER BY l.no
                """, ["\(account)"])
            return (0..<rows.count).map { row in
                MembershipRecord(
                    list: ListID(raw: ID128(bytes: rows.bytes(row, 0)!)!),
                    role: Role(rawValue: rows.string(row, 1) ?? "") ?? .viewer, epoch: rows.string(row, 2) ?? "",
                    cursor: rows.int64(row, 3), encrypted: rows.string(row, 4) == "t")
            }
        }
    }

    public func access(of account: Int64, in list: ListID) throws -> ListAccess? {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT m.role, l.encrypted FROM members m JOIN lists l ON l.no = m.list
                WHERE l.id = $1 AND m.account = $2
                """, [Self.listParameter(list), "\(account)"])
            guard rows.count == 1, let role = rows.string(0, 0).flatMap(Role.init(rawValue:)) else { return nil }
            return ListAccess(role: role, encrypted: rows.string(0, 1) == "t")
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
        try connected { db in Int(try db.prepared(Self.listCountSQL, ["\(account)"]).int64(0, 0)) }
    }

    /// The members, each with its first replica ids: at most ``BasketService/Configuration/maxMembersPerList``
    /// index ranges of at most ``MemberRecord/maxReplicas`` rows.
    public func members(of list: ListID) throws -> [MemberRecord] {
        try connected { db in
            let rows = try db.prepared(Self.membersSQL, [Self.listParameter(list)])
            return try (0..<rows.count).map { row in
                let replicas = try db.prepared(
                    Self.memberReplicasSQL, [rows.string(row, 3), rows.string(row, 2)])
                return MemberRecord(
                    account: rows.string(row, 0) ?? "", role: Role(rawValue: rows.string(row, 1) ?? "") ?? .viewer,
                    replicas: (0..<replicas.count).map { StoredOps.replica(replicas.int64($0, 0)) },
                    publicKey: rows.string(row, 4))
            }
        }
    }

    @discardableResult
    public func removeMember(_ account: Int64, from list: ListID, withdrawingInvitesItUsed: Bool) throws -> Bool {
        try connected { db in
            try db.transaction {
                let (no, role, owners, members) = try Self.lockMember(account, of: list, db)
                if role == "owner" && owners == 1 && members > 1 { throw StoreError.lastOwner }
                if members == 1 {
                    // The last member: nobody could reach the list again, so it goes.
                    try Self.deleteList(no, db)
                    try Self.notifyDeleted(list, db)
                    return true
                }
                _ = try db.prepared("DELETE FROM members WHERE list = $1 AND account = $2", [no, "\(account)"])
                try Self.notifyMembershipChanged(list, account, db)
                // Who may no longer invite has no invites out.
                _ = try db.prepared("DELETE FROM invites WHERE list = $1 AND created_by = $2", [no, "\(account)"])
                try Self.rotationDue(no, db)
                if withdrawingInvitesItUsed {
                    _ = try db.prepared(Self.dropInvitesUsedBySQL, [no, "\(account)"])
                }
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
                try Self.notifyMembershipChanged(list, account, db)
            }
        }
    }

    public func deleteList(_ list: ListID) throws -> Bool {
        try connected { db in
            try db.transaction {
                let found = try db.prepared("SELECT no FROM lists WHERE id = $1 FOR UPDATE", [Self.listParameter(list)])
                guard found.count == 1, let no = found.string(0, 0) else { return false }
                try Self.deleteList(no, db)
                try Self.notifyDeleted(list, db)
                return true
            }
        }
    }

    /// Tells every instance, when the transaction commits, that `account`'s membership of `list`
    /// changed (removed, or another role): their parked long-polls of it are ended. In the
    /// transaction, not after it like pushes: membership changes are rare, and one must never be
    /// missed by an instance that heard the push after it (a removed member would read it).
    private static func notifyMembershipChanged(_ list: ListID, _ account: Int64, _ db: PostgresConnection) throws {
        _ = try db.prepared(
            "SELECT pg_notify('\(channel)', 'member ' || $1 || ' ' || $2)", [Hex.encode(list.raw.bytes), "\(account)"])
    }

    /// Tells every instance, at commit, that `list` was deleted (its long-polls are answered 404).
    private static func notifyDeleted(_ list: ListID, _ db: PostgresConnection) throws {
        _ = try db.prepared("SELECT pg_notify('\(channel)', 'deleted ' || $1)", [Hex.encode(list.raw.bytes)])
    }

    /// Here rather than with the accounts: it is what becomes of the account's lists. Each list's
    /// row is locked as a removal locks it, and every instance is told of each change.
    public func deleteAccount(_ account: Int64) throws -> AccountDeletion {
        try connected { db in
            try db.transaction {
                var done = AccountDeletion()
                let rows = try db.prepared(
                    """
                    SELECT l.no, encode(l.id, 'hex'), m.role FROM members m JOIN lists l ON l.no = m.list
                    WHERE m.account = $1 ORDER BY l.no FOR UPDATE OF l
                    """, ["\(account)"])
                for row in 0..<rows.count {
                    guard let no = rows.string(row, 0), let hex = rows.string(row, 1), let bytes = Hex.bytes(hex),
                        let id = ID128(bytes: bytes)
                    else { continue }
                    let list = ListID(raw: id)
                    let counts = try db.prepared(
                        """
                        SELECT (SELECT count(*) FROM members WHERE list = $1),
                            (SELECT count(*) FROM members WHERE list = $1 AND role = 'owner')
                        """, [no])
                    if counts.int64(0, 0) <= 1 {
                        try Self.deleteList(no, db)
                        try Self.notifyDeleted(list, db)
                        done.deleted.append(list)
                        continue
                    }
                    if rows.string(row, 2) == Role.owner.rawValue && counts.int64(0, 1) == 1 {
                        _ = try db.prepared(Self.promoteSuccessorSQL, [no, "\(account)"])
                        done.handedOver.append(list)
                    } else {
                        done.left.append(list)
                    }
                    _ = try db.prepared("DELETE FROM members WHERE list = $1 AND account = $2", [no, "\(account)"])
                    _ = try db.prepared("DELETE FROM invites WHERE list = $1 AND created_by = $2", [no, "\(account)"])
                    try Self.notifyMembershipChanged(list, account, db)
                    try Self.rotationDue(no, db)
                }
                _ = try db.prepared(
                    Self.notifyingAccounts("DELETE FROM tokens WHERE account = $1 RETURNING account"), ["\(account)"])
                for sql in Self.deleteAccountSQL { _ = try db.prepared(sql, ["\(account)"]) }
                return done
            }
        }
    }

    /// Deletes list `no` with its log, members and invites. Call inside a transaction holding the list's row lock.
    private static func deleteList(_ no: String?, _ db: PostgresConnection) throws {
        for table in ["pushes", "invites", "members", "replicas", "member_usage"] {
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
    static let freeMemberUsageSQL = SharedSQL.sql(SharedSQL.freeMemberUsage) { "$\($0)" }
    static let listCountSQL = SharedSQL.sql(SharedSQL.listCount) { "$\($0)" }
    static let promoteSuccessorSQL = SharedSQL.sql(SharedSQL.promoteSuccessor) { "$\($0)" }
    static let deleteAccountSQL = SharedSQL.deleteAccountRows.map { SharedSQL.sql($0) { "$\($0)" } }
    static let dropInvitesUsedBySQL = SharedSQL.sql(SharedSQL.dropInvitesUsedBy) { "$\($0)" }
    static let membersSQL = SharedSQL.sql(SharedSQL.members) { "$\($0)" }
    static let memberReplicasSQL = SharedSQL.sql(SharedSQL.memberReplicas) { "$\($0)" }

    public func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?, keyEpoch: Int64?
    ) throws {
        try connected { db in
            try db.transaction {
                try Self.checkInviteKeys(keyEpoch, of: list, db)
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

    public func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> MembershipRecord {
        try connected { db in
            try db.transaction {
                let rows = try db.prepared(
                    """
                    SELECT i.list, i.role, l.id, l.epoch, l.last_seq, m.role, l.encrypted FROM invites i
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
                    return MembershipRecord(
                        list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: current,
                        epoch: rows.string(0, 3) ?? "", cursor: rows.int64(0, 4),
                        encrypted: rows.string(0, 6) == "t")
                }
                if let current {
                    // A member already: its role changes only through the members route, and the
                    // invite stays for whom it was meant.
                    return MembershipRecord(
                        list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: current,
                        epoch: rows.string(0, 3) ?? "", cursor: rows.int64(0, 4),
                        encrypted: rows.string(0, 6) == "t")
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
                return MembershipRecord(
                    list: ListID(raw: ID128(bytes: rows.bytes(0, 2)!)!), role: role, epoch: rows.string(0, 3) ?? "",
                    cursor: rows.int64(0, 4), encrypted: rows.string(0, 6) == "t")
            }
        }
    }

    static let inviteColumns = "i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left"

    static func inviteRecord(_ rows: Rows, _ row: Int) -> InviteRecord {
        InviteRecord(
            id: rows.string(row, 0) ?? "", role: Role(rawValue: rows.string(row, 1) ?? "") ?? .viewer,
            createdBy: rows.string(row, 2) ?? "", created: rows.int64(row, 3), expires: rows.int64(row, 4),
            usesLeft: Int(rows.int64(row, 5)))
    }

    public func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview? {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT l.id, i.title, i.role, coalesce(a.name, ''), i.expires,
                    EXISTS (SELECT 1 FROM members m WHERE m.list = i.list AND m.account = $3), l.encrypted
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE i.hash = $1 AND i.expires > $2 AND i.uses_left > 0
                """, [hash, "\(now)", "\(account)"])
            guard rows.count == 1, let id = rows.bytes(0, 0).flatMap({ ID128(bytes: $0) }) else { return nil }
            return Wire.InvitePreview(
                list: ListID(raw: id), title: rows.string(0, 1),
                role: Role(rawValue: rows.string(0, 2) ?? "") ?? .viewer,
                createdBy: rows.string(0, 3) ?? "", expiresAt: rows.int64(0, 4), member: rows.string(0, 5) == "t",
                encrypted: rows.string(0, 6) == "t")
        }
    }

    public func invites(of list: ListID, now: Int64) throws -> [InviteRecord] {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT \(Self.inviteColumns)
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE l.id = $1 AND i.expires > $2 AND i.uses_left > 0 ORDER BY i.created, i.id
                """, [Self.listParameter(list), "\(now)"])
            return (0..<rows.count).map { Self.inviteRecord(rows, $0) }
        }
    }

    public func revokeInvite(id: String, of list: ListID) throws -> InviteRecord? {
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
                return rows.count == 1 ? Self.inviteRecord(rows, 0) : nil
            }
        }
    }
}
