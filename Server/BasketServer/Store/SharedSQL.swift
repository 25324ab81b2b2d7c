/// SQL both stores run the same way, written once with `{n}` for the n-th parameter
/// (``sql(_:placeholder:)`` makes SQLite's `?n` or PostgreSQL's `$n` of it).
enum SharedSQL {
    /// Replaces each `{n}` of `template` with `placeholder(n)`.
    static func sql(_ template: String, placeholder: (Int) -> String) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}"),
            let number = Int(rest[rest.index(after: open)..<close])
        {
            out += rest[..<open]
            out += placeholder(number)
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// Withdraws the invites to list {1} (its row number) that account {2} joined with: a member
    /// removed by an owner must not come back as a new account with the same multi-use code.
    static let dropInvitesUsedBy = """
        DELETE FROM invites WHERE list = {1} AND hash IN (SELECT hash FROM invite_uses WHERE account = {2})
        """

    /// Takes {3} items and {4} bytes off the share of list {1} (its row number) held by the
    /// account replica {2} is bound to: what compaction gave back of that member's writes. Never
    /// below zero (writes that shrank the list were never counted).
    static let freeMemberUsage = """
        UPDATE member_usage SET items = CASE WHEN items > {3} THEN items - {3} ELSE 0 END,
            bytes = CASE WHEN bytes > {4} THEN bytes - {4} ELSE 0 END
        WHERE list = {1} AND account = (SELECT account FROM replicas WHERE list = {1} AND replica = {2})
        """

    /// Makes another member of list {1} (its row number) than account {2} its owner: an editor
    /// first, then a viewer; among them the oldest account (the one that signed up first).
    static let promoteSuccessor = """
        UPDATE members SET role = 'owner' WHERE list = {1} AND account = (
            SELECT account FROM members WHERE list = {1} AND account <> {2}
            ORDER BY CASE role WHEN 'editor' THEN 0 ELSE 1 END, account LIMIT 1)
        """

    /// The rows of account {1} that go with it, once it is in no list (in this order); the ids its
    /// devices wrote under stay bound to it. PostgreSQL tells the other instances of the tokens
    /// itself.
    static let deleteAccountRows = [
        "DELETE FROM invite_uses WHERE account = {1}",
        "DELETE FROM member_usage WHERE account = {1}",
        "UPDATE lists SET created_by = NULL WHERE created_by = {1}",
        "DELETE FROM accounts WHERE id = {1}",
    ]

    /// How many lists account {1} made or is a member of: two index ranges (lists by maker,
    /// memberships by account), each as long as the account's own lists, never a scan of every list.
    static let listCount = """
        SELECT count(*) FROM (SELECT no FROM lists WHERE created_by = {1}
            UNION SELECT list FROM members WHERE account = {1}) AS mine
        """

    /// The members of the list whose id is {1}, by name, with their account ids and the list's row.
    static let members = """
        SELECT a.name, m.role, m.account, l.no, a.public_key FROM members m JOIN lists l ON l.no = m.list
        JOIN accounts a ON a.id = m.account WHERE l.id = {1} ORDER BY a.name
        """

    /// The first ``MemberRecord/maxReplicas`` replica ids account {2} bound to list {1} (its row):
    /// an index range (`replicas_by_account`) however many it bound.
    static let memberReplicas = """
        SELECT replica FROM replicas WHERE list = {1} AND account = {2} ORDER BY replica LIMIT \(MemberRecord.maxReplicas)
        """

    /// Inserts an invite only while its maker ({5}) is a member of the list ({3}, its id) allowed
    /// to make it, and while the list and the maker have fewer working invites at {6} (now) than
    /// {9} and {10}; returns the invite's id when it was stored. Parameters: hash, id, list id,
    /// role, maker, created, expires, uses, most per list, most per member, title. PostgreSQL appends a
    /// lock of the list's and the member's rows (``PostgresStore``), so a removal or a change of
    /// role waits for it or it sees them.
    static let insertInvite = """
        INSERT INTO invites(hash, id, list, role, created_by, created, expires, uses_left, title)
        SELECT {1}, {2}, l.no, {4}, m.account, CAST({6} AS BIGINT), CAST({7} AS BIGINT), CAST({8} AS BIGINT),
            CAST({11} AS TEXT)
        FROM lists l JOIN members m ON m.list = l.no AND m.account = CAST({5} AS BIGINT)
        WHERE l.id = {3} AND (m.role = 'owner' OR (m.role = 'editor' AND {4} <> 'owner'))
            AND (SELECT count(*) FROM invites i
                WHERE i.list = l.no AND i.expires > CAST({6} AS BIGINT) AND i.uses_left > 0) < CAST({9} AS BIGINT)
            AND (SELECT count(*) FROM invites i
                WHERE i.list = l.no AND i.created_by = m.account AND i.expires > CAST({6} AS BIGINT)
                AND i.uses_left > 0) < CAST({10} AS BIGINT)
        """

    /// Withdraws the invites member {2} made to list {1} (its row number) for a role above {3}, the
    /// role it has now: all of a viewer's, an editor's owner invites.
    static let dropInvitesAboveRole = """
        DELETE FROM invites WHERE list = {1} AND created_by = {2}
            AND (CASE role WHEN 'owner' THEN 2 WHEN 'editor' THEN 1 ELSE 0 END)
                > (CASE {3} WHEN 'owner' THEN 2 WHEN 'editor' THEN 1 ELSE -1 END)
        """
}
