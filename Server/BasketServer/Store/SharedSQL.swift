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
