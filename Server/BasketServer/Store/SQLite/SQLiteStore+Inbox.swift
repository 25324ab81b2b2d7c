public import BasketCore
import SQLite

// SQLiteStore: add-only keys and inboxes (``InboxStore``).
extension SQLiteStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "?\($0)" } }

    public func saveAddKey(
        hash: String, id: String, list: ListID, name: String, createdBy: Int64, now: Int64, maxPerList: Int
    ) throws {
        try locked { db in
            try db.transaction {
                try db.run(
                    Self.sql(InboxSQL.insertKey), .text(id), .text(hash), .blob(list.raw.bytes), .text(name),
                    .integer(createdBy), .integer(now), .integer(Int64(maxPerList)))
                guard db.changes == 0 else { return }
                let role = try db.scalar(Self.sql(InboxSQL.isMember), .blob(list.raw.bytes), .integer(createdBy))
                throw role?.textValue.map { $0 == "viewer" } ?? true
                    ? StoreError.noSuchMember : StoreError.tooManyInvites
            }
        }
    }

    public func addKeys(of list: ListID) throws -> [AddKeyRecord] {
        try reading { db in
            try db.query(Self.sql(InboxSQL.keys), .blob(list.raw.bytes)) { row in
                AddKeyRecord(
                    id: row.string(0) ?? "", list: list, name: row.string(1) ?? "", createdBy: row.string(2) ?? "",
                    createdByID: row.int64(3), created: row.int64(4))
            }
        }
    }

    public func revokeAddKey(id: String, of list: ListID) throws -> AddKeyRecord? {
        try locked { db in
            let key = try db.query(Self.sql(InboxSQL.keys), .blob(list.raw.bytes)) { row in
                AddKeyRecord(
                    id: row.string(0) ?? "", list: list, name: row.string(1) ?? "", createdBy: row.string(2) ?? "",
                    createdByID: row.int64(3), created: row.int64(4))
            }.first { $0.id == id }
            guard let key else { return nil }
            try db.run(Self.sql(InboxSQL.revokeKey), .text(id), .blob(list.raw.bytes))
            return key
        }
    }

    public func addKey(hash: String) throws -> AddKeyRecord? {
        try reading { db in
            try db.query(Self.sql(InboxSQL.keyByHash), .text(hash)) { row in
                AddKeyRecord(
                    id: row.string(0) ?? "", list: ListID(raw: ID128(row.blob128(1))), name: row.string(2) ?? "",
                    createdBy: row.string(3) ?? "", createdByID: row.int64(4), created: row.int64(5))
            }.first
        }
    }

    public func putInInbox(id: String, list: ListID, name: String, text: String, now: Int64, maxWaiting: Int) throws
        -> Bool
    {
        try locked { db in
            try db.run(
                Self.sql(InboxSQL.put), .text(id), .blob(list.raw.bytes), .text(name), .text(text), .integer(now),
                .integer(Int64(maxWaiting)))
            return db.changes == 1
        }
    }

    public func inbox(of list: ListID) throws -> [Wire.InboxEntry] {
        try reading { db in
            try db.query(Self.sql(InboxSQL.entries), .blob(list.raw.bytes)) { row in
                Wire.InboxEntry(
                    id: row.string(0) ?? "", text: row.string(1) ?? "", from: row.string(2) ?? "", at: row.int64(3))
            }
        }
    }

    public func takeFromInbox(id: String, of list: ListID) throws -> Wire.InboxEntry? {
        try locked { db in
            try db.query(Self.sql(InboxSQL.take), .text(id), .blob(list.raw.bytes)) { row in
                Wire.InboxEntry(
                    id: row.string(0) ?? "", text: row.string(1) ?? "", from: row.string(2) ?? "", at: row.int64(3))
            }.first
        }
    }
}
