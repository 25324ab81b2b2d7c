import BasketCore
public import BasketReplica
public import PlatformCrypto

/// What a device does with an account's secrets (docs/encryption.md), the same for every client:
/// the password never leaves the device (the server gets the login secret it gives); the
/// account's key pair is made once, its private key kept on the server wrapped under the
/// password's key and under a recovery code's, so a new device signed in with the password, or
/// a person who forgot it but kept the code, opens every encrypted list again; a new password
/// wraps the same private key again and rekeys nothing.
public enum AccountSession {
    /// What signing in gave: the token, the account's key pair (nil when the server's does not
    /// open with this password) and, when the key pair was made just now, its recovery code to
    /// show once.
    public struct SignedIn: Sendable {
        /// The bearer token.
        public var token: String
        /// The account's key pair.
        public var keyPair: X25519KeyPair?
        /// The recovery code of a key pair made just now: shown once, kept nowhere.
        public var recoveryCode: String?
    }

    /// Creates the account (`name`, `password`), signs it in and makes its key pair.
    public static func signUp(
        name: String, password: String, invite: String?, device: String?, at server: HTTPSyncTransport
    ) async throws -> SignedIn {
        let stretched = AccountKeys.stretch(password: password, account: name.lowercased())
        try await server.signUp(name: name, password: stretched.loginText, invite: invite)
        let token = try await server.login(name: name, password: stretched.loginText, device: device)
        return try await withKeys(token: token, stretched: stretched, at: server.with(token: token))
    }

    /// Signs in with the login secret `password` gives, and takes the account's key pair from
    /// the server (making it when the account has none). An account made before login secrets
    /// (the server hashed the password itself) is signed in with the password once and moved to
    /// the login secret.
    public static func signIn(
        name: String, password: String, device: String?, at server: HTTPSyncTransport
    ) async throws -> SignedIn {
        let stretched = AccountKeys.stretch(password: password, account: name.lowercased())
        let token: String
        do {
            token = try await server.login(name: name, password: stretched.loginText, device: device)
        } catch let refused as SyncError where refused.errorCode == .invalidCredentials {
            guard let old = try? await server.login(name: name, password: password, device: device) else {
                throw refused
            }
            // The other devices of the account are signed out by the change, as by any new password.
            _ = try await server.with(token: old).changePassword(from: password, to: stretched.loginText)
            token = old
        }
        return try await withKeys(token: token, stretched: stretched, at: server.with(token: token))
    }

    /// The account's key pair from the server, unwrapped with `stretched`'s key; made and kept
    /// there when the account has none.
    static func withKeys(token: String, stretched: AccountKeys.Stretched, at server: HTTPSyncTransport)
        async throws -> SignedIn
    {
        if let stored = try await server.accountKeys() {
            let pair = try? unwrap(stored.wrappedKey, publicKey: stored.publicKey, key: stretched.wrap)
            return SignedIn(token: token, keyPair: pair)
        }
        let pair = X25519KeyPair.generate()
        let code = AccountKeys.newRecoveryCode()
        try await server.setAccountKeys(
            Wire.KeySetup(
                password: stretched.loginText, publicKey: Base64URL.encode(pair.publicKey),
                wrappedKey: AccountKeys.wrap(
                    pair.privateKey, key: stretched.wrap, purpose: AccountKeys.privateKeyPurpose),
                recoveryKey: AccountKeys.wrap(
                    pair.privateKey, key: try AccountKeys.recoveryKey(code), purpose: AccountKeys.privateKeyPurpose),
                recoverySecret: try AccountKeys.recoverySecret(code)))
        return SignedIn(token: token, keyPair: pair, recoveryCode: code)
    }

    /// The key pair whose private key `wrapped` holds under `key`, when its public key is `publicKey`.
    /// - Throws: ``SealError/forged`` when it does not open, or opens to another key pair.
    static func unwrap(_ wrapped: String, publicKey: String, key: [UInt8]) throws(SealError) -> X25519KeyPair {
        let privateKey = try AccountKeys.unwrap(wrapped, key: key, purpose: AccountKeys.privateKeyPurpose)
        guard let pair = try? X25519KeyPair(privateKey: privateKey), Base64URL.encode(pair.publicKey) == publicKey
        else { throw .forged }
        return pair
    }

    /// A new password: the private key (read back from the server with the current password's
    /// key) wrapped again under the new one's, sent with the change. Returns the devices signed out.
    public static func changePassword(
        name: String, from old: String, to new: String, at server: HTTPSyncTransport
    ) async throws -> Int {
        let before = AccountKeys.stretch(password: old, account: name.lowercased())
        let after = AccountKeys.stretch(password: new, account: name.lowercased())
        var wrapped: String?
        if let stored = try await server.accountKeys() {
            let pair = try unwrap(stored.wrappedKey, publicKey: stored.publicKey, key: before.wrap)
            wrapped = AccountKeys.wrap(pair.privateKey, key: after.wrap, purpose: AccountKeys.privateKeyPurpose)
        }
        return try await server.changePassword(from: before.loginText, to: after.loginText, wrappedKey: wrapped)
    }

    /// A forgotten password's way back: the recovery code opens the private key the server keeps
    /// wrapped under its key, which is wrapped again under `newPassword`'s; every other device is
    /// signed out and this one signed in.
    public static func recover(
        name: String, code: String, newPassword: String, device: String?, at server: HTTPSyncTransport
    ) async throws -> SignedIn {
        let secret = try AccountKeys.recoverySecret(code)
        let stored = try await server.recoveryKeys(name: name, secret: secret)
        let pair = try unwrap(stored.recoveryKey, publicKey: stored.publicKey, key: try AccountKeys.recoveryKey(code))
        let stretched = AccountKeys.stretch(password: newPassword, account: name.lowercased())
        let token = try await server.recover(
            name: name, secret: secret, newPassword: stretched.loginText,
            wrappedKey: AccountKeys.wrap(pair.privateKey, key: stretched.wrap, purpose: AccountKeys.privateKeyPurpose),
            device: device)
        return SignedIn(token: token, keyPair: pair)
    }

    /// How a device keeps its account's private key: `X1.` base64url(private key).
    public static func storageText(_ pair: X25519KeyPair) -> String { "X1." + Base64URL.encode(pair.privateKey) }

    /// The key pair ``storageText(_:)`` kept.
    public static func keyPair(storageText text: String) throws(SealError) -> X25519KeyPair {
        guard text.hasPrefix("X1."), let bytes = Base64URL.decode(text.dropFirst(3)), bytes.count == 32,
            let pair = try? X25519KeyPair(privateKey: bytes)
        else { throw .badKey }
        return pair
    }
}
