import PlatformCrypto
import Synchronization

/// The server's VAPID key pair, read from the store (made there on first use) and kept for a
/// minute, so that a rotation (`basket-server push-key rotate`) reaches every instance soon.
final class PushKeys: Sendable {
    private struct Cached {
        var key: P256Key
        var read: UInt64
    }
    private let store: any PushStore
    private let clock: @Sendable () -> UInt64
    private let cached = Mutex<Cached?>(nil)
    /// How long a key read is used before the store is asked again, in milliseconds.
    static let maxAge: UInt64 = 60_000

    init(store: any PushStore, clock: @escaping @Sendable () -> UInt64) {
        self.store = store
        self.clock = clock
    }

    /// The key pair now.
    func current() throws -> P256Key {
        let now = clock()
        if let cached = cached.withLock({ $0 }), now >= cached.read, now - cached.read < Self.maxAge {
            return cached.key
        }
        let stored = try store.pushKey(orSave: Self.fresh(now: Int64(now)))
        let key = try P256Key(privateKey: stored.privateKey, publicKey: stored.publicKey)
        cached.withLock { $0 = Cached(key: key, read: now) }
        return key
    }

    /// A new key pair, as stored.
    static func fresh(now: Int64) throws -> StoredPushKey {
        let key = try P256Key.generate()
        guard let privateKey = key.privateKeyBytes else { throw CryptoError.library("a new key without its scalar") }
        return StoredPushKey(privateKey: privateKey, publicKey: key.publicKeyBytes, created: now)
    }

    /// Replaces the stored key pair with a new one, ending every subscription; returns how many.
    static func rotate(in store: any PushStore, now: Int64) throws -> Int {
        try store.rotatePushKey(try fresh(now: now))
    }
}
