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
