public import BasketCore
import SQLite

// SQLiteStore: account key pairs and envelopes (``KeyStore``).
extension SQLiteStore {
    private static func sql(_ template: String) -> String { SharedSQL.sql(template) { "?\($0)" } }

    public func accountKeys(of account: Int64) throws -> StoredAccountKeys? {
        try reading { db in
            try db.query(Self.sql(KeySQL.accountKeys), .integer(account)) {
                StoredAccountKeys(
                    publicKey: $0.string(0) ?? "", wrappedKey: $0.string(1) ?? "", recoveryKey: $0.string(2) ?? "",
                    recoveryHash: $0.string(3) ?? "")
            }.first
        }
    }

    public func setAccountKeys(_ keys: StoredAccountKeys, of account: Int64) throws {
        try locked { db in
            try db.run(
                Self.sql(KeySQL.setAccountKeys), .integer(account), .text(keys.publicKey), .text(keys.wrappedKey),
                .text(keys.recoveryKey), .text(keys.recoveryHash))
            guard db.changes == 1 else { throw StoreError.keysExist }
        }
    }

    public func setPassword(hash: String, wrappedKey: String?, of account: Int64) throws -> Bool {
        try locked { db in
            try db.run(
                Self.sql(KeySQL.setPassword), .integer(account), .text(hash), wrappedKey.map { .text($0) } ?? .null)
            return db.changes == 1
        }
    }

    public func deliverEnvelopes(
        _ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64, rotatingTo epoch: Int64?
    ) throws {
        try locked { db in
            // BEGIN IMMEDIATE: the store's write lock is held from the first read, so a push (on the
            // writer thread) or a removal waits for the rotation, or the rotation sees it.
            try db.transaction {
                guard
                    let (role, no, encrypted, keyEpoch, pushEpoch) = try db.query(
                        Self.sql(KeySQL.sender), .blob(list.raw.bytes), .integer(account),
                        map: { ($0.string(0) ?? "", $0.int64(1), $0.int64(2) != 0, $0.int64(3), $0.int64(4)) }
                    ).first
                else { throw StoreError.noSuchList }
                guard encrypted else { throw StoreError.notEncrypted }
                if let epoch {
                    let keyed = try db.query(Self.sql(KeySQL.keyedMembers), .integer(no)) { $0.string(0) ?? "" }
                    try KeySQL.checkRotation(
                        to: epoch, role: role, keyEpoch: keyEpoch, pushEpoch: pushEpoch, keyed: keyed,
                        envelopes: envelopes)
                }
                for envelope in envelopes {
                    guard
                        let (recipient, publicKey) = try db.query(
                            Self.sql(KeySQL.recipient), .integer(no), .text(envelope.account),
                            map: { ($0.int64(0), $0.string(1)) }
                        ).first
                    else {
                        // A rotation's members changed since its device asked: it asks again.
                        throw epoch == nil ? StoreError.noSuchMember : StoreError.staleKey(keyEpoch: keyEpoch)
                    }
                    if recipient != account && role != Role.owner.rawValue && epoch == nil {
                        throw StoreError.noSuchMember
                    }
                    guard publicKey != nil else { throw StoreError.noPublicKey }
                    try db.run(Self.sql(KeySQL.upsert), .integer(no), .integer(recipient), .text(envelope.envelope))
                }
                if let epoch {
                    try db.run(Self.sql(KeySQL.rotated), .integer(no), .integer(epoch))
                    try db.run(Self.sql(KeySQL.dropInvites), .integer(no))
                }
            }
        }
    }

    public func envelope(of list: ListID, for account: Int64) throws -> StoredEnvelope {
        try reading { db in
            let rows = try db.query(Self.sql(KeySQL.envelope), .blob(list.raw.bytes), .integer(account)) {
                StoredEnvelope(envelope: $0.string(0), keyEpoch: $0.int64(1), rotationDue: $0.int64(2) > $0.int64(1))
            }
            guard let row = rows.first else { throw StoreError.noSuchList }
            return row
        }
    }

    /// A member left list `no` or was removed: an encrypted one awaits rotation
    /// (``KeySQL/rotationDue``). Call inside the removal's transaction.
    func rotationDue(_ no: Int64, _ db: Connection) throws {
        for sql in KeySQL.rotationDue { try db.run(Self.sql(sql), .integer(no)) }
    }

    /// Checks an invite's key epoch against list `no`'s (``KeySQL/checkEpochs(_:keyEpoch:pushEpoch:)``).
    /// Call inside the invite's transaction.
    func checkInviteKeys(_ epoch: Int64?, of no: Int64, _ db: Connection) throws {
        guard
            let (keyEpoch, pushEpoch, encrypted) = try db.query(
                Self.sql(KeySQL.keyEpochs), .integer(no), map: { ($0.int64(0), $0.int64(1), $0.int64(2) != 0) }
            ).first
        else { throw StoreError.noSuchList }
        guard encrypted else { return }
        try KeySQL.checkEpochs(epoch.map { $0...$0 }, keyEpoch: keyEpoch, pushEpoch: pushEpoch)
    }
}
