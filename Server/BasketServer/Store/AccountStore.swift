public import BasketCore

/// Accounts, their passwords and signed-in devices (tokens), and signup invites: what
/// ``BasketService``'s account routes (`BasketService+Accounts.swift`) need of a store.
public protocol AccountStore: Sendable {
    /// The account with this name, if any.
    func account(named name: String) throws -> AccountRecord?
    /// Replaces an account's password hash (a stronger hash after sign-in, or a new password).
    func setPasswordHash(_ hash: String, of account: Int64) throws
    /// Deletes an account with its tokens: lists it alone is a member of go with their logs;
    /// of a shared list it was the last owner of, another member becomes owner (an editor first,
    /// then the longest-standing); it leaves the others (its invites to them go). The ids its
    /// devices wrote under stay bound to it, so nobody writes under them. One transaction.
    func deleteAccount(_ account: Int64) throws -> AccountDeletion
    /// Creates an account; with `signupInvite` (a signup invite's hash) only while that invite
    /// has uses left before `now`, using one, in the same transaction.
    /// - Throws: ``StoreError/accountExists``, ``StoreError/noSuchInvite``.
    func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws -> AccountRecord
    /// Whether the signup invite hashed `hash` has a use left at `now` (looked up before a
    /// signup's password is hashed; ``createAccount(name:passwordHash:signupInvite:now:)`` uses it).
    func signupInviteWorks(hash: String, now: Int64) throws -> Bool
    /// A signup invite (for `--signup invite-only`), usable `uses` times until `expiresAt`.
    func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws
    /// Keeps a new token by its hash (never the token itself), with its public `id` and device name.
    func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws
    /// The account a token belongs to, and the token as its devices list shows it.
    func session(forTokenHash hash: String) throws -> (AccountRecord, TokenRecord)?
    /// Records that the token was used at `now`.
    func touchToken(hash: String, at now: Int64) throws
    /// The account's tokens, oldest first.
    func tokens(of account: Int64) throws -> [TokenRecord]
    /// Revokes the token hashed `hash` (signing out); nothing when there is none.
    func revokeToken(hash: String) throws
    /// Revokes the account's token with this public id; false when it has none.
    func revokeToken(id: String, of account: Int64) throws -> Bool
    /// Revokes every token of the account but the one hashed `keeping`; returns how many.
    func revokeTokens(of account: Int64, keeping: String?) throws -> Int
}

extension AccountStore {
    /// Creates an account without a signup invite.
    public func createAccount(name: String, passwordHash: String) throws -> AccountRecord {
        try createAccount(name: name, passwordHash: passwordHash, signupInvite: nil, now: 0)
    }

    /// The account a token belongs to.
    public func account(forTokenHash hash: String) throws -> AccountRecord? { try session(forTokenHash: hash)?.0 }
}

/// An account on the server.
public struct AccountRecord: Hashable, Sendable {
    public var id: Int64
    /// The name the account signs in with.
    public var name: String
    /// The password's hash (PBKDF2-SHA256 with its salt and iterations), never the password.
    public var passwordHash: String
}

/// A signed-in device as its account sees it: never the token, nor its hash.
public struct TokenRecord: Hashable, Sendable {
    /// A public id (16 hex digits) for listing and revoking.
    public var id: String
    /// The device's name, as it gave it when it signed in.
    public var device: String
    /// Unix milliseconds.
    public var created: Int64
    /// Unix milliseconds; updated at most once an hour.
    public var lastUsed: Int64

    /// A token record with these fields.
    public init(id: String, device: String, created: Int64, lastUsed: Int64) {
        self.id = id
        self.device = device
        self.created = created
        self.lastUsed = lastUsed
    }
}

/// What ``AccountStore/deleteAccount(_:)`` did with the account's lists.
public struct AccountDeletion: Sendable, Hashable {
    /// Lists it alone was a member of: deleted.
    public var deleted: [ListID] = []
    /// Shared lists it was the last owner of: another member is owner now.
    public var handedOver: [ListID] = []
    /// Shared lists it left.
    public var left: [ListID] = []

    /// Nothing yet.
    public init() {}
}
