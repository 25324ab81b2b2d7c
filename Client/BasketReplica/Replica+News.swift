public import BasketCore
import SQLite

/// What other devices did that this one has not shown yet: the items another member's device
/// added or changed since the list was last shown ("anna added 3 items"), and this device's own
/// writes that a later write of another replaced ("bob unchecked milk after you checked it"),
/// told once. Noticed as pulled pages are merged (``NewsWatch``), kept in the replica file
/// (tables `news` and `lost`), bounded; who a replica is comes from the members answer, kept too.
/// Nothing of it is sent or stored on the server.
struct NewsWatch {
    /// An item another replica added or changed.
    struct Seen {
        var list: ListID
        var item: ItemID
        var replica: ReplicaID
        var added: Bool
    }

    /// A write of this device another replica's later one replaced.
    struct Lost {
        var list: ListID
        var item: ItemID
        var field: Field
        var mine: Value
        var theirs: Value
        var replica: ReplicaID
    }

    /// This device's replica id: its writes are its own news, never another's.
    var me: ReplicaID

    /// Compares a row's registers before and after a merge.
    func notice(
        _ list: ListID, _ item: ItemID, before: [Register?], after: [Register?],
        into outcome: inout Replica.MergeOutcome
    ) {
        var seen: Seen?
        for field in Replica.fields {
            let code = Int(field.code)
            guard let now = after[code], now != before[code], now.version.replica != me else { continue }
            // A shop's registers (a trip's lesson above all) are the shop's, not news of an item.
            if field.isShopField { continue }
            if let was = before[code], was.version.replica == me, was.value != now.value, field != .typed {
                outcome.lost.append(
                    Lost(
                        list: list, item: item, field: field, mine: was.value, theirs: now.value,
                        replica: now.version.replica))
            }
            guard item != .list, field != .typed else { continue }
            let added =
                field == .deleted && now.value == .bool(false)
                && (before[Int(Field.deleted.code)].map { $0.value == .bool(true) } ?? true)
            if seen == nil || added { seen = Seen(list: list, item: item, replica: now.version.replica, added: added) }
        }
        if let seen { outcome.news.append(seen) }
    }
}

/// An item another member's device added or changed since the list was last shown here.
public struct NewsEntry: Hashable, Sendable {
    /// The item.
    public var item: ItemID
    /// The replica whose write it was.
    public var replica: ReplicaID
    /// Added (or brought back), else changed.
    public var added: Bool
}

/// A write of this device that another member's later write replaced (``Replica/takeLostWrites(limit:)``).
public struct LostWrite: Hashable, Sendable {
    /// The list.
    public var list: ListID
    /// The item (`ItemID.list` for the list's own registers).
    public var item: ItemID
    /// The register.
    public var field: Field
    /// The item's name now (the list's title for the list's own registers).
    public var name: String
    /// What this device wrote.
    public var mine: Value
    /// What replaced it.
    public var theirs: Value
    /// The replica whose write replaced it.
    public var replica: ReplicaID
}

extension Replica {
    /// The most items one list keeps marked as new, and lost writes kept until told.
    static let maxNews = 1_000
    static let maxLost = 200

    /// Keeps what a merge noticed (in its transaction).
    func keep(_ outcome: MergeOutcome, _ db: Connection) throws {
        if !outcome.news.isEmpty {
            var room: [ListID: Int] = [:]
            let insert = try db.cached(
                "INSERT OR REPLACE INTO news(list, item, replica, added) VALUES (?1, ?2, ?3, ?4)")
            for seen in outcome.news {
                if room[seen.list] == nil {
                    let held = try db.scalar("SELECT count(*) FROM news WHERE list = ?", .blob(seen.list.raw.bytes))
                    room[seen.list] = Self.maxNews - Int(held?.integerValue ?? 0)
                }
                guard room[seen.list]! > 0 else { continue }
                room[seen.list]! -= 1
                try insert.bind([
                    .blob(seen.list.raw.bytes), .blob(seen.item.raw.bytes),
                    .integer(Int64(bitPattern: seen.replica.rawValue)), .integer(seen.added ? 1 : 0),
                ])
                try insert.runToCompletion()
            }
        }
        guard !outcome.lost.isEmpty else { return }
        for lost in outcome.lost.suffix(Self.maxLost) {
            try db.run(
                "INSERT INTO lost(list, item, field, mine, theirs, replica) VALUES (?, ?, ?, ?, ?, ?)",
                .blob(lost.list.raw.bytes), .blob(lost.item.raw.bytes), .integer(Int64(lost.field.code)),
                Self.stored(lost.mine), Self.stored(lost.theirs), .integer(Int64(bitPattern: lost.replica.rawValue)))
        }
        try db.run("DELETE FROM lost WHERE seq <= (SELECT max(seq) FROM lost) - ?", .integer(Int64(Self.maxLost)))
    }

    /// A register's value as kept in `lost`: "t…" text, "1"/"0" a flag, NULL cleared.
    static func stored(_ value: Value) -> SQLValue {
        switch value {
        case .null: .null
        case .bool(let flag): .text(flag ? "1" : "0")
        case .text(let text): .text("t" + text)
        }
    }

    static func value(_ stored: String?) -> Value {
        guard let stored else { return .null }
        if stored == "1" { return .bool(true) }
        if stored == "0" { return .bool(false) }
        return .text(String(stored.dropFirst()))
    }

    /// The items of `list` another member's device added or changed since it was last shown here.
    public func news(in list: ListID) throws -> [NewsEntry] {
        try locked { db in
            try db.query("SELECT item, replica, added FROM news WHERE list = ?", .blob(list.raw.bytes)) { row in
                NewsEntry(
                    item: ItemID(raw: ID128(row.blob128(0))),
                    replica: ReplicaID(rawValue: UInt64(bitPattern: row.int64(1))),
                    added: row.int64(2) != 0)
            }
        }
    }

    /// The list was shown: what was new is no longer.
    public func clearNews(in list: ListID) throws {
        try locked { try $0.run("DELETE FROM news WHERE list = ?", .blob(list.raw.bytes)) }
    }

    /// This device's writes that another member's later ones replaced, oldest first, at most
    /// `limit`: taken, so each is told once.
    public func takeLostWrites(limit: Int = 50) throws -> [LostWrite] {
        try locked { db in
            try db.transaction {
                let rows = try db.query(
                    """
                    SELECT l.seq, l.list, l.item, l.field, l.mine, l.theirs, l.replica, i.name, s.title
                    FROM lost l JOIN lists s ON s.id = l.list LEFT JOIN items i ON i.list = s.no AND i.id = l.item
                    ORDER BY l.seq LIMIT ?
                    """, .integer(Int64(limit))
                ) { row -> (Int64, LostWrite?) in
                    let item = ItemID(raw: ID128(row.blob128(2)))
                    guard let field = Field(code: UInt8(truncatingIfNeeded: row.int64(3))) else {
                        return (row.int64(0), nil)
                    }
                    return (
                        row.int64(0),
                        LostWrite(
                            list: ListID(raw: ID128(row.blob128(1))), item: item, field: field,
                            name: (item == .list ? row.string(8) : row.string(7)) ?? "",
                            mine: Self.value(row.string(4)), theirs: Self.value(row.string(5)),
                            replica: ReplicaID(rawValue: UInt64(bitPattern: row.int64(6))))
                    )
                }
                if let last = rows.last?.0 { try db.run("DELETE FROM lost WHERE seq <= ?", .integer(last)) }
                return rows.compactMap(\.1)
            }
        }
    }

    /// Keeps who each replica id of `list` is (the members answer), for news and lost writes.
    public func saveMembers(_ members: [Wire.Member], of list: ListID) throws {
        var names: [String: String] = [:]
        for member in members { for replica in member.replicas ?? [] { names[replica] = member.account } }
        let text = names.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        try setSetting("members.\(list)", text)
    }

    /// Who each replica id of `list` is, as the members answer last said.
    public func memberNames(of list: ListID) throws -> [ReplicaID: String] {
        var names: [ReplicaID: String] = [:]
        for line in (try setting("members.\(list)") ?? "").split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let replica = ReplicaID(hex: parts[0]) { names[replica] = String(parts[1]) }
        }
        return names
    }
}
