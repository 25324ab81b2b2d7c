public import BasketCore
import SQLite

// SQLiteStore: Web Push's key, subscriptions and slots (``PushStore``).
extension SQLiteStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "?\($0)" } }

    public func pushKey(orSave fresh: StoredPushKey) throws -> StoredPushKey {
        try locked { db in
            try db.run(
                Self.sql(PushSQL.insertKey), .blob(fresh.privateKey), .blob(fresh.publicKey), .integer(fresh.created))
            return try db.query(Self.sql(PushSQL.key)) {
                StoredPushKey(privateKey: $0.blob(0), publicKey: $0.blob(1), created: $0.int64(2))
            }.first ?? fresh
        }
    }

    public func rotatePushKey(_ fresh: StoredPushKey) throws -> Int {
        try locked { db in
            try db.transaction {
                let ended = Int(try db.scalar(PushSQL.countSubscriptions)?.integerValue ?? 0)
                try db.run(Self.sql(PushSQL.deleteEverySubscription))
                try db.run(
                    Self.sql(PushSQL.insertKey), .blob(fresh.privateKey), .blob(fresh.publicKey),
                    .integer(fresh.created))
                try db.run(
                    Self.sql(PushSQL.replaceKey), .blob(fresh.privateKey), .blob(fresh.publicKey),
                    .integer(fresh.created))
                return ended
            }
        }
    }

    public func savePushSubscription(_ subscription: PushSubscriptionRecord, maxPerAccount: Int) throws
        -> PushSubscriptionRecord
    {
        try locked { db in
            try db.transaction {
                let s = subscription
                try db.run(Self.sql(PushSQL.deleteByEndpoint), .text(s.endpoint))
                try db.run(
                    Self.sql(PushSQL.insertSubscription), .text(s.id), .integer(s.account), .text(s.tokenHash),
                    .text(s.endpoint), .text(s.p256dh), .text(s.auth), .integer(s.kinds.rawValue), .integer(s.created))
                var stored = s
                stored.lists = try s.lists.filter { list in
                    try db.run(
                        Self.sql(PushSQL.insertList), .blob(list.raw.bytes), .text(s.id), .integer(s.account))
                    return db.changes == 1
                }
                try db.run(Self.sql(PushSQL.trim), .integer(s.account), .integer(Int64(maxPerAccount)))
                return stored
            }
        }
    }

    public func pushSubscriptions(of account: Int64) throws -> [PushSubscriptionRecord] {
        try reading(snapshot: true) { db in
            let rows = try db.query(Self.sql(PushSQL.subscriptionsOf), .integer(account)) { row in
                PushSubscriptionRecord(
                    id: row.string(0) ?? "", account: account, tokenHash: row.string(1) ?? "",
                    endpoint: row.string(2) ?? "", p256dh: row.string(3) ?? "", auth: row.string(4) ?? "",
                    kinds: PushKinds(rawValue: row.int64(5)), lists: [], created: row.int64(6))
            }
            return try rows.map { record in
                var record = record
                record.lists = try db.query(Self.sql(PushSQL.listsOf), .text(record.id)) {
                    ListID(raw: ID128(bytes: $0.blob(0))!)
                }
                return record
            }
        }
    }

    public func deletePushSubscription(id: String, account: Int64) throws -> Bool {
        try locked { db in
            try db.run(Self.sql(PushSQL.deleteByID), .text(id), .integer(account))
            return db.changes == 1
        }
    }

    public func deletePushSubscription(endpoint: String) throws {
        try locked { try $0.run(Self.sql(PushSQL.deleteByEndpoint), .text(endpoint)) }
    }

    public func pushTargets(of list: ListID, tokensUsedSince: Int64, madeSince: Int64, limit: Int) throws
        -> [PushTarget]
    {
        try reading { db in
            try db.query(
                Self.sql(PushSQL.targets), .blob(list.raw.bytes), .integer(tokensUsedSince), .integer(madeSince),
                .integer(Int64(limit))
            ) { row in
                PushTarget(
                    id: row.string(0) ?? "", account: row.int64(1), endpoint: row.string(2) ?? "",
                    p256dh: row.string(3) ?? "", auth: row.string(4) ?? "", kinds: PushKinds(rawValue: row.int64(5)))
            }
        }
    }

    public func claimPushSlot(list: ListID, now: Int64, interval: Int64) throws -> Int64? {
        try locked { db in
            let claimed = try db.query(
                Self.sql(PushSQL.claimSlot), .blob(list.raw.bytes), .integer(now), .integer(interval)
            ) { $0.int64(0) }
            if !claimed.isEmpty { return nil }
            return try db.scalar(Self.sql(PushSQL.slot), .blob(list.raw.bytes))?.integerValue ?? now + interval
        }
    }
}

// SQLiteStore: who is shopping (``ShoppingStore``).
extension SQLiteStore {
    public func startShopping(list: ListID, account: Int64, shop: String?, now: Int64, until: Int64) throws {
        try locked { db in
            try db.run(
                SharedSQL.sql(ShoppingSQL.start) { "?\($0)" }, .blob(list.raw.bytes), .integer(account),
                shop.map { .text($0) } ?? .null, .integer(now), .integer(until))
        }
    }

    public func stopShopping(list: ListID, account: Int64, now: Int64, bought: Int) throws -> Bool {
        try locked { db in
            try db.run(
                SharedSQL.sql(ShoppingSQL.stop) { "?\($0)" }, .blob(list.raw.bytes), .integer(account), .integer(now),
                .integer(Int64(bought)))
            return db.changes == 1
        }
    }

    public func shopping(of list: ListID, now: Int64, endedSince: Int64) throws -> [Wire.ShoppingStatus] {
        try reading { db in
            try db.query(
                SharedSQL.sql(ShoppingSQL.statuses) { "?\($0)" }, .blob(list.raw.bytes), .integer(now),
                .integer(endedSince)
            ) { row in
                Wire.ShoppingStatus(
                    who: row.string(0) ?? "", shop: row.string(1), since: row.int64(2), until: row.int64(3),
                    ended: row.value(4) == .null ? nil : row.int64(4),
                    bought: row.value(5) == .null ? nil : Int(row.int64(5)))
            }
        }
    }
}
