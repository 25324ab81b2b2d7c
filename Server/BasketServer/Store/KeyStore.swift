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
    /// leave its own; an owner, anyone's (and an editor, in a rotation). One transaction: all or none.
    ///
    /// With `rotatingTo`, the envelopes hand on a new key epoch (docs/encryption.md): sent by an
    /// owner, or by an editor while a rotation is due; the epoch must be newer than the list's, and
    /// every member with a key pair must get one. The list then takes pushes sealed under that
    /// epoch only, and its open invites (which carry older keys) are withdrawn. Under the list's
    /// lock (SQLite's one writer; PostgreSQL's row lock, which pushes and removals take too), so
    /// of two rotations racing, the second is refused, and no push lands between a removal and
    /// the rotation under a key the removed member held.
    /// - Throws: ``StoreError/noSuchList`` (the sender is not a member), ``StoreError/notEncrypted``,
    ///   ``StoreError/noSuchMember`` (a recipient is not a member, or a viewer sends for another, or
    ///   a sender may not rotate), ``StoreError/noPublicKey``, ``StoreError/staleKey(keyEpoch:)``.
    func deliverEnvelopes(
        _ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64, rotatingTo epoch: Int64?)
        throws
    /// The envelope of `list` left for `account` (nil when there is none) and the list's key epochs.
    /// - Throws: ``StoreError/noSuchList`` when the account is not a member.
    func envelope(of list: ListID, for account: Int64) throws -> StoredEnvelope
}

extension KeyStore {
    /// Envelopes that hand on no new epoch (``deliverEnvelopes(_:to:by:rotatingTo:)``).
    public func deliverEnvelopes(_ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, by account: Int64)
        throws
    {
        try deliverEnvelopes(envelopes, to: list, by: account, rotatingTo: nil)
    }
}

/// A member's envelope of a list's keys as stored, with the list's key epochs.
public struct StoredEnvelope: Sendable, Hashable {
    /// The envelope (`e1.…`); nil when none was left for the member.
    public var envelope: String?
    /// The newest key epoch of the list.
    public var keyEpoch: Int64
    /// Whether the list awaits a rotation (a member left or was removed since `keyEpoch`).
    public var rotationDue: Bool

    /// An envelope and the list's key epochs.
    public init(envelope: String?, keyEpoch: Int64, rotationDue: Bool) {
        self.envelope = envelope
        self.keyEpoch = keyEpoch
        self.rotationDue = rotationDue
    }
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
    /// The sender's ({2}) role on list {1} (its id), the list's row number, whether it is
    /// encrypted, and its key epochs.
    static let sender = """
        SELECT m.role, l.no, l.encrypted, l.key_epoch, l.push_epoch FROM members m JOIN lists l ON l.no = m.list
        WHERE l.id = {1} AND m.account = {2}
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
        SELECT e.envelope, l.key_epoch, l.push_epoch FROM members m JOIN lists l ON l.no = m.list
        LEFT JOIN envelopes e ON e.list = m.list AND e.account = m.account WHERE l.id = {1} AND m.account = {2}
        """
    /// The members of list {1} (its row number) with a key pair: each gets a rotation's envelope.
    static let keyedMembers = """
        SELECT a.name FROM members m JOIN accounts a ON a.id = m.account WHERE m.list = {1} AND a.public_key IS NOT NULL
        """
    /// List {1} takes pushes sealed under epoch {2} only.
    static let rotated = "UPDATE lists SET key_epoch = {2}, push_epoch = {2} WHERE no = {1}"
    /// The invites of list {1} go (they carry older keys).
    static let dropInvites = "DELETE FROM invites WHERE list = {1}"
    /// A member left encrypted list {1} (its row number) or was removed: it takes no push until
    /// rotated, and its invites (older keys) go. Nothing for a plain list.
    static let rotationDue = [
        "DELETE FROM invites WHERE list = {1} AND EXISTS (SELECT 1 FROM lists WHERE no = {1} AND encrypted)",
        "UPDATE lists SET push_epoch = key_epoch + 1 WHERE no = {1} AND encrypted",
    ]
    /// The key epochs of list {1} (its row number).
    static let keyEpochs = "SELECT key_epoch, push_epoch, encrypted FROM lists WHERE no = {1}"

    /// Checks a rotation to `epoch` by a sender of `role` against the list's epochs, and that the
    /// envelopes reach every member with a key pair (`keyed`).
    static func checkRotation(
        to epoch: Int64, role: String, keyEpoch: Int64, pushEpoch: Int64, keyed: [String],
        envelopes: [Wire.EnvelopeDelivery.Envelope]
    ) throws {
        let due = pushEpoch > keyEpoch
        guard role == Role.owner.rawValue || (role == Role.editor.rawValue && due) else {
            throw StoreError.noSuchMember
        }
        guard epoch > keyEpoch, Set(keyed).isSubset(of: envelopes.map(\.account)) else {
            throw StoreError.staleKey(keyEpoch: keyEpoch)
        }
    }

    /// Checks what is sealed under `epochs` (a push's values, an invite's keys; nil: none named)
    /// against a list's newest key epoch and the oldest it takes (past the newest while a rotation
    /// is due, when it takes nothing). A plain list's are both 0, and never due.
    /// - Throws: ``StoreError/rotationDue``, ``StoreError/staleKey(keyEpoch:)``.
    static func checkEpochs(_ epochs: ClosedRange<Int64>?, keyEpoch: Int64, pushEpoch: Int64) throws {
        if pushEpoch > keyEpoch { throw StoreError.rotationDue }
        if let epochs, epochs.lowerBound < pushEpoch || epochs.upperBound > keyEpoch {
            throw StoreError.staleKey(keyEpoch: keyEpoch)
        }
    }
}
