public import BasketCore

/// Snapshots of encrypted lists (docs/encryption.md, "Snapshots"): the newest state of a list at
/// a position of its log, sealed on an owner's device as one text the server cannot open. A
/// device joining a long-lived list starts from it and pulls the tail after it. One per list,
/// replaced by a newer one, gone with the list; not in dumps (a device pulls the whole log
/// instead, as it does before any snapshot was made).
public protocol SnapshotStore: Sendable {
    /// Keeps `snapshot` of `list` at `cursor`, sent by `account` at `time` (Unix ms): an owner's,
    /// of an encrypted list, sealed under its newest key epoch while no rotation is due, at a
    /// cursor the log has reached. A snapshot at a cursor no newer than the one kept changes
    /// nothing (the newer stays).
    /// - Throws: ``StoreError/noSuchList`` (not a member), ``StoreError/noSuchMember`` (not an
    ///   owner), ``StoreError/notEncrypted``, ``StoreError/rotationDue``,
    ///   ``StoreError/staleKey(keyEpoch:)`` (another epoch), ``StoreError/beyondLog(lastSeq:)``,
    ///   ``StoreError/snapshotTooLarge(limit:)`` (larger than the list's log and 64 KiB).
    func putSnapshot(
        _ snapshot: String, keyEpoch: Int64, at cursor: Int64, of list: ListID, by account: Int64, time: Int64)
        throws
    /// The snapshot of `list` kept, for a member; nil when there is none.
    /// - Throws: ``StoreError/noSuchList`` when the account is not a member.
    func snapshot(of list: ListID, for account: Int64) throws -> Wire.ListSnapshot?
    /// Makes plain `list` encrypted end to end (docs/encryption.md, "Converting a plain list"), for
    /// an owner `account` whose device was even with the log at `cursor`, in one transaction under
    /// the list's lock: the list takes sealed pushes only (key epoch 0), `envelopes` reach every
    /// member, `snapshot` (sealed under epoch 0) holds its state at `cursor`, and its plain log,
    /// invites and shopping statuses are dropped. The log starts a new epoch (a string), so every
    /// device learns it on its next pull or push and changes its copy. Returns the new epoch.
    /// - Throws: ``StoreError/noSuchList`` (not a member), ``StoreError/noSuchMember`` (not an owner,
    ///   or an envelope for someone who is not a member), ``StoreError/listEncrypted``,
    ///   ``StoreError/logMoved(lastSeq:)``, ``StoreError/staleKey(keyEpoch:)`` (a snapshot under
    ///   another epoch than 0), ``StoreError/membersWithoutKeys(_:)``, ``StoreError/staleKey(keyEpoch:)``
    ///   (a member with a key pair left out), ``StoreError/snapshotTooLarge(limit:)``.
    func convert(
        _ list: ListID, by account: Int64, at cursor: Int64, snapshot: String, keyEpoch: Int64,
        envelopes: [Wire.EnvelopeDelivery.Envelope], time: Int64
    ) throws -> String
}

/// The statements of ``SnapshotStore``, the same for both stores.
enum SnapshotSQL {
    /// The sender's ({2}) role on list {1} (its id), the list's row number, whether it is
    /// encrypted, its key epochs, the last position of its log and the bytes its log counts.
    static let sender = """
        SELECT m.role, l.no, l.encrypted, l.key_epoch, l.push_epoch, l.last_seq, l.bytes
        FROM members m JOIN lists l ON l.no = m.list WHERE l.id = {1} AND m.account = {2}
        """

    /// What a snapshot may take beyond its list's log: the state it holds is part of the log,
    /// gzipped, so only a small list's padding and overhead pass the log's bytes. A snapshot
    /// never costs more than the list's quota already allows (``BasketService/Configuration/maxBytesPerList``).
    static let slackBytes: Int64 = 64 << 10
    /// Keeps snapshot {3} of list {1} (its row number) at {2}, made at {4}, unless one at a newer
    /// or the same position is kept.
    static let upsert = """
        INSERT INTO snapshots(list, at_seq, snapshot, made) VALUES ({1}, {2}, {3}, {4})
        ON CONFLICT(list) DO UPDATE SET at_seq = excluded.at_seq, snapshot = excluded.snapshot, made = excluded.made
        WHERE excluded.at_seq > snapshots.at_seq
        """
    /// List {1}'s (its id) snapshot, if any, and its log's epoch, for member {2}.
    static let snapshot = """
        SELECT s.at_seq, s.snapshot, s.made, l.epoch FROM members m JOIN lists l ON l.no = m.list
        LEFT JOIN snapshots s ON s.list = l.no WHERE l.id = {1} AND m.account = {2}
        """

    /// The members of list {1} (its row number) without a key pair.
    static let keylessMembers = """
        SELECT a.name FROM members m JOIN accounts a ON a.id = m.account WHERE m.list = {1} AND a.public_key IS NULL
        ORDER BY a.name
        """
    /// A conversion makes list {1} (its row number) encrypted under a new log epoch ({2}) that
    /// takes sealed pushes from key epoch 0; its plain log is dropped, counted as compacted (a
    /// device that pulls from the start knows its history begins at the snapshot).
    static let converted = """
        UPDATE lists SET encrypted = TRUE, key_epoch = 0, push_epoch = 0, epoch = {2}, compacted_through = last_seq,
            dropped = last_seq, bytes = 0, items = 0 WHERE no = {1}
        """
    /// What else of list {1} a conversion drops: its plain log and what counted it, its invites
    /// (their codes carry no key), its shopping statuses (a shop's name in clear), and any
    /// snapshot (the conversion's is kept with ``upsert``).
    static let droppedByConversion = [
        "DELETE FROM pushes WHERE list = {1}",
        "DELETE FROM member_usage WHERE list = {1}",
        "DELETE FROM invites WHERE list = {1}",
        "DELETE FROM shopping WHERE list = {1}",
        "DELETE FROM snapshots WHERE list = {1}",
    ]

    /// Checks a conversion by a member of `role` at `cursor` of a list: an owner's, of a plain
    /// list, at the end of its log, sealed under epoch 0, no larger than the log and 64 KiB, with
    /// an envelope for every member (`keyed` have a key pair, `keyless` none).
    static func checkConversion(
        role: String, encrypted: Bool, keyEpoch: Int64, cursor: Int64, lastSeq: Int64, bytes: Int, logBytes: Int64,
        keyed: [String], keyless: [String], envelopes: [Wire.EnvelopeDelivery.Envelope]
    ) throws {
        guard role == Role.owner.rawValue else { throw StoreError.noSuchMember }
        guard !encrypted else { throw StoreError.listEncrypted }
        guard cursor == lastSeq else { throw StoreError.logMoved(lastSeq: lastSeq) }
        guard keyEpoch == 0 else { throw StoreError.staleKey(keyEpoch: 0) }
        guard keyless.isEmpty else { throw StoreError.membersWithoutKeys(keyless) }
        guard Set(keyed).isSubset(of: envelopes.map(\.account)) else { throw StoreError.staleKey(keyEpoch: 0) }
        guard Int64(bytes) <= logBytes + slackBytes else {
            throw StoreError.snapshotTooLarge(limit: logBytes + slackBytes)
        }
    }

    /// Checks a snapshot sent by a member of `role` under `keyEpoch` at `cursor` against the
    /// list: an owner's, of an encrypted list, under its newest epoch, within its log.
    static func check(
        role: String, encrypted: Bool, keyEpoch: Int64, listKeyEpoch: Int64, pushEpoch: Int64, cursor: Int64,
        lastSeq: Int64, bytes: Int, logBytes: Int64
    ) throws {
        guard role == Role.owner.rawValue else { throw StoreError.noSuchMember }
        guard encrypted else { throw StoreError.notEncrypted }
        try KeySQL.checkEpochs(keyEpoch...keyEpoch, keyEpoch: listKeyEpoch, pushEpoch: pushEpoch)
        guard keyEpoch == listKeyEpoch else { throw StoreError.staleKey(keyEpoch: listKeyEpoch) }
        guard cursor >= 0, cursor <= lastSeq else { throw StoreError.beyondLog(lastSeq: lastSeq) }
        guard Int64(bytes) <= logBytes + slackBytes else {
            throw StoreError.snapshotTooLarge(limit: logBytes + slackBytes)
        }
    }
}
