public import BasketCore

/// Each list's operation log: pushes append to it, pulls page through it
/// (`BasketService+Log.swift`).
public protocol LogStore: Sendable {
    /// Stores new operations of one list, each with the next sequence number; known ones are skipped.
    /// With a `pusher`, each replica id of the new operations is bound to the first account that
    /// pushes it to the list, and the push is refused when one is bound to another account,
    /// whatever the operations' timestamps: after a restore, nobody writes under an id another
    /// account holds by stamping in the past. Operations stamped before the list's epoch began
    /// under an id nobody holds (a member relaying what a restored server lost for a device that
    /// has not synced since) are taken without binding it: that device binds it when it comes back.
    /// - Throws: ``StoreError/tooManyItems`` or ``StoreError/listTooLarge`` when the new operations
    ///   would take the list past `limits`, ``StoreError/identityConflict(_:)``,
    ///   ``StoreError/replicaTaken`` (nothing of the push is stored then).
    func append(_ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits, pusher: Int64?) throws
        -> AppendResult
    /// What each list holds: items (every item it has held, removed ones included: the server does
    /// not merge) and stored bytes (``ListLimits/bytes(of:)`` summed over its log).
    func usage(of list: ListID) throws -> (items: Int64, bytes: Int64)
    /// Operations after `cursor`: at most `limit`, and no more once the encoded page holds
    /// `maxBytes` (it always holds at least one operation when one follows the cursor). With
    /// `member`, only for a member of the list (checked in the same read: one round trip).
    /// - Throws: ``StoreError/noSuchList`` when there is no such list, or `member` is not one of it.
    func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, member: Int64?) throws -> LogPage
    /// The last sequence number and epoch of a list.
    func head(of list: ListID) throws -> (cursor: Int64, epoch: String)
    /// The heads of `lists` as the store holds them now, in one read (lists that do not exist are
    /// missing from the answer): what a long-poll whose wait ran out compares its cursor with, so a
    /// push this instance was never told of still reaches it (``LogHead``).
    func heads(of lists: [ListID]) throws -> [ListID: LogHead]
}

/// Where a list's log ends, as its row says: enough to answer "nothing new" exactly as a read of
/// the log would (``LogPage/nothingAfter(_:in:head:)``).
public struct LogHead: Sendable, Hashable {
    /// The list's last sequence number.
    public var cursor: Int64
    /// The list's epoch.
    public var epoch: String
    /// The last sequence number compaction may have dropped.
    public var compactedThrough: Int64

    /// A head at `cursor` in `epoch`, compacted through `compactedThrough`.
    public init(cursor: Int64, epoch: String, compactedThrough: Int64) {
        self.cursor = cursor
        self.epoch = epoch
        self.compactedThrough = compactedThrough
    }
}

/// How many lists one ``LogStore/heads(of:)`` statement asks about (the rest in further ones).
let headsPerStatement = 500

extension LogStore {
    /// Stores operations with no quota and no pusher to bind replica ids to (tests, imports).
    public func append(_ operations: [Op], to list: ListID, receivedAt: Int64) throws -> AppendResult {
        try append(operations, to: list, receivedAt: receivedAt, limits: .none, pusher: nil)
    }

    /// A page cut at ``LogPage/defaultMaxBytes``.
    public func page(of list: ListID, after cursor: Int64, limit: Int) throws -> LogPage {
        try page(of: list, after: cursor, limit: limit, maxBytes: LogPage.defaultMaxBytes, member: nil)
    }

    /// A page for anyone (the caller checked who asks).
    public func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int) throws -> LogPage {
        try page(of: list, after: cursor, limit: limit, maxBytes: maxBytes, member: nil)
    }
}

/// The outcome of storing a batch of operations.
public struct AppendResult: Hashable, Sendable {
    /// New operations stored.
    public var accepted: Int
    /// Operations the log held already (a retried push).
    public var duplicates: Int
    /// The list's last sequence number after the batch.
    public var cursor: Int64
    /// The list's epoch (clients compare it with theirs).
    public var epoch: String
}

/// A page of a list's log.
public struct LogPage: Sendable {
    /// Encoded operations in one page at most, about 1 MiB: with every text field at its byte
    /// limit a page of 5,000 operations would be 40 MB, built in memory for every pull.
    public static let defaultMaxBytes = 1 << 20

    /// The operations, encoded (docs/encoding.md), ready to send.
    public var encoded: [UInt8]
    /// How many operations `encoded` holds.
    public var count: Int
    /// The sequence number of the last operation in the page (the cursor to ask after next).
    public var cursor: Int64
    /// Whether more operations follow.
    public var more: Bool
    /// The list's epoch.
    public var epoch: String
    /// False when compaction dropped superseded operations after the requested cursor: the
    /// state the page builds is exact, but not every historical write is in it.
    public var historyComplete: Bool

    /// The page with nothing after `cursor` in `list` whose log ends at `head`: the same bytes a
    /// read of the log answers then (the encoding's header and list line included, which every
    /// client requires), without the read.
    public static func nothingAfter(_ cursor: Int64, in list: ListID, head: LogHead) -> LogPage {
        PageBuilder(list: list, after: cursor, head: head.cursor, maxBytes: 0)
            .page(epoch: head.epoch, compactedThrough: head.compactedThrough)
    }
}

/// How much one list may hold (``LogStore/append(_:to:receivedAt:limits:pusher:)``).
public struct ListLimits: Sendable, Hashable {
    /// The most items the list may have held (removed ones count).
    public var maxItems: Int64
    /// The most bytes its operations may take (``bytes(of:)`` summed).
    public var maxBytes: Int64
    /// The most replica ids one account may bind to the list (a device has one): the members
    /// answer names each member's, so it must stay small (``MemberRecord/maxReplicas``).
    public var maxReplicasPerMember: Int64
    /// The most replica ids bound to the list, all members together.
    public var maxReplicasPerList: Int64
    /// The most items the pusher may have added to the list, all its pushes together
    /// (``StoreError/memberShareFull``): a member who is not an owner holds at most half of the
    /// list's quotas, so one member cannot fill a family's list. `.max` for none (an owner).
    public var pusherItems: Int64
    /// The most bytes the pusher may have added (see ``pusherItems``).
    public var pusherBytes: Int64
    /// The key epochs an encrypted list's push is sealed under, lowest to highest (nil for a plain
    /// list's): refused with ``StoreError/rotationDue`` while the list awaits a new key, and with
    /// ``StoreError/staleKey(keyEpoch:)`` outside the epochs it takes, in the push's own transaction
    /// (under the list's lock, so no push slips in between a removal and the rotation).
    public var keyEpochs: ClosedRange<Int64>?
    /// Whether the push was read as an encrypted list's (its values sealed): a plain push to a
    /// list converted since it was read is refused (``StoreError/listEncrypted``), in the push's
    /// own transaction.
    public var sealed: Bool

    /// Limits of `maxItems` items and `maxBytes` bytes, of replica ids, and of the pusher's share.
    public init(
        maxItems: Int64, maxBytes: Int64, maxReplicasPerMember: Int64 = .max, maxReplicasPerList: Int64 = .max,
        pusherItems: Int64 = .max, pusherBytes: Int64 = .max, keyEpochs: ClosedRange<Int64>? = nil,
        sealed: Bool? = nil
    ) {
        self.sealed = sealed ?? (keyEpochs != nil)
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        self.maxReplicasPerMember = maxReplicasPerMember
        self.maxReplicasPerList = maxReplicasPerList
        self.pusherItems = pusherItems
        self.pusherBytes = pusherBytes
        self.keyEpochs = keyEpochs
    }

    /// Checks the push's key epochs (``keyEpochs``) against the list's: the newest its members
    /// hold, and the oldest it takes (past the newest while a rotation is due); and a plain push
    /// against an encrypted list (converted since the push was read).
    func checkKeys(keyEpoch: Int64, pushEpoch: Int64, encrypted: Bool) throws {
        if encrypted && !sealed { throw StoreError.listEncrypted }
        guard let keyEpochs else { return }
        try KeySQL.checkEpochs(keyEpochs, keyEpoch: keyEpoch, pushEpoch: pushEpoch)
    }

    /// Whether the pusher has a share to keep within (not an owner): its pushes are counted.
    var countsPusher: Bool { pusherItems != .max || pusherBytes != .max }

    /// Checks what a push adds against the pusher's share: it added `held` before; this push adds
    /// `items` new items and `bytes` bytes that grow the list (writes that shrink it are free).
    /// - Throws: ``StoreError/memberShareFull`` past the share.
    func checkShare(held: (items: Int64, bytes: Int64), items: Int64, bytes: Int64) throws {
        if items > 0 && held.items + items > pusherItems { throw StoreError.memberShareFull }
        if bytes > 0 && held.bytes + bytes > pusherBytes { throw StoreError.memberShareFull }
    }

    /// Whether a write of `value` to `field` shrinks what the list asks of anyone: a removal, an
    /// uncheck, a field cleared. A full list takes these (within its reserve): a member who
    /// filled it must not keep the others from cleaning it up.
    public static func shrinks(_ field: Field, _ value: Value) -> Bool {
        switch (field, value) {
        case (.deleted, .bool(true)), (.checked, .bool(false)): true
        case (_, .null): true
        default: false
        }
    }

    /// The part of ``maxBytes`` past which only writes that shrink the list are taken (a
    /// quarter more): a list full of junk can still be cleaned up, and the reserve bounds what
    /// a stream of such writes can add until compaction.
    public var reserveBytes: Int64 { maxBytes == .max ? 0 : maxBytes / 4 }

    /// Checks a push's bytes against the quota: the list holds `held`; the push adds `adding`, of
    /// which `shrinking` are writes that shrink the list. What grows must fit under ``maxBytes``;
    /// writes that only shrink may use the reserve above it.
    /// - Throws: ``StoreError/listTooLarge`` when they do not fit.
    func checkBytes(held: Int64, adding: Int64, shrinking: Int64) throws {
        guard adding > 0 else { return }
        if adding > shrinking && held + (adding - shrinking) > maxBytes { throw StoreError.listTooLarge }
        if held + adding > maxBytes &+ reserveBytes { throw StoreError.listTooLarge }
    }

    /// Whether binding `adding` new replica ids to `pusher`, who has `mine` of the list's
    /// `onList`, stays within the limits.
    /// - Throws: ``StoreError/tooManyReplicas`` when it does not.
    func checkReplicas(adding: Int64, mine: Int64, onList: Int64) throws {
        guard adding > 0 else { return }
        if mine + adding > maxReplicasPerMember || onList + adding > maxReplicasPerList {
            throw StoreError.tooManyReplicas
        }
    }

    /// No limit (imports, tests).
    public static let none = ListLimits(maxItems: .max, maxBytes: .max)

    /// What an operation counts against a list's bytes: its text and a fixed 64 for the rest of
    /// its row and its index entry.
    public static func bytes(of value: Value) -> Int64 {
        if case .text(let text) = value { return Int64(text.utf8.count) + 64 }
        return 64
    }
}
