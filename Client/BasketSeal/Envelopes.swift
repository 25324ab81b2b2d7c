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
