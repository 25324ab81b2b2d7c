public import BasketCore
public import BasketReplica
import PlatformCrypto

/// A plain list made encrypted end to end (docs/encryption.md, "Converting a plain list"): by an
/// owner's device (``encrypt(_:replica:transport:engine:)``), and taken by every other
/// device that holds it as plain (``EnvelopeRenewal/adoptConversion(of:)``).
public enum ListEncryption {
    /// Why a list cannot be encrypted, or a conversion taken, in words for a person.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Encrypts `list`, a plain list that is on this device only (never sent to a server): its
    /// keys are made here and its copy moves to the keyed ids; its first sync registers it
    /// encrypted.
    public static func encryptHere(_ list: ListID, replica: Replica) throws {
        guard !replica.isEncrypted(list) else {
            throw Refusal(description: "this list is already encrypted end to end")
        }
        let keys = ListKeys.generate(list: list)
        try replica.convertToEncrypted(list, keys: keys.storageText, epoch: nil, cursor: 0) { ops, known in
            keys.converted(ops, known: known)
        }
    }

    /// Encrypts `list`, which this device holds as plain: syncs it, makes its keys, seals its
    /// state at the end of the log as a snapshot and the keys to every member, and sends both
    /// (`POST /v1/lists/{id}/encryption`); then moves this device's copy, history and all, to the
    /// keyed ids. Returns the number of members the keys went to.
    /// - Throws: ``Refusal`` when the list is encrypted already, or changes of it wait that the
    ///   server would not take; the server's refusal (`member_without_keys`, `log_moved`, …).
    public static func encrypt(
        _ list: ListID, replica: Replica, transport: HTTPSyncTransport, engine: SyncEngine
    ) async throws -> Int {
        guard !replica.isEncrypted(list) else {
            throw Refusal(description: "this list is already encrypted end to end")
        }
        _ = try await engine.sync(list)
        guard try replica.outbox.count(in: list) == 0 else {
            throw Refusal(description: "changes of this list wait that the server did not take: see 'basket status'")
        }
        let cursor = try replica.syncState(of: list).cursor
        let keys = ListKeys.generate(list: list)
        let known = try replica.operations(in: list)
        let state = keys.converted(try replica.currentOperations(in: list), known: known)
        let snapshot = keys.sealSnapshot(state, cursor: cursor, nonce: SecureRandom.bytes(12))
        guard snapshot.utf8.count <= Sealed.maxSnapshotBytes else {
            throw Refusal(description: "this list is too large to encrypt in one step (its state sealed is over 3 MiB)")
        }
        var envelopes: [Wire.EnvelopeDelivery.Envelope] = []
        for member in try await transport.members(of: list) {
            guard let text = member.publicKey, let publicKey = Base64URL.decode(text) else { continue }
            envelopes.append(.init(account: member.account, envelope: try Envelope.seal(keys, to: publicKey)))
        }
        let epoch = try await transport.encrypt(
            list, Wire.Conversion(cursor: cursor, snapshot: snapshot, envelopes: envelopes))
        try replica.convertToEncrypted(list, keys: keys.storageText, epoch: epoch, cursor: cursor) { ops, known in
            keys.converted(ops, known: known)
        }
        // Every member's envelope, this account's included, holds the keys.
        try replica.setSetting(Envelopes.deliveredPrefix + list.description, String(keys.epochs.count))
        return envelopes.count
    }
}

extension EnvelopeRenewal {
    public func adoptConversion(of list: ListID) async throws -> Bool {
        guard !replica.isEncrypted(list) else { return false }
        // Still plain: the epoch changed for a restore (or the list is gone: the sync says so).
        guard try await transport.lists().first(where: { $0.id == list })?.encrypted == true else { return false }
        let answer = try await transport.listEnvelope(of: list)
        guard let pair = Envelopes.keyPair(replica), let text = answer.envelope,
            let keys = try? Envelope.open(text, list: list, with: pair)
        else {
            throw ListEncryption.Refusal(
                description: "an owner encrypted this list end to end, and its key has not reached this account:"
                    + " sign in again, or join it again with a new invite; its changes here wait")
        }
        try replica.convertToEncrypted(list, keys: keys.storageText, epoch: nil, cursor: 0) { ops, known in
            keys.converted(ops, known: known)
        }
        try replica.setSetting(Envelopes.deliveredPrefix + list.description, String(keys.epochs.count))
        return true
    }
}
