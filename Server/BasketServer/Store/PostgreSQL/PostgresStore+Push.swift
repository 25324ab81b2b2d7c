public import BasketCore
import Postgres

// PostgresStore: Web Push's key, subscriptions and slots (``PushStore``).
extension PostgresStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "$\($0)" } }

    public func pushKey(orSave fresh: StoredPushKey) throws -> StoredPushKey {
        try connected { db in
            _ = try db.prepared(
                Self.sql(PushSQL.insertKey),
                [
                    PostgresConnection.bytea(fresh.privateKey), PostgresConnection.bytea(fresh.publicKey),
                    "\(fresh.created)",
                ])
            let rows = try db.prepared(PushSQL.key)
            guard rows.count == 1, let privateKey = rows.bytes(0, 0), let publicKey = rows.bytes(0, 1) else {
                return fresh
            }
            return StoredPushKey(privateKey: privateKey, publicKey: publicKey, created: rows.int64(0, 2))
        }
    }

    public func rotatePushKey(_ fresh: StoredPushKey) throws -> Int {
        try connected { db in
            try db.transaction {
                let ended = Int(try db.prepared(PushSQL.countSubscriptions).int64(0, 0))
                _ = try db.prepared(PushSQL.deleteEverySubscription)
                let parameters = [
                    PostgresConnection.bytea(fresh.privateKey), PostgresConnection.bytea(fresh.publicKey),
                    "\(fresh.created)",
                ]
                _ = try db.prepared(Self.sql(PushSQL.insertKey), parameters)
                _ = try db.prepared(Self.sql(PushSQL.replaceKey), parameters)
                return ended
            }
        }
    }

    public func savePushSubscription(_ subscription: PushSubscriptionRecord, maxPerAccount: Int) throws
        -> PushSubscriptionRecord
    {
        try connected { db in
            try db.transaction {
                let s = subscription
                _ = try db.prepared(Self.sql(PushSQL.deleteByEndpoint), [s.endpoint])
                _ = try db.prepared(
                    Self.sql(PushSQL.insertSubscription),
                    [
                        s.id, "\(s.account)", s.tokenHash, s.endpoint, s.p256dh, s.auth, "\(s.kinds.rawValue)",
                        "\(s.created)",
                    ])
                var stored = s
                stored.lists = try s.lists.filter { list in
                    try db.prepared(
                        Self.sql(PushSQL.insertList) + " RETURNING list",
                        [Self.listParameter(list), s.id, "\(s.account)"]
                    ).count == 1
                }
                _ = try db.prepared(Self.sql(PushSQL.trim), ["\(s.account)", "\(maxPerAccount)"])
                return stored
            }
        }
    }

    public func pushSubscriptions(of account: Int64) throws -> [PushSubscriptionRecord] {
        try connected { db in
            let rows = try db.prepared(Self.sql(PushSQL.subscriptionsOf), ["\(account)"])
            return try (0..<rows.count).map { row in
                let id = rows.string(row, 0) ?? ""
                let lists = try db.prepared(Self.sql(PushSQL.listsOf), [id])
                return PushSubscriptionRecord(
                    id: id, account: account, tokenHash: rows.string(row, 1) ?? "", endpoint: rows.string(row, 2) ?? "",
                    p256dh: rows.string(row, 3) ?? "", auth: rows.string(row, 4) ?? "",
                    kinds: PushKinds(rawValue: rows.int64(row, 5)),
                    lists: (0..<lists.count).compactMap {
                        lists.bytes($0, 0).flatMap(ID128.init(bytes:)).map(ListID.init(raw:))
                    },
                    created: rows.int64(row, 6))
            }
        }
    }

    public func deletePushSubscription(id: String, account: Int64) throws -> Bool {
        try connected { db in
            try db.prepared(Self.sql(PushSQL.deleteByID) + " RETURNING id", [id, "\(account)"]).count == 1
        }
    }

    public func deletePushSubscription(endpoint: String) throws {
        try connected { db in _ = try db.prepared(Self.sql(PushSQL.deleteByEndpoint), [endpoint]) }
    }

    public func pushTargets(of list: ListID, tokensUsedSince: Int64, madeSince: Int64, limit: Int) throws
        -> [PushTarget]
    {
        try connected { db in
            let rows = try db.prepared(
                Self.sql(PushSQL.targets), [Self.listParameter(list), "\(tokensUsedSince)", "\(madeSince)", "\(limit)"])
            return (0..<rows.count).map { row in
                PushTarget(
                    id: rows.string(row, 0) ?? "", account: rows.int64(row, 1), endpoint: rows.string(row, 2) ?? "",
                    p256dh: rows.string(row, 3) ?? "", auth: rows.string(row, 4) ?? "",
                    kinds: PushKinds(rawValue: rows.int64(row, 5)))
            }
        }
    }

    public func claimPushSlot(list: ListID, now: Int64, interval: Int64) throws -> Int64? {
        try connected { db in
            let id = Self.listParameter(list)
            if try db.prepared(Self.sql(PushSQL.claimSlot), [id, "\(now)", "\(interval)"]).count == 1 { return nil }
            let rows = try db.prepared(Self.sql(PushSQL.slot), [id])
            return rows.count == 1 ? rows.int64(0, 0) : now + interval
        }
    }
}

// PostgresStore: who is shopping (``ShoppingStore``); each change is told to every instance.
extension PostgresStore {
    public func startShopping(list: ListID, account: Int64, shop: String?, now: Int64, until: Int64) throws {
        try connected { db in
            try db.transaction {
                _ = try db.prepared(
                    Self.sql(ShoppingSQL.start), [Self.listParameter(list), "\(account)", shop, "\(now)", "\(until)"])
                try Self.notifyShopping(list, at: now, db)
            }
        }
    }

    public func stopShopping(list: ListID, account: Int64, now: Int64, bought: Int) throws -> Bool {
        try connected { db in
            try db.transaction {
                let stopped =
                    try db.prepared(
                        Self.sql(ShoppingSQL.stop) + " RETURNING account",
                        [Self.listParameter(list), "\(account)", "\(now)", "\(bought)"]
                    ).count == 1
                if stopped { try Self.notifyShopping(list, at: now, db) }
                return stopped
            }
        }
    }

    public func shopping(of list: ListID, now: Int64, endedSince: Int64) throws -> [Wire.ShoppingStatus] {
        try connected { db in
            let rows = try db.prepared(
                Self.sql(ShoppingSQL.statuses), [Self.listParameter(list), "\(now)", "\(endedSince)"])
            return (0..<rows.count).map { row in
                Wire.ShoppingStatus(
                    who: rows.string(row, 0) ?? "", shop: rows.string(row, 1), since: rows.int64(row, 2),
                    until: rows.int64(row, 3), ended: rows.string(row, 4) == nil ? nil : rows.int64(row, 4),
                    bought: rows.string(row, 5) == nil ? nil : Int(rows.int64(row, 5)))
            }
        }
    }

    /// Tells every instance, at commit, that who is shopping for `list` changed at `now`.
    static func notifyShopping(_ list: ListID, at now: Int64, _ db: PostgresConnection) throws {
        _ = try db.prepared(
            "SELECT pg_notify('\(channel)', 'shopping ' || $1 || ' ' || $2)", [Hex.encode(list.raw.bytes), "\(now)"])
    }
}
