public import BasketCore
public import BasketReplica
import Synchronization

extension ListKeys: ListSealing {
    /// `ListSealing`'s opening: ``open(_:)`` with its error as it is.
    public func open(_ op: Op) throws -> Op { try open(sealed: op) }

    /// `ListSealing`'s newest epoch: ``current``.
    public var newestEpoch: UInt32 { current }

    /// `ListSealing`'s snapshot: ``sealSnapshot(_:cursor:nonce:)`` with a random nonce.
    public func sealSnapshot(_ operations: [Op], at cursor: Int64) -> String {
        sealSnapshot(operations, cursor: cursor)
    }

    /// `ListSealing`'s opening of a snapshot: ``openSnapshot(_:cursor:)`` with its error as it is.
    public func openSnapshot(_ text: String, at cursor: Int64) throws -> [Op] { try openSnapshot(text, cursor: cursor) }

    /// How a device keeps a list's keys: `K1.` base64url(identity key ‖ each epoch (4 bytes) with
    /// its key), every epoch it holds.
    public var storageText: String { "K1." + Base64URL.encode(keyBytes(newest: epochs.count)) }

    /// The keys ``storageText`` kept.
    /// - Throws: ``SealError/badKey`` when it is not such a text.
    public init(list: ListID, storageText text: String) throws(SealError) {
        guard text.utf8.count <= 64 * 1_024, text.hasPrefix("K1."), let bytes = Base64URL.decode(text.dropFirst(3))
        else { throw .badKey }
        try self.init(list: list, keyBytes: bytes)
    }
}

/// A device's keys of encrypted lists in memory (the replica keeps their text in its file and
/// loads them at open): the `Keyring` the CLI gives its replica and its transport.
public final class SealKeyring: Keyring {
    private let keys = Mutex<[ListID: ListKeys]>([:])

    /// An empty keyring.
    public init() {}

    public func sealing(for list: ListID) -> (any ListSealing)? { keys.withLock { $0[list] } }

    /// The keys of `list`, when this keyring holds them.
    public func keys(of list: ListID) -> ListKeys? { keys.withLock { $0[list] } }

    /// Takes the keys of `list`: a kept text (`K1.`) or an invite secret (`k1.`); epochs it held
    /// already stay.
    /// - Throws: ``SealError/forged`` for keys of another identity than the ones it holds (a
    ///   list's identity key never changes: another is a mistake or a forgery, never a rotation).
    public func load(_ text: String, for list: ListID) throws {
        let loaded =
            text.hasPrefix("k1.")
            ? try ListKeys(list: list, inviteSecret: text) : try ListKeys(list: list, storageText: text)
        try keys.withLock { held throws(SealError) in
            if let identity = held[list]?.identity, identity != loaded.identity { throw .forged }
            var merged = loaded
            for (epoch, key) in held[list]?.epochs ?? [:] where merged.epochs[epoch] == nil {
                merged = merged.adding(epoch: epoch, key: key)
            }
            held[list] = merged
        }
    }

    public func makeKeys(for list: ListID) -> String {
        let made = ListKeys.generate(list: list)
        keys.withLock { $0[list] = made }
        return made.storageText
    }
}

extension ListKeys {
    /// `title` sealed for an invite's preview: the list's `title` register at version zero, which
    /// the invite's keys open (`Wire.InviteRequest.title`).
    public func sealedInviteTitle(_ title: String) -> String {
        let op = Op(
            list: list, item: .list, field: .title, value: .text(title),
            version: Version(timestamp: .zero, replica: ReplicaID(rawValue: 0)))
        return seal(op).value.textValue ?? ""
    }

    /// The title an invite's preview carries sealed; nil when it does not open.
    public func openInviteTitle(_ sealed: String) -> String? {
        let op = Op(
            list: list, item: .list, field: .title, value: .text(sealed),
            version: Version(timestamp: .zero, replica: ReplicaID(rawValue: 0)))
        return (try? open(sealed: op))?.value.textValue
    }
}
