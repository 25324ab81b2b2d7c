public import BasketCore
import Foundation
import SQLite
import Synchronization

// SQLiteStore: lists, members, invites.
extension SQLiteStore {
    private func listNo(_ list: ListID, _ db: Connection) throws -> Int64? {
        try db.scalar("SELECT no FROM lists WHERE id = ?", .blob(list.raw.bytes))?.integerValue
    }

    public func createList(_ list: ListID, owner: Int64, encrypted: Bool) throws -> MembershipRecord {
        defer { heads.invalidateMemberships(of: owner) }  // once committed
        return try locked { db in
            try db.transaction {
                if try listNo(list, db) != nil { throw StoreError.listExists }
                let epoch = StoredOps.newEpoch()
                try db.run(
                    "INSERT INTO lists(id, epoch, created_by, encrypted) VALUES (?, ?, ?, ?)", .blob(list.raw.bytes),
                    .text(epoch), .integer(owner), .integer(encrypted ? 1 : 0))
                let no = db.lastInsertRowID
                try db.run(
                    "INSERT INTO members(list, account, role) VALUES (?, ?, 'owner')", .integer(no), .integer(owner))
                return MembershipRecord(list: list, role: .owner, epoch: epoch, cursor: 0, encrypted: encrypted)
            }
        }
    }

    public func memberships(of account: Int64) throws -> [MembershipRecord] {
        let (found, generation) = heads.memberships(of: account)
        let lists =
            try found
            ?? reading { db in
                try db.query(
                    """
                    SELECT l.id, m.role, l.no, l.last_seq, l.epoch, l.compacted_through, l.encrypted
                    FROM members m JOIN lists l ON l.no = m.list WHERE m.account = ? ORDER BY l.no
                    """, .integer(account)
                ) { row in
                    (
                        list: ListID(raw: ID128(row.blob128(0))),
                        head: ListHead(
                            no: row.int64(2), cursor: row.int64(3), epoch: row.string(4) ?? "",
                            compactedThrough: row.int64(5), encrypted: row.int64(6) != 0),
                        role: Role(rawValue: row.string(1) ?? "") ?? .viewer
                    )
                }
            }
        if found == nil { heads.insertMemberships(of: account, lists, ifUnchangedSince: generation) }
        return lists.map {
            MembershipRecord(
                list: $0.list, role: $0.role, epoch: $0.head.epoch, cursor: $0.head.cursor, encrypted: $0.head.encrypted
            )
        }
    }

    public func access(of account: Int64, in list: ListID) throws -> ListAccess? {
        do {
            let (head, role) = try memberHead(list, account)
            return ListAccess(role: role, encrypted: head.encrypted)
        } catch StoreError.noSuchList {
            return nil
        }
    }

    public func role(of account: Int64, in list: ListID) throws -> Role? {
        do {
            return try memberHead(list, account).role
        } catch StoreError.noSuchList {
            return nil
        }
    }

    /// The list's head and the member's role: from memory when known, else read (and kept).
    /// - Throws: ``StoreError/noSuchList`` when there is no such list or `account` is not a member.
    func memberHead(_ list: ListID, _ account: Int64) throws -> (head: ListHead, role: Role) {
        let (found, generation) = heads.lookup(list, account: account)
        if let found { return found }
        let (head, role) = try reading { db in try self.head(db, list, account) }
        guard let role else { throw StoreError.noSuchList }
        heads.insert(list, head: head, account: account, role: role, ifUnchangedSince: generation)
        return (head, role)
    }

    public func listCount(of account: Int64) throws -> Int {
        // On a reading connection: the writer's lock is for writes.
        try reading { db in Int(try db.scalar(Self.listCountSQL, .integer(account))?.integerValue ?? 0) }
    }

    /// The members, each with its first replica ids: at most ``BasketService/Configuration/maxMembersPerList``
    /// index ranges of at most ``MemberRecord/maxReplicas`` rows, on a reading connection (not
    /// under the writer's lock, which every push needs).
    public func members(of list: ListID) throws -> [MemberRecord] {
        try reading(snapshot: true) { db in
            let rows = try db.query(Self.membersSQL, .blob(list.raw.bytes)) {
                (
                    name: $0.string(0) ?? "", role: $0.string(1) ?? "", account: $0.int64(2), no: $0.int64(3),
                    publicKey: $0.string(4)
                )
            }
            return try rows.map { row in
                MemberRecord(
                    account: row.name, role: Role(rawValue: row.role) ?? .viewer,
                    replicas: try db.query(Self.memberReplicasSQL, .integer(row.no), .integer(row.account)) {
                        StoredOps.replica($0.int64(0))
                    }, publicKey: row.publicKey)
            }
        }
    }

    /// The list's row number and the member's role. Call inside a transaction.
    /// - Throws: ``StoreError/noSuchList``, ``StoreError/noSuchMember``.
    private func member(_ account: Int64, of list: ListID, _ db: Connection) throws -> (no: Int64, role: String) {
        guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
        guard
            let role = try db.scalar(
                "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account))?.textValue
        else { throw StoreError.noSuchMember }
        return (no, role)
    }

    private func owners(_ no: Int64, _ db: Connection) throws -> Int64 {
        try db.scalar("SELECT count(*) FROM members WHERE list = ? AND role = 'owner'", .integer(no))?.integerValue ?? 0
    }

    @discardableResult
    public func removeMember(_ account: Int64, from list: ListID, withdrawingInvitesItUsed: Bool) throws -> Bool {
        defer { heads.invalidate(list) }  // once committed
        return try locked { db in
            try db.transaction {
                let (no, role) = try member(account, of: list, db)
                let members =
                    try db.scalar("SELECT count(*) FROM members WHERE list = ?", .integer(no))?.integerValue ?? 0
                if role == Role.owner.rawValue, try owners(no, db) == 1 && members > 1 { throw StoreError.lastOwner }
                if members == 1 {
                    // The last member: nobody could reach the list again, so it goes.
                    try deleteList(no, db)
                    return true
                }
                try db.run("DELETE FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account))
                // Who may no longer invite has no invites out.
                try db.run("DELETE FROM invites WHERE list = ? AND created_by = ?", .integer(no), .integer(account))
                try rotationDue(no, db)
                if withdrawingInvitesItUsed {
                    try db.run(Self.dropInvitesUsedBySQL, .integer(no), .integer(account))
                }
                return false
            }
        }
    }

    public func setRole(_ role: Role, of account: Int64, in list: ListID) throws {
        defer { heads.invalidate(list) }  // once committed
        try locked { db in
            try db.transaction {
                let (no, current) = try member(account, of: list, db)
                if current == Role.owner.rawValue && role != .owner, try owners(no, db) == 1 {
                    throw StoreError.lastOwner
                }
                try db.run(
                    "UPDATE members SET role = ? WHERE list = ? AND account = ?", .text(role.rawValue), .integer(no),
                    .integer(account))
                try db.run(Self.dropInvitesAboveRole, .integer(no), .integer(account), .text(role.rawValue))
            }
        }
    }

    public func deleteList(_ list: ListID) throws -> Bool {
        defer { heads.invalidate(list) }  // once committed
        return try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { return false }
                try deleteList(no, db)
                return true
            }
        }
    }

    /// Here rather than with the accounts: it is what becomes of the account's lists.
    public func deleteAccount(_ account: Int64) throws -> AccountDeletion {
        defer {
            heads.invalidateAll()
            heads.invalidateMemberships(of: account)
        }
        return try locked { db in
            try db.transaction {
                var done = AccountDeletion()
                let lists = try db.query(
                    "SELECT l.no, l.id, m.role FROM members m JOIN lists l ON l.no = m.list WHERE m.account = ?",
                    .integer(account)
                ) { (no: $0.int64(0), id: ListID(raw: ID128($0.blob128(1))), role: $0.string(2) ?? "") }
                for list in lists {
                    let members =
                        try db.scalar("SELECT count(*) FROM members WHERE list = ?", .integer(list.no))?.integerValue
                        ?? 0
                    if members <= 1 {
                        try deleteList(list.no, db)
                        done.deleted.append(list.id)
                        continue
                    }
                    if list.role == Role.owner.rawValue, try owners(list.no, db) == 1 {
                        try db.run(Self.promoteSuccessorSQL, .integer(list.no), .integer(account))
                        done.handedOver.append(list.id)
                    } else {
                        done.left.append(list.id)
                    }
                    try db.run(
                        "DELETE FROM members WHERE list = ? AND account = ?", .integer(list.no), .integer(account))
                    try db.run(
                        "DELETE FROM invites WHERE list = ? AND created_by = ?", .integer(list.no), .integer(account))
                    try rotationDue(list.no, db)
                }
                try db.run("DELETE FROM tokens WHERE account = ?", .integer(account))
                for sql in Self.deleteAccountSQL { try db.run(sql, .integer(account)) }
                return done
            }
        }
    }

    /// Deletes list `no` with its log, members and invites. Call inside a transaction.
    private func deleteList(_ no: Int64, _ db: Connection) throws {
        for table in ["pushes", "invites", "members", "replicas", "member_usage"] {
            try db.run("DELETE FROM \(table) WHERE list = ?", .integer(no))
        }
        logs.forget(no)
        try db.run("DELETE FROM lists WHERE no = ?", .integer(no))
    }

    static let insertInvite = SharedSQL.sql(SharedSQL.insertInvite + " RETURNING id") { "?\($0)" }
    static let listCountSQL = SharedSQL.sql(SharedSQL.listCount) { "?\($0)" }
    static let promoteSuccessorSQL = SharedSQL.sql(SharedSQL.promoteSuccessor) { "?\($0)" }
    static let deleteAccountSQL = SharedSQL.deleteAccountRows.map { SharedSQL.sql($0) { "?\($0)" } }
    static let dropInvitesUsedBySQL = SharedSQL.sql(SharedSQL.dropInvitesUsedBy) { "?\($0)" }
    static let freeMemberUsageSQL = SharedSQL.sql(SharedSQL.freeMemberUsage) { "?\($0)" }
    static let membersSQL = SharedSQL.sql(SharedSQL.members) { "?\($0)" }
    static let memberReplicasSQL = SharedSQL.sql(SharedSQL.memberReplicas) { "?\($0)" }
    static let dropInvitesAboveRole = SharedSQL.sql(SharedSQL.dropInvitesAboveRole) { "?\($0)" }

    public func saveInvite(
        hash: String, id: String, list: ListID, role: Role, createdBy: Int64, createdAt: Int64, expiresAt: Int64,
        uses: Int, limits: InviteLimits, title: String?, keyEpoch: Int64?
    ) throws {
        try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
                try checkInviteKeys(keyEpoch, of: no, db)
                // Expired invites go first: they count against nothing, and the table stays bounded.
                try db.run("DELETE FROM invites WHERE list = ? AND expires <= ?", .integer(no), .integer(createdAt))
                let stored = try db.query(
                    Self.insertInvite, .text(hash), .text(id), .blob(list.raw.bytes), .text(role.rawValue),
                    .integer(createdBy), .integer(createdAt), .integer(expiresAt), .integer(Int64(uses)),
                    .integer(Int64(limits.perList)), .integer(Int64(limits.perMember)), title.map { .text($0) } ?? .null
                ) { _ in true }
                guard stored.isEmpty else { return }
                let maker = try db.scalar(
                    "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(createdBy)
                )?.textValue.flatMap(Role.init(rawValue:))
                guard let maker, maker != .viewer, role <= maker else { throw StoreError.noSuchMember }
                throw StoreError.tooManyInvites
            }
        }
    }

    public func redeemInvite(hash: String, account: Int64, now: Int64, maxMembers: Int) throws -> MembershipRecord {
        // A new member: its list of memberships changes (non-members' roles are never cached).
        defer { heads.invalidateMemberships(of: account) }
        return try locked { db in
            try db.transaction {
                let rows = try db.query(
                    """
                    SELECT i.list, i.role, l.id, l.epoch, l.last_seq, l.encrypted FROM invites i
                    JOIN lists l ON l.no = i.list
                    WHERE i.hash = ? AND i.expires > ? AND i.uses_left > 0
                    """, .text(hash), .integer(now)
                ) { row in
                    (
                        row.int64(0), Role(rawValue: row.string(1) ?? "") ?? .viewer, row.blob(2), row.string(3) ?? "",
                        row.int64(4), row.int64(5) != 0
                    )
                }
                guard let (no, invited, id, epoch, cursor, encrypted) = rows.first else {
                    throw StoreError.noSuchInvite
                }
                let current = try db.scalar(
                    "SELECT role FROM members WHERE list = ? AND account = ?", .integer(no), .integer(account)
                )?.textValue.flatMap(Role.init(rawValue:))
                let usedBefore =
                    try db.scalar(
                        "SELECT 1 FROM invite_uses WHERE hash = ? AND account = ?", .text(hash), .integer(account))
                    != nil
                if usedBefore {
                    // The same code again: harmless for a member (another of its devices), refused for
                    // an account that was removed or left since.
                    guard let current else { throw StoreError.noSuchInvite }
                    return MembershipRecord(
                        list: ListID(raw: ID128(bytes: id)!), role: current, epoch: epoch, cursor: cursor,
                        encrypted: encrypted)
                }
                if let current {
                    // A member already: its role changes only through the members route, and the
                    // invite stays for whom it was meant.
                    return MembershipRecord(
                        list: ListID(raw: ID128(bytes: id)!), role: current, epoch: epoch, cursor: cursor,
                        encrypted: encrypted)
                }
                let members =
                    try db.scalar("SELECT count(*) FROM members WHERE list = ?", .integer(no))?.integerValue ?? 0
                if members >= maxMembers { throw StoreError.tooManyMembers }
                let role = invited
                try db.run(
                    "INSERT INTO members(list, account, role) VALUES (?, ?, ?)", .integer(no), .integer(account),
                    .text(role.rawValue))
                try db.run("UPDATE invites SET uses_left = uses_left - 1 WHERE hash = ?", .text(hash))
                try db.run("INSERT INTO invite_uses(hash, account) VALUES (?, ?)", .text(hash), .integer(account))
                try db.run("DELETE FROM invites WHERE hash = ? AND uses_left <= 0", .text(hash))
                return MembershipRecord(
                    list: ListID(raw: ID128(bytes: id)!), role: role, epoch: epoch, cursor: cursor, encrypted: encrypted
                )
            }
        }
    }

    public func invitePreview(hash: String, now: Int64, for account: Int64) throws -> Wire.InvitePreview? {
        try locked { db in
            try db.query(
                """
                SELECT l.id, i.title, i.role, coalesce(a.name, ''), i.expires,
                    EXISTS (SELECT 1 FROM members m WHERE m.list = i.list AND m.account = ?3), l.encrypted
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE i.hash = ?1 AND i.expires > ?2 AND i.uses_left > 0
                """, .text(hash), .integer(now), .integer(account)
            ) { row in
                Wire.InvitePreview(
                    list: ListID(raw: ID128(row.blob128(0))), title: row.string(1),
                    role: Role(rawValue: row.string(2) ?? "") ?? .viewer, createdBy: row.string(3) ?? "",
                    expiresAt: row.int64(4), member: row.int64(5) != 0, encrypted: row.int64(6) != 0)
            }.first
        }
    }

    public func invites(of list: ListID, now: Int64) throws -> [InviteRecord] {
        try locked { db in
            try db.query(
                """
                SELECT i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left
                FROM invites i JOIN lists l ON l.no = i.list LEFT JOIN accounts a ON a.id = i.created_by
                WHERE l.id = ? AND i.expires > ? AND i.uses_left > 0 ORDER BY i.created, i.id
                """, .blob(list.raw.bytes), .integer(now)
            ) { Self.inviteRecord($0) }
        }
    }

    static func inviteRecord(_ row: Row) -> InviteRecord {
        InviteRecord(
            id: row.string(0) ?? "", role: Role(rawValue: row.string(1) ?? "") ?? .viewer,
            createdBy: row.string(2) ?? "", created: row.int64(3), expires: row.int64(4),
            usesLeft: Int(row.int64(5)))
    }

    public func revokeInvite(id: String, of list: ListID) throws -> InviteRecord? {
        try locked { db in
            try db.transaction {
                guard let no = try listNo(list, db) else { throw StoreError.noSuchList }
                let found = try db.query(
                    """
                    SELECT i.id, i.role, coalesce(a.name, ''), i.created, i.expires, i.uses_left
                    FROM invites i LEFT JOIN accounts a ON a.id = i.created_by WHERE i.list = ? AND i.id = ?
                    """, .integer(no), .text(id)
                ) { Self.inviteRecord($0) }.first
                try db.run("DELETE FROM invites WHERE list = ? AND id = ?", .integer(no), .text(id))
                return found
            }
        }
    }
}
