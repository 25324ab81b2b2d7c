import BasketCore
import Foundation
import HTTPServer

/// Accounts, sign-in, tokens (devices), passwords. Password work runs on a ``WorkPool`` of its own.
extension BasketService {
    /// Answers `responder` with what `work` returns, computed on a password thread. Jobs are
    /// queued under the client's address group: sign-ins (`.first`) before signups (`.later`),
    /// addresses in turns, at most ``Configuration/passwordJobsPerAddress`` of one address at once.
    /// - Throws: 503 `busy` with Retry-After when the password queue is full; 429 `rate_limited`
    ///   when the address has its share under way.
    func onPasswordThread(
        _ responder: Responder, address: String, priority: WorkPool.Priority,
        _ work: @escaping @Sendable () throws -> HTTPResponse
    ) throws {
        switch passwords.answer(responder, key: address, priority: priority, work) {
        case .queued: return
        case .full:
            throw HTTPError(
                .busy, "the server is busy with other sign-ins; try again in a second",
                headers: [("Retry-After", "1")])
        case .keyFull:
            throw HTTPError(
                .rateLimited, "this address has sign-ins under way already; try again in a second",
                headers: [("Retry-After", "1")])
        }
    }

    static let namePattern = "3 to 64 characters: letters, digits, '.', '_' or '-'"

    /// The client's address group (`AddressGroup`), which per-address limits count: of the
    /// connection's peer, or behind a trusted proxy of the address it appended to `X-Forwarded-For`.
    func clientAddress(_ request: HTTPRequest) -> String {
        if configuration.trustForwardedFor, let forwarded = request.header("x-forwarded-for"),
            let last = forwarded.split(separator: ",").last
        {
            let address = last.trimmingCharacters(in: .whitespaces)
            if !address.isEmpty && address.utf8.count <= 64 { return AddressGroup.of(address) }
        }
        return AddressGroup.of(request.remoteAddress)
    }

    static func checkNewPassword(_ password: String) throws {
        guard password.count >= 8 else {
            throw HTTPError.badRequest("a password has at least 8 characters", code: .weakPassword)
        }
    }

    func createAccount(_ request: HTTPRequest, _ responder: Responder) throws {
        guard configuration.signup != .closed else {
            throw HTTPError(.signupClosed, "this server does not take new accounts")
        }
        try JSONBody.requireJSONContentType(request, stated: true)
        let body = try JSONBody.decode(Wire.Signup.self, from: request)
        let (name, password, invite) = (body.name, body.password, body.invite)
        guard name.count >= 3,
            name.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            })
        else { throw HTTPError.badRequest("an account name has \(Self.namePattern)", code: .invalidName) }
        try Self.checkNewPassword(password)
        if configuration.signup == .inviteOnly && invite == nil {
            throw HTTPError(.inviteRequired, "this server takes new accounts with a signup invite only")
        }
        // Everything that can refuse the signup without hashing its password comes first.
        let address = clientAddress(request)
        let now = Int64(configuration.clock())
        try checkAddress(address, "too many signups and failed sign-ins from this address")
        let signupInvite = configuration.signup == .inviteOnly ? invite.map(Passwords.codeHash) : nil
        if let signupInvite, try !store.signupInviteWorks(hash: signupInvite, now: now) {
            throw Self.invalidSignupInvite
        }
        // Counted before the name is looked up: "taken" is an answer a stranger may want for
        // many names, and each one counts against the address's signups (20 a minute).
        logins.count(address, now: configuration.monotonicClock())
        if try store.account(named: name.lowercased()) != nil { throw Self.accountExists(name) }
        let iterations = configuration.passwordIterations
        try onPasswordThread(responder, address: address, priority: .later) { [store] in
            let hash = Passwords.hash(password, iterations: iterations)
            do {
                let account = try store.createAccount(
                    name: name.lowercased(), passwordHash: hash, signupInvite: signupInvite, now: now)
                return answer(Wire.Account(id: account.id, name: account.name), status: 201)
            } catch StoreError.accountExists {
                throw Self.accountExists(name)
            } catch StoreError.noSuchInvite {
                throw Self.invalidSignupInvite
            }
        }
    }

    static func accountExists(_ name: String) -> HTTPError {
        HTTPError(.accountExists, "an account named '\(name.lowercased())' exists already")
    }

    static let invalidSignupInvite = HTTPError(
        .invalidInvite, "the signup invite is unknown, used up or expired")

    /// A new signup invite (for `--signup invite-only`), usable `uses` times until `expiresAt`:
    /// its hash is saved in `store`, the code is returned to be shown once.
    public static func createSignupInvite(in store: any AccountStore, uses: Int, expiresAt: Int64, now: Int64) throws
        -> String
    {
        let code = Passwords.inviteCode()
        try store.saveSignupInvite(hash: Passwords.codeHash(code), createdAt: now, expiresAt: expiresAt, uses: uses)
        return code
    }

    /// `429 rate_limited` saying `why`, and when to try again.
    static func rateLimited(_ why: String, retryAfter seconds: Int) -> HTTPError {
        HTTPError(
            .rateLimited, "\(why); try again in \(seconds) s", headers: [("Retry-After", "\(seconds)")])
    }

    /// Refuses a request that costs the address one of its events (a signup, an unknown code)
    /// while the address is throttled (``LoginLimiter/addressBlocked(_:now:)``).
    func checkAddress(_ address: String, _ why: String) throws {
        if let seconds = logins.addressBlocked(address, now: configuration.monotonicClock()) {
            throw Self.rateLimited(why, retryAfter: seconds)
        }
    }

    /// Lets a sign-in attempt go on (it counts as a failure until its password is checked), or
    /// refuses it while its address, or this name from it, is being throttled.
    func beginAttempt(name: String, address: String) throws {
        switch logins.attempt(name, address, now: configuration.monotonicClock()) {
        case nil: return
        case .address(let seconds):
            throw Self.rateLimited("too many failed sign-ins from this address", retryAfter: seconds)
        case .name(let seconds):
            throw Self.rateLimited("too many failed sign-ins as '\(name)'", retryAfter: seconds)
        }
    }

    /// Runs a sign-in attempt let through by ``beginAttempt(name:address:)``: `prepare` on this
    /// thread, then `work` on a password thread; the attempt ends without a verdict when either
    /// is refused before a password is checked.
    func signInAttempt<Prepared: Sendable>(
        _ responder: Responder, name: String, address: String, _ prepare: () throws -> Prepared,
        _ work: @escaping @Sendable (Prepared) throws -> HTTPResponse
    ) throws {
        try beginAttempt(name: name, address: address)
        do {
            let prepared = try prepare()
            try onPasswordThread(responder, address: address, priority: .first) { try work(prepared) }
        } catch {
            logins.abandoned(name, address)
            throw error
        }
    }

    /// Checks `password` against `account` (a decoy hash when nil: an unknown name costs the same
    /// time), counting a failure against the address; upgrades a weaker stored hash.
    func verify(_ password: String, of account: AccountRecord?, name: String, address: String) throws -> AccountRecord {
        let verified = Passwords.verify(password, against: account?.passwordHash ?? decoyHash)
        guard let account, verified else {
            logins.failed(name, address, now: configuration.monotonicClock())
            throw HTTPError(.invalidCredentials, "wrong account name or password")
        }
        logins.succeeded(name, address)
        if Passwords.iterations(of: account.passwordHash) < configuration.passwordIterations {
            try store.setPasswordHash(
                Passwords.hash(password, iterations: configuration.passwordIterations), of: account.id)
            sessions.forget(account: account.id)
        }
        return account
    }

    func createToken(_ request: HTTPRequest, _ responder: Responder) throws {
        try JSONBody.requireJSONContentType(request, stated: true)
        let body = try JSONBody.decode(Wire.Credentials.self, from: request)
        let name = body.name.lowercased()
        let password = body.password
        let device = body.device?.trimmingCharacters(in: .whitespaces)
        let address = clientAddress(request)
        try signInAttempt(responder, name: name, address: address, { try store.account(named: name) }) {
            [self] account in
            let account = try verify(password, of: account, name: name, address: address)
            let token = Passwords.newToken()
            let id = Secrets.randomHex(bytes: 8)
            try store.saveToken(
                hash: Passwords.tokenHash(token), id: id, account: account.id,
                device: device.flatMap { $0.isEmpty ? nil : $0 } ?? "unnamed device",
                createdAt: Int64(configuration.clock()))
            return answer(Wire.NewToken(token: token, account: account.name, id: id), status: 201)
        }
    }

    /// A signed-in request's account, its token's hash and the token as the devices list shows it.
    struct Session {
        var account: AccountRecord
        var token: TokenRecord
        var tokenHash: String
    }

    /// The request's session. A token unused for ``Configuration/tokenIdleSeconds``, or older than
    /// ``Configuration/tokenLifetimeSeconds``, has expired: it is deleted and the request is a 401.
    /// The account of the request's token when its session is in the cache, nil otherwise (no
    /// read of the store, no check of its age: the route's ``session(_:)`` does both).
    func cachedAccount(_ request: HTTPRequest) -> Int64? {
        guard let token = request.bearerToken, token.utf8.count <= 256 else { return nil }
        return sessions.lookup(Passwords.tokenHash(token), now: configuration.monotonicClock()).hit?.account.id
    }

    func session(_ request: HTTPRequest) throws -> Session {
        let challenge = [("WWW-Authenticate", "Bearer")]
        guard let token = request.bearerToken, token.utf8.count <= 256 else {
            throw HTTPError(.unauthorized, "this route needs 'Authorization: Bearer TOKEN'", headers: challenge)
        }
        let hash = Passwords.tokenHash(token)
        let clock = configuration.monotonicClock()
        let (cached, generation) = sessions.lookup(hash, now: clock)
        let account: AccountRecord
        var info: TokenRecord
        if let cached {
            (account, info) = (cached.account, cached.token)
        } else {
            guard let (stored, storedInfo) = try store.session(forTokenHash: hash) else {
                throw HTTPError(.unauthorized, "the token is unknown or revoked", headers: challenge)
            }
            (account, info) = (stored, storedInfo)
            sessions.insert(hash, account: account, token: info, ifUnchangedSince: generation, now: clock)
        }
        let now = Int64(configuration.clock())
        let idle = Int64(configuration.tokenIdleSeconds) * 1000
        let lifetime = Int64(configuration.tokenLifetimeSeconds) * 1000
        if now - info.lastUsed > idle || now - info.created > lifetime {
            try store.revokeToken(hash: hash)
            sessions.forget(account: account.id)
            throw HTTPError(
                .tokenExpired,
                "this device's sign-in expired (unused for \(configuration.tokenIdleSeconds / 86_400) days, or older "
                    + "than \(configuration.tokenLifetimeSeconds / 86_400) days): sign in again", headers: challenge)
        }
        // The last use is written at most once an hour, not on every request.
        if now - info.lastUsed > 3_600_000 {
            try store.touchToken(hash: hash, at: now)
            sessions.touched(hash, at: now)
            info.lastUsed = now
        }
        return Session(account: account, token: info, tokenHash: hash)
    }

    func authenticate(_ request: HTTPRequest) throws -> AccountRecord { try session(request).account }

    func whoAmI(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        return answer(Wire.Account(id: account.id, name: account.name, serverTime: configuration.clock()))
    }

    func listTokens(_ request: HTTPRequest) throws -> HTTPResponse {
        let current = try session(request)
        let tokens = try store.tokens(of: current.account.id).map { token in
            Wire.Token(
                id: token.id, device: token.device, created: token.created, lastUsed: token.lastUsed,
                current: token.id == current.token.id)
        }
        return answer(Wire.Tokens(tokens: tokens))
    }

    func revokeCurrentToken(_ request: HTTPRequest) throws -> HTTPResponse {
        let current = try session(request)
        try store.revokeToken(hash: current.tokenHash)
        sessions.forget(account: current.account.id)
        Self.dismissRevoked(current.account.id, watchers: watchers, store: store)
        return HTTPResponse(status: 204)
    }

    func revokeToken(_ request: HTTPRequest) throws -> HTTPResponse {
        let current = try session(request)
        let id = request.pathParameters["id"] ?? ""
        guard try store.revokeToken(id: id, of: current.account.id) else {
            throw HTTPError.notFound("this account has no device '\(id.prefix(32))'")
        }
        sessions.forget(account: current.account.id)
        Self.dismissRevoked(current.account.id, watchers: watchers, store: store)
        return HTTPResponse(status: 204)
    }

    /// Signs out every device of the account, this one included ("sign out everywhere").
    func revokeAllTokens(_ request: HTTPRequest) throws -> HTTPResponse {
        let current = try session(request)
        let revoked = try store.revokeTokens(of: current.account.id, keeping: nil)
        sessions.forget(account: current.account.id)
        Self.dismissRevoked(current.account.id, watchers: watchers, store: store)
        return answer(Wire.Revoked(revoked: revoked))
    }

    /// A signed-in request confirmed with the account's password, checked as at sign-in (counted
    /// against the name and address, on the password threads): `work` runs with the session, the
    /// body (checked first by `checking`, before any hashing) and the account the password proved.
    func confirmedWithPassword<Body: WireRequest>(
        _ request: HTTPRequest, _ responder: Responder, _: Body.Type, password: KeyPath<Body, String>,
        checking check: (Body) throws -> Void = { _ in },
        _ work: @escaping @Sendable (Session, Body, AccountRecord) throws -> HTTPResponse
    ) throws {
        let current = try session(request)
        let body = try JSONBody.decode(Body.self, from: request)
        try check(body)
        let (address, name, password) = (clientAddress(request), current.account.name, body[keyPath: password])
        try signInAttempt(responder, name: name, address: address, {}) { [self] _ in
            try work(current, body, try verify(password, of: current.account, name: name, address: address))
        }
    }

    /// Changes the password (the current one is checked, as at sign-in) and signs out every other device.
    func changePassword(_ request: HTTPRequest, _ responder: Responder) throws {
        try confirmedWithPassword(
            request, responder, Wire.PasswordChange.self, password: \.password,
            checking: { try Self.checkNewPassword($0.newPassword) }
        ) { [self] current, body, account in
            // A key pair's private key is wrapped under the password's key: the new password
            // comes with the new wrap, stored in the same statement, or not at all.
            guard
                try store.setPassword(
                    hash: Passwords.hash(body.newPassword, iterations: configuration.passwordIterations),
                    wrappedKey: body.wrappedKey, of: account.id)
            else {
                throw HTTPError(
                    .rewrapRequired,
                    "this account has a key pair: a new password comes with its private key wrapped again")
            }
            let revoked = try store.revokeTokens(of: account.id, keeping: current.tokenHash)
            sessions.forget(account: account.id)
            Self.dismissRevoked(account.id, watchers: watchers, store: store)
            return answer(Wire.Revoked(revoked: revoked))
        }
    }

    /// Deletes the signed-in account (OWASP ASVS 8.3.2): its password is checked as at sign-in;
    /// its lists go as ``AccountStore/deleteAccount(_:)`` says; every device is signed out and its
    /// parked long-polls are answered (on every instance: the store tells them).
    func deleteAccount(_ request: HTTPRequest, _ responder: Responder) throws {
        try confirmedWithPassword(request, responder, Wire.AccountDeletion.self, password: \.password) {
            [self] _, _, account in
            let done = try store.deleteAccount(account.id)
            sessions.forget(account: account.id)
            for list in done.deleted {
                watchers.dismissAll(list: list, with: HTTPError.notFound("no such list").response)
            }
            Self.dismissRevoked(account.id, watchers: watchers, store: store)
            return answer(
                Wire.AccountDeleted(
                    deleted: done.deleted.count, handedOver: done.handedOver.count, left: done.left.count))
        }
    }
}

/// Password hashes, tokens and invite codes.
enum Passwords {
    /// `pbkdf2-sha256$ITERATIONS$SALT$HASH` (hex).
    static func hash(_ password: String, iterations: Int) -> String {
        let salt = Secrets.randomBytes(16)
        let derived = Secrets.pbkdf2SHA256(password: password, salt: salt, iterations: iterations)
        return "pbkdf2-sha256$\(iterations)$\(Hex.encode(salt))$\(Hex.encode(derived))"
    }

    /// The iteration count of a stored hash (0 when it is not one of ours).
    static func iterations(of stored: String) -> Int {
        let parts = stored.split(separator: "$")
        guard parts.count == 4, parts[0] == "pbkdf2-sha256" else { return 0 }
        return Int(parts[1]) ?? 0
    }

    static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let iterations = Int(parts[1]),
            let salt = Hex.bytes(parts[2]), let expected = Hex.bytes(parts[3])
        else { return false }
        let derived = Secrets.pbkdf2SHA256(
            password: password, salt: salt, iterations: iterations, length: expected.count)
        return Secrets.constantTimeEqual(derived, expected)
    }

    /// 256 random bits, as hex.
    static func newToken() -> String { Secrets.randomHex(bytes: 32) }

    /// Tokens are stored as SHA-256 hashes: a stolen database does not hold usable tokens.
    static func tokenHash(_ token: String) -> String { Hex.encode(Secrets.sha256(token)) }

    /// Invite codes are stored as the SHA-256 of their canonical form (upper case, no dashes or
    /// spaces), so "abcd efgh…" as typed finds "ABCD-EFGH-…".
    static func codeHash(_ code: String) -> String {
        let canonical = code.uppercased().unicodeScalars.filter { $0 != "-" && $0 != " " }
        return Hex.encode(SHA256.hash(Array(String(String.UnicodeScalarView(canonical)).utf8)))
    }

    /// 80 random bits in an easy-to-type alphabet: `XXXX-XXXX-XXXX-XXXX`.
    static func inviteCode() -> String {
        let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ23456789")
        let bytes = Secrets.randomBytes(16)
        let characters = bytes.map { alphabet[Int($0) % alphabet.count] }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<($0 + 4)]) }.joined(separator: "-")
    }
}
