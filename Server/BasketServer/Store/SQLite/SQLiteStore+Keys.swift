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

    public func deliverEnvelopes(_ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64)
        throws
    {
        try locked { db in
            try db.transaction {
                guard
                    let (role, no, encrypted) = try db.query(
                        Self.sql(KeySQL.sender), .blob(list.raw.bytes), .integer(account),
                        map: { ($0.string(0) ?? "", $0.int64(1), $0.int64(2) != 0) }
                    ).first
                else { throw StoreError.noSuchList }
                guard encrypted else { throw StoreError.notEncrypted }
                for envelope in envelopes {
                    guard
                        let (recipient, publicKey) = try db.query(
                            Self.sql(KeySQL.recipient), .integer(no), .text(envelope.account),
                            map: { ($0.int64(0), $0.string(1)) }
                        ).first
                    else { throw StoreError.noSuchMember }
                    if recipient != account && role == Role.viewer.rawValue { throw StoreError.noSuchMember }
                    guard publicKey != nil else { throw StoreError.noPublicKey }
                    try db.run(Self.sql(KeySQL.upsert), .integer(no), .integer(recipient), .text(envelope.envelope))
                }
            }
        }
    }

    public func envelope(of list: ListID, for account: Int64) throws -> String? {
        try reading { db in
            let rows = try db.query(Self.sql(KeySQL.envelope), .blob(list.raw.bytes), .integer(account)) {
                $0.string(0)
            }
            guard let row = rows.first else { throw StoreError.noSuchList }
            return row
        }
    }
}
