public import BasketCore
import Postgres

// PostgresStore: add-only keys and inboxes (``InboxStore``).
extension PostgresStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "$\($0)" } }

    public func saveAddKey(
        hash: String, id: String, list: ListID, name: String, createdBy: Int64, now: Int64, maxPerList: Int
    ) throws {
        try connected { db in
            try db.transaction {
                let made = try db.prepared(
                    Self.sql(InboxSQL.insertKey) + " RETURNING id",
                    [id, hash, Self.listParameter(list), name, "\(createdBy)", "\(now)", "\(maxPerList)"])
                guard made.count == 0 else { return }
                let role = try db.prepared(Self.sql(InboxSQL.isMember), [Self.listParameter(list), "\(createdBy)"])
                throw role.count == 0 || role.string(0, 0) == "viewer"
                    ? StoreError.noSuchMember : StoreError.tooManyInvites
            }
        }
    }

    private static func keys(_ rows: Rows, list: ListID) -> [AddKeyRecord] {
        (0..<rows.count).map { row in
            AddKeyRecord(
                id: rows.string(row, 0) ?? "", list: list, name: rows.string(row, 1) ?? "",
                createdBy: rows.string(row, 2) ?? "", createdByID: rows.int64(row, 3), created: rows.int64(row, 4))
        }
    }

    public func addKeys(of list: ListID) throws -> [AddKeyRecord] {
        try connected { db in
            Self.keys(try db.prepared(Self.sql(InboxSQL.keys), [Self.listParameter(list)]), list: list)
        }
    }

    public func revokeAddKey(id: String, of list: ListID) throws -> AddKeyRecord? {
        try connected { db in
            try db.transaction {
                let key = Self.keys(try db.prepared(Self.sql(InboxSQL.keys), [Self.listParameter(list)]), list: list)
                    .first { $0.id == id }
                guard let key else { return nil }
                _ = try db.prepared(Self.sql(InboxSQL.revokeKey), [id, Self.listParameter(list)])
                return key
            }
        }
    }

    public func addKey(hash: String) throws -> AddKeyRecord? {
        try connected { db in
            let rows = try db.prepared(Self.sql(InboxSQL.keyByHash), [hash])
            guard rows.count == 1, let list = rows.bytes(0, 1).flatMap(ID128.init(bytes:)) else { return nil }
            return AddKeyRecord(
                id: rows.string(0, 0) ?? "", list: ListID(raw: list), name: rows.string(0, 2) ?? "",
                createdBy: rows.string(0, 3) ?? "", createdByID: rows.int64(0, 4), created: rows.int64(0, 5))
        }
    }

    public func putInInbox(id: String, list: ListID, name: String, text: String, now: Int64, maxWaiting: Int) throws
        -> Bool
    {
        try connected { db in
            try db.transaction {
                let put =
                    try db.prepared(
                        Self.sql(InboxSQL.put) + " RETURNING id",
                        [id, Self.listParameter(list), name, text, "\(now)", "\(maxWaiting)"]
                    ).count == 1
                if put {
                    _ = try db.prepared(
                        "SELECT pg_notify('\(Self.channel)', 'inbox ' || $1 || ' ' || $2)",
                        [Hex.encode(list.raw.bytes), "\(now)"])
                }
                return put
            }
        }
    }

    private static func entries(_ rows: Rows) -> [Wire.InboxEntry] {
        (0..<rows.count).map { row in
            Wire.InboxEntry(
                id: rows.string(row, 0) ?? "", text: rows.string(row, 1) ?? "", from: rows.string(row, 2) ?? "",
                at: rows.int64(row, 3))
        }
    }

    public func inbox(of list: ListID) throws -> [Wire.InboxEntry] {
        try connected { db in Self.entries(try db.prepared(Self.sql(InboxSQL.entries), [Self.listParameter(list)])) }
    }

    public func takeFromInbox(id: String, of list: ListID) throws -> Wire.InboxEntry? {
        try connected { db in
            Self.entries(try db.prepared(Self.sql(InboxSQL.take), [id, Self.listParameter(list)])).first
        }
    }
}
