public import BasketCore

/// What the server keeps for lists encrypted end to end (docs/encryption.md), none of which it
/// can open: each account's key pair (the private key wrapped on a device, under the password's
/// key and under the recovery code's), the hash of what the recovery code signs in with, and
/// each member's envelope of a list's keys (`BasketService+Keys.swift`). An envelope ends with
/// its member's membership and with the list.
public protocol KeyStore: Sendable {
    /// The account's key pair, if it has one.
    func accountKeys(of account: Int64) throws -> StoredAccountKeys?
    /// Keeps the account's key pair. With one already, the public key must be the same: its
    /// wraps and recovery hash are replaced.
    /// - Throws: ``StoreError/keysExist`` for another public key.
    func setAccountKeys(_ keys: StoredAccountKeys, of account: Int64) throws
    /// Replaces the password's hash and, when given, the private key's wrap, in one statement;
    /// false (nothing changed) when the account has a key pair and no wrap is given: its private
    /// key would stay wrapped under the old password.
    func setPassword(hash: String, wrappedKey: String?, of account: Int64) throws -> Bool
    /// Keeps `envelopes` of `list`, each replacing its member's, sent by `account`: a member may
    /// leave its own; an owner or editor, anyone's. One transaction: all or none.
    /// - Throws: ``StoreError/noSuchList`` (the sender is not a member), ``StoreError/notEncrypted``,
    ///   ``StoreError/noSuchMember`` (a recipient is not a member, or a viewer sends for another),
    ///   ``StoreError/noPublicKey``.
    func deliverEnvelopes(_ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64) throws
    /// The envelope of `list` left for `account`; nil when there is none.
    /// - Throws: ``StoreError/noSuchList`` when the account is not a member.
    func envelope(of list: ListID, for account: Int64) throws -> String?
}

/// An account's key pair as stored.
public struct StoredAccountKeys: Sendable, Hashable {
    /// The public key (base64url).
    public var publicKey: String
    /// The private key wrapped under the password's wrapping key.
    public var wrappedKey: String
    /// The private key wrapped under the recovery code's key.
    public var recoveryKey: String
    /// SHA-256 (hex) of what the recovery code signs in with.
    public var recoveryHash: String

    /// A key pair as stored.
    public init(publicKey: String, wrappedKey: String, recoveryKey: String, recoveryHash: String) {
        self.publicKey = publicKey
        self.wrappedKey = wrappedKey
        self.recoveryKey = recoveryKey
        self.recoveryHash = recoveryHash
    }
}

/// The statements of ``KeyStore``, the same for both stores.
enum KeySQL {
    static let accountKeys = """
        SELECT public_key, wrapped_key, recovery_key, recovery_hash FROM accounts
        WHERE id = {1} AND public_key IS NOT NULL
        """
    /// Sets the keys of account {1} when it has none or the same public key ({2}); no row changes otherwise.
    static let setAccountKeys = """
        UPDATE accounts SET public_key = {2}, wrapped_key = {3}, recovery_key = {4}, recovery_hash = {5}
        WHERE id = {1} AND (public_key IS NULL OR public_key = {2})
        """
    static let setPassword = """
        UPDATE accounts SET password = {2},
            wrapped_key = CASE WHEN public_key IS NULL THEN NULL ELSE coalesce(CAST({3} AS TEXT), wrapped_key) END
        WHERE id = {1} AND (public_key IS NULL OR CAST({3} AS TEXT) IS NOT NULL)
        """
    /// The sender's ({2}) role on list {1} (its id), the list's row number and whether it is encrypted.
    static let sender = """
        SELECT m.role, l.no, l.encrypted FROM members m JOIN lists l ON l.no = m.list WHERE l.id = {1} AND m.account = {2}
        """
    /// Member {2} (a name) of list {1} (its row number): its account id and public key.
    static let recipient = """
        SELECT a.id, a.public_key FROM accounts a JOIN members m ON m.account = a.id WHERE m.list = {1} AND a.name = {2}
        """
    static let upsert = """
        INSERT INTO envelopes(list, account, envelope) VALUES ({1}, {2}, {3})
        ON CONFLICT(list, account) DO UPDATE SET envelope = excluded.envelope
        """
    static let envelope = """
        SELECT e.envelope FROM members m JOIN lists l ON l.no = m.list
        LEFT JOIN envelopes e ON e.list = m.list AND e.account = m.account WHERE l.id = {1} AND m.account = {2}
        """
}
