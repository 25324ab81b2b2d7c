public import BasketCore

/// What an end-to-end encrypted list's keys do for the replica and its sync. A protocol, so that
/// the client library stays free of cryptography: BasketSeal's `ListKeys` is the implementation
/// (on the platform's libraries), wired in by whoever opens the replica (docs/encryption.md).
public protocol ListSealing: Sendable {
    /// The id of the item with key `key` (`ItemKey.normalize(_:)` of its name): equal names
    /// give equal ids on every member's device, and the server learns a keyed tag.
    func itemID(key: String) -> ItemID
    /// The id of the shop with key `key`.
    func shopID(key: String) -> ItemID
    /// `op` with its value sealed: what is pushed. The same operation seals to the same text.
    func seal(_ op: Op) -> Op
    /// `op` with its value opened, as its writer wrote it; throws when it does not open where it
    /// stands (another key, another place, tampered with).
    func open(_ op: Op) throws -> Op
    /// The newest key epoch held: values are sealed under it. A pulled value under a newer one
    /// means another member rotated the list's key (``ListKeyRenewal``).
    var newestEpoch: UInt32 { get }
    /// The list's state (`operations`, as the replica holds it) at `cursor` of the server's log,
    /// sealed as one text under the newest epoch (docs/encryption.md, "Snapshots").
    func sealSnapshot(_ operations: [Op], at cursor: Int64) -> String
    /// The operations of a snapshot of the list at `cursor`, each validated; throws when it does
    /// not open for this list at this cursor, or opens to what is not its operations.
    func openSnapshot(_ text: String, at cursor: Int64) throws -> [Op]
}

/// How a device brings its keys of an encrypted list up to the server's (docs/encryption.md):
/// from its account's envelope when another member rotated the key, or by rotating itself when
/// the list awaits a rotation (a member left or was removed) and this account may make one. A
/// protocol, so that the client library stays free of cryptography: BasketSeal's
/// `EnvelopeRenewal` is the implementation. ``SyncEngine`` calls it when the server refuses a
/// push for its key (`409 stale_key`, `409 rotation_required`) or a page holds values under a
/// newer epoch than this device holds, then tries once more.
public protocol ListKeyRenewal: Sendable {
    /// Brings this device's keys of `list` up to the server's; true when they changed (a newer
    /// epoch from an envelope, or a rotation this device made).
    func renewKeys(of list: ListID) async throws -> Bool
    /// Moves this device's copy of `list`, which it holds as plain, to the list's keys when an
    /// owner encrypted it (its log's epoch changed, or a push was refused as plain): true when it
    /// did, and the list then starts again from its snapshot. False when the list is still plain
    /// (the server was restored: the epoch changed for that).
    /// - Throws: when the list is encrypted now but no key for it reached this account.
    func adoptConversion(of list: ListID) async throws -> Bool
}

extension ListKeyRenewal {
    /// No conversion is taken: the device has no keys to take.
    public func adoptConversion(of list: ListID) async throws -> Bool { false }
}

/// The keys a device holds, list by list: which lists are encrypted, and their keys. One object
/// serves the replica (item ids) and the transport (sealing, opening); the replica keeps each
/// list's keys as text in its file (``Replica/saveKeys(_:for:)``) and hands them back at open.
public protocol Keyring: AnyObject, Sendable {
    /// The keys of `list`; nil for a plain list, or one this device has no keys for.
    func sealing(for list: ListID) -> (any ListSealing)?
    /// Takes the keys `text` (as ``makeKeys(for:)`` or an invite gave them) for `list`.
    /// - Throws: when `text` is not keys of `list`.
    func load(_ text: String, for list: ListID) throws
    /// Makes keys for a new list, takes them, and returns their text for the replica to keep.
    func makeKeys(for list: ListID) -> String
}
