public import BasketCore
import Postgres

// PostgresStore: account key pairs and envelopes (``KeyStore``).
extension PostgresStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "$\($0)" } }

    public func accountKeys(of account: Int64) throws -> StoredAccountKeys? {
        try connected { db in
            let rows = try db.prepared(Self.sql(KeySQL.accountKeys), ["\(account)"])
            guard rows.count == 1 else { return nil }
            return StoredAccountKeys(
                publicKey: rows.string(0, 0) ?? "", wrappedKey: rows.string(0, 1) ?? "",
                recoveryKey: rows.string(0, 2) ?? "", recoveryHash: rows.string(0, 3) ?? "")
        }
    }

    public func setAccountKeys(_ keys: StoredAccountKeys, of account: Int64) throws {
        try connected { db in
            let changed = try db.prepared(
                Self.sql(KeySQL.setAccountKeys) + " RETURNING id",
                ["\(account)", keys.publicKey, keys.wrappedKey, keys.recoveryKey, keys.recoveryHash])
            guard changed.count == 1 else { throw StoreError.keysExist }
        }
    }

    public func setPassword(hash: String, wrappedKey: String?, of account: Int64) throws -> Bool {
        try connected {
            // Other instances forget the account's cached sessions, as after any password change.
            try $0.prepared(
                Self.notifyingAccounts(Self.sql(KeySQL.setPassword) + " RETURNING id AS account"),
                ["\(account)", hash, wrappedKey]
            ).count == 1
        }
    }

    public func deliverEnvelopes(_ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64)
        throws
    {
        try connected { db in
            try db.transaction {
                // The sender's membership row is locked: a removal waits for the delivery, or the
                // delivery sees the removal.
                let sender = try db.prepared(
                    Self.sql(KeySQL.sender) + " FOR SHARE OF m", [Self.listParameter(list), "\(account)"])
                guard sender.count == 1 else { throw StoreError.noSuchList }
                let (role, no) = (sender.string(0, 0) ?? "", sender.int64(0, 1))
                guard sender.bool(0, 2) == true else { throw StoreError.notEncrypted }
                for envelope in envelopes {
                    let found = try db.prepared(
                        Self.sql(KeySQL.recipient) + " FOR SHARE OF m", ["\(no)", envelope.account])
                    guard found.count == 1 else { throw StoreError.noSuchMember }
                    let recipient = found.int64(0, 0)
                    if recipient != account && role == Role.viewer.rawValue { throw StoreError.noSuchMember }
                    guard found.string(0, 1) != nil else { throw StoreError.noPublicKey }
                    _ = try db.prepared(Self.sql(KeySQL.upsert), ["\(no)", "\(recipient)", envelope.envelope])
                }
            }
        }
    }

    public func envelope(of list: ListID, for account: Int64) throws -> String? {
        try connected { db in
            let rows = try db.prepared(Self.sql(KeySQL.envelope), [Self.listParameter(list), "\(account)"])
            guard rows.count == 1 else { throw StoreError.noSuchList }
            return rows.string(0, 0)
        }
    }
}
