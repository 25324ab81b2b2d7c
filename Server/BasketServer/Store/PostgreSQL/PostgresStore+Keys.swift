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

    public func deliverEnvelopes(
        _ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64, rotatingTo epoch: Int64?
    ) throws {
        try connected { db in
            try db.transaction {
                // A rotation locks the list's row first, as pushes, removals and invites do: they
                // wait for it, or it sees them.
                if epoch != nil {
                    _ = try db.prepared("SELECT 1 FROM lists WHERE id = $1 FOR UPDATE", [Self.listParameter(list)])
                }
                // The sender's membership row is locked: a removal waits for the delivery, or the
                // delivery sees the removal.
                let sender = try db.prepared(
                    Self.sql(KeySQL.sender) + " FOR SHARE OF m", [Self.listParameter(list), "\(account)"])
                guard sender.count == 1 else { throw StoreError.noSuchList }
                let (role, no) = (sender.string(0, 0) ?? "", sender.int64(0, 1))
                guard sender.bool(0, 2) == true else { throw StoreError.notEncrypted }
                if let epoch {
                    let rows = try db.prepared(Self.sql(KeySQL.keyedMembers), ["\(no)"])
                    try KeySQL.checkRotation(
                        to: epoch, role: role, keyEpoch: sender.int64(0, 3), pushEpoch: sender.int64(0, 4),
                        keyed: (0..<rows.count).map { rows.string($0, 0) ?? "" }, envelopes: envelopes)
                }
                for envelope in envelopes {
                    let found = try db.prepared(
                        Self.sql(KeySQL.recipient) + " FOR SHARE OF m", ["\(no)", envelope.account])
                    guard found.count == 1 else {
                        // A rotation's members changed since its device asked: it asks again.
                        throw epoch == nil ? StoreError.noSuchMember : StoreError.staleKey(keyEpoch: sender.int64(0, 3))
                    }
                    let recipient = found.int64(0, 0)
                    if recipient != account && role != Role.owner.rawValue && epoch == nil {
                        throw StoreError.noSuchMember
                    }
                    guard found.string(0, 1) != nil else { throw StoreError.noPublicKey }
                    _ = try db.prepared(Self.sql(KeySQL.upsert), ["\(no)", "\(recipient)", envelope.envelope])
                }
                if let epoch {
                    _ = try db.prepared(Self.sql(KeySQL.rotated), ["\(no)", "\(epoch)"])
                    _ = try db.prepared(Self.sql(KeySQL.dropInvites), ["\(no)"])
                }
            }
        }
    }

    public func envelope(of list: ListID, for account: Int64) throws -> StoredEnvelope {
        try connected { db in
            let rows = try db.prepared(Self.sql(KeySQL.envelope), [Self.listParameter(list), "\(account)"])
            guard rows.count == 1 else { throw StoreError.noSuchList }
            return StoredEnvelope(
                envelope: rows.string(0, 0), keyEpoch: rows.int64(0, 1),
                rotationDue: rows.int64(0, 2) > rows.int64(0, 1))
        }
    }

    /// A member left list `no` or was removed: an encrypted one awaits rotation
    /// (``KeySQL/rotationDue``). Call inside the removal's transaction, under the list's row lock.
    static func rotationDue(_ no: String?, _ db: PostgresConnection) throws {
        for sql in KeySQL.rotationDue { _ = try db.prepared(Self.sql(sql), [no]) }
    }

    /// Checks an invite's key epoch against list `list`'s (``KeySQL/checkEpochs(_:keyEpoch:pushEpoch:)``),
    /// holding its row so a rotation waits for the invite, or the invite sees the rotation. Call inside
    /// the invite's transaction.
    static func checkInviteKeys(_ epoch: Int64?, of list: ListID, _ db: PostgresConnection) throws {
        let rows = try db.prepared(
            "SELECT key_epoch, push_epoch, encrypted FROM lists WHERE id = $1 FOR SHARE", [listParameter(list)])
        guard rows.count == 1 else { throw StoreError.noSuchList }
        guard rows.bool(0, 2) == true else { return }
        try KeySQL.checkEpochs(epoch.map { $0...$0 }, keyEpoch: rows.int64(0, 0), pushEpoch: rows.int64(0, 1))
    }
}
