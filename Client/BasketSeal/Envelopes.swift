public import BasketCore
public import BasketReplica
public import PlatformCrypto

/// The keys of encrypted lists between this device and the other devices of its account
/// (docs/encryption.md): the account's key pair is kept here from sign-in; a list's keys this
/// device holds are left on the server sealed to the account's public key (an envelope), and a
/// list of the account this device has no keys for is opened from the envelope another device
/// left. What the server keeps it cannot open.
public enum Envelopes {
    /// The setting that keeps the account's key pair (`X1.…`) in the replica's file (0600).
    public static let keyPairSetting = "account.key"
    /// The settings that remember, list by list, how many epochs this device left in its
    /// account's envelope (so an envelope goes again only when a key is new).
    public static let deliveredPrefix = "envelope."

    /// The account's key pair this device keeps, if any.
    public static func keyPair(_ replica: Replica) -> X25519KeyPair? {
        guard let text = try? replica.setting(keyPairSetting) else { return nil }
        return try? AccountSession.keyPair(storageText: text)
    }

    /// Keeps the account's key pair (nil: forgets it, as signing out does).
    public static func keep(_ pair: X25519KeyPair?, in replica: Replica) throws {
        try replica.setSetting(keyPairSetting, pair.map(AccountSession.storageText))
    }

    /// What one exchange did.
    public struct Exchange: Sendable {
        /// Lists whose keys came from an envelope.
        public var opened: [ListID] = []
        /// Encrypted lists of the account this device still has no keys for.
        public var missing: [ListID] = []
    }

    /// Opens the envelopes of the encrypted lists in `memberships` this device has no keys for,
    /// then leaves its own keys, sealed to the account, for lists whose envelope lacks an epoch.
    /// An envelope that does not open (another key pair's, or a member's mistake) is left as it is.
    public static func exchange(
        _ memberships: [Wire.Membership], account: String, replica: Replica, keyring: SealKeyring,
        transport: HTTPSyncTransport
    ) async throws -> Exchange {
        var done = Exchange()
        guard let pair = keyPair(replica) else {
            done.missing = memberships.filter { $0.encrypted == true && !replica.isEncrypted($0.id) }.map(\.id)
            return done
        }
        for membership in memberships where membership.encrypted == true && !replica.isEncrypted(membership.id) {
            // A list this device pulled as plain was encrypted by an owner since: its copy moves to
            // the keys as a whole when its sync finds out (`adoptConversion`), never keys alone.
            if try replica.syncState(of: membership.id).epoch != nil { continue }
            guard let text = try await transport.envelope(of: membership.id),
                let keys = try? Envelope.open(text, list: membership.id, with: pair)
            else {
                done.missing.append(membership.id)
                continue
            }
            try replica.saveKeys(keys.storageText, for: membership.id)
            try replica.setSetting(deliveredPrefix + membership.id.description, String(keys.epochs.count))
            done.opened.append(membership.id)
        }
        try await deliver(
            memberships.map(\.id), account: account, pair: pair, replica: replica, keyring: keyring,
            transport: transport)
        return done
    }

    /// Leaves this device's keys of `lists` sealed to the account's public key where the
    /// account's envelope may lack one of them.
    public static func deliver(
        _ lists: [ListID], account: String, pair: X25519KeyPair, replica: Replica, keyring: SealKeyring,
        transport: HTTPSyncTransport
    ) async throws {
        for list in lists {
            guard let keys = keyring.keys(of: list) else { continue }
            let setting = deliveredPrefix + list.description
            if try replica.setting(setting) == String(keys.epochs.count) { continue }
            let envelope = try Envelope.seal(keys, to: pair.publicKey)
            try await transport.deliverEnvelopes([.init(account: account, envelope: envelope)], to: list)
            try replica.setSetting(setting, String(keys.epochs.count))
        }
    }
}

/// The keys of an encrypted list brought up to the server's (docs/encryption.md), what
/// `SyncEngine` asks for when a push is refused for its key or a page holds values under a newer
/// one: the newer epochs another member's rotation left in this account's envelope are taken;
/// and when the list awaits a rotation (a member left or was removed) and this account is an owner
/// or editor, this device makes the next epoch and leaves it to every member with a key pair in
/// one request, which the server takes only if no one rotated first.
public final class EnvelopeRenewal: ListKeyRenewal {
    let replica: Replica
    let keyring: SealKeyring
    let transport: HTTPSyncTransport

    /// Renewal for `replica`'s lists, whose keys `keyring` holds, through `transport`.
    public init(replica: Replica, keyring: SealKeyring, transport: HTTPSyncTransport) {
        self.replica = replica
        self.keyring = keyring
        self.transport = transport
    }

    /// Rounds of one renewal: a rotation refused because another device rotated first is
    /// followed by taking that one's key.
    static let maxRounds = 3

    public func renewKeys(of list: ListID) async throws -> Bool {
        guard let pair = Envelopes.keyPair(replica), keyring.keys(of: list) != nil else { return false }
        var renewed = false
        for _ in 0..<Self.maxRounds {
            let answer = try await transport.listEnvelope(of: list)
            if let text = answer.envelope, let sent = try? Envelope.open(text, list: list, with: pair),
                try takeKeys(sent, of: list)
            {
                renewed = true
            }
            guard let held = keyring.keys(of: list) else { return renewed }
            let keyEpoch = answer.keyEpoch ?? 0
            let next: ListKeys
            if Int64(held.current) > keyEpoch {
                // This device holds a newer key than the server knows (the server was restored from
                // a backup made before a rotation): handed on again, as it is.
                next = held
            } else if answer.rotationDue == true, Int64(held.current) == keyEpoch {
                next = held.rotated()
            } else {
                return renewed
            }
            do {
                try await rotate(list, to: next)
                return true
            } catch let error as SyncError where error.errorCode == .staleKey {
                continue  // another device rotated first (or the members changed): take its key
            } catch let error as SyncError where error.errorCode == .forbidden {
                return renewed  // a viewer, or an editor when no rotation is due
            }
        }
        return renewed
    }

    /// Takes the epochs of `sent` this device lacks (the same identity key only); true when there were any.
    func takeKeys(_ sent: ListKeys, of list: ListID) throws -> Bool {
        guard let held = keyring.keys(of: list), held.identity == sent.identity else { return false }
        let merged = sent.epochs.reduce(held) { keys, epoch in
            keys.epochs[epoch.key] == nil ? keys.adding(epoch: epoch.key, key: epoch.value) : keys
        }
        guard merged != held else { return false }
        try replica.saveKeys(merged.storageText, for: list)
        return true
    }

    /// Leaves `keys` (a new epoch) sealed to every member of `list` with a key pair, as a rotation
    /// to its newest epoch; kept here once the server took it.
    func rotate(_ list: ListID, to keys: ListKeys) async throws {
        let members = try await transport.members(of: list)
        var envelopes: [Wire.EnvelopeDelivery.Envelope] = []
        for member in members {
            guard let text = member.publicKey, let publicKey = Base64URL.decode(text) else { continue }
            envelopes.append(.init(account: member.account, envelope: try Envelope.seal(keys, to: publicKey)))
        }
        try await transport.deliverEnvelopes(envelopes, to: list, epoch: Int64(keys.current))
        try replica.saveKeys(keys.storageText, for: list)
        // This account's envelope holds every epoch now.
        try replica.setSetting(Envelopes.deliveredPrefix + list.description, String(keys.epochs.count))
    }
}
