import BasketCore
import Foundation
public import HTTPServer

/// The sync service: accounts, tokens, lists with members and invites, and each list's
/// operation log with push, pull and long-poll. It answers HTTP requests through a ``Router``
/// and keeps its state in a ``Store``.
public final class BasketService: Sendable {
    /// Settings and their defaults.
    public struct Configuration: Sendable {
        /// PBKDF2-HMAC-SHA256 iterations for new passwords (OWASP's count for 2023 on); a stored
        /// hash with fewer is rehashed at the next successful sign-in.
        public var passwordIterations = 600_000
        /// Threads that hash passwords (off the HTTP threads).
        public var passwordThreads = 1
        /// Signups and sign-ins that may wait for a password thread; more get 503 `busy`.
        public var passwordQueue = 16
        /// Who may create an account.
        public var signup = Signup.open
        /// Take the client's address from the last `X-Forwarded-For` entry (the proxy's view)
        /// instead of the connection's peer. Only behind a proxy that sets it.
        public var trustForwardedFor = false
        /// Long-polls one account may have parked at once; more get 429.
        public var maxWatchersPerAccount = 64
        /// Operations in one push at most.
        public var maxBatch = 10_000
        /// Operations in one pulled page at most (and the default page size).
        public var maxPage = 5_000
        /// Encoded operations in one pulled page at most, in bytes (a page holds at least one).
        public var maxPageBytes = Page.defaultMaxBytes
        /// How long a long-poll waits at most, in seconds: a request may ask for up to
        /// ``BasketService/longestWait``; a longer wait than this setting is shortened to it.
        public var maxWaitSeconds = 30.0
        /// Failed sign-ins from one client address in a minute before 429 (any account name).
        public var failedLoginsPerAddress = 20
        /// How long an invite code works.
        public var inviteSeconds = 7 * 24 * 3600
        /// The server's wall clock in Unix milliseconds.
        public var clock: @Sendable () -> UInt64 = { HybridClock.wallClockMilliseconds() }

        public init() {}
    }

    public let store: any Store
    public let configuration: Configuration
    public let metrics = Metrics()
    let watchers: Watchers
    let logins: LoginLimiter
    let passwords: PasswordWork
    /// Verified when a sign-in names no account, so an unknown name costs what a known one does.
    let decoyHash: String

    /// Who may create an account (``Configuration/signup``).
    public enum Signup: String, Sendable, CaseIterable {
        /// Anyone who can reach the server.
        case open
        /// Nobody: the accounts there are are all there will be.
        case closed
    }

    /// The longest `wait` (seconds) the API lets a long-poll ask for.
    public static let longestWait = 30

    public init(store: any Store, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        logins = LoginLimiter(perAddress: configuration.failedLoginsPerAddress)
        passwords = PasswordWork(threads: configuration.passwordThreads, queueLimit: configuration.passwordQueue)
        decoyHash = Passwords.hash("decoy password", iterations: configuration.passwordIterations)
        watchers = Watchers(maxPerAccount: configuration.maxWatchersPerAccount) { list, after, limit in
            do {
                return Self.pageResponse(
                    try store.page(of: list, after: after, limit: limit, maxBytes: configuration.maxPageBytes),
                    serverTime: configuration.clock())
            } catch {
                Router.reportInternalError("reading the log of \(list): \(error)")
                return HTTPError(500, "internal", "internal error").response
            }
        }
        // Pushes to other instances on the same store wake this one's long-polls too.
        let watchers = self.watchers
        store.watchCommits { event in
            switch event {
            case .committed(let list, let cursor): watchers.publish(list: list, cursor: cursor)
            case .resumed: watchers.refresh { try store.head(of: $0).cursor }
            }
        }
    }

    /// The number of parked long-polls.
    public var watcherCount: Int { watchers.count }

    /// Answers every parked long-poll (so clients re-poll elsewhere) and refuses new ones.
    public func shutdown() {
        watchers.close()
        passwords.close()
    }

    /// Every route of the API; `/metrics` too unless `servingMetrics` is false (it is then
    /// served on its own address, ``metricsRouter()``).
    public func router(servingMetrics: Bool = true) -> Router {
        Router { r in
            r.on("GET", "/healthz") { _ in json(["status": "ok"]) }
            if servingMetrics { r.on("GET", "/metrics", answer: metricsPage) }
            r.on("GET", "/v1/time") { [self] _ in json(["serverTime": configuration.clock()]) }
            r.on("POST", "/v1/accounts", createAccount)
            r.on("POST", "/v1/tokens", createToken)
            r.on("DELETE", "/v1/tokens/current", answer: revokeToken)
            r.on("GET", "/v1/account", answer: whoAmI)
            r.on("POST", "/v1/lists", answer: createList)
            r.on("GET", "/v1/lists", answer: listLists)
            r.on("GET", "/v1/lists/{id}/members", answer: listMembers)
            r.on("DELETE", "/v1/lists/{id}/members/{account}", answer: removeMember)
            r.on("POST", "/v1/lists/{id}/invites", answer: createInvite)
            r.on("POST", "/v1/invites/{code}", answer: redeemInvite)
            r.on("POST", "/v1/lists/{id}/ops", answer: push)
            r.on("GET", "/v1/lists/{id}/ops", pull)
        }
    }

    /// `/metrics` and `/healthz` alone, for a private address (`--metrics-listen`).
    public func metricsRouter() -> Router {
        Router { r in
            r.on("GET", "/healthz") { _ in json(["status": "ok"]) }
            r.on("GET", "/metrics", answer: metricsPage)
        }
    }

    func metricsPage(_ request: HTTPRequest) -> HTTPResponse {
        let statistics = try? store.statistics()
        let text = metrics.render(
            gauges: [
                ("basket_watchers", "Long-polls waiting for operations.", Double(watchers.count)),
                ("basket_operations_stored", "Operations in the store.", Double(statistics?.operations ?? 0)),
                ("basket_lists", "Lists in the store.", Double(statistics?.lists ?? 0)),
                ("basket_accounts", "Accounts in the store.", Double(statistics?.accounts ?? 0)),
                ("basket_database_bytes", "Size of the store's database.", Double(statistics?.databaseBytes ?? 0)),
                (
                    "basket_password_queue", "Sign-ins and signups waiting for a password thread.",
                    Double(passwords.waiting)
                ),
            ] + store.gauges().map { ($0.name, $0.help, $0.value) })
        return .body(Array(text.utf8), contentType: "text/plain; version=0.0.4")
    }

    // MARK: Accounts

    static let namePattern = "3 to 64 characters: letters, digits, '.', '_' or '-'"

    /// The client's address: the connection's peer, or behind a trusted proxy the address it
    /// appended to `X-Forwarded-For`.
    func clientAddress(_ request: HTTPRequest) -> String {
        if configuration.trustForwardedFor, let forwarded = request.header("x-forwarded-for"),
            let last = forwarded.split(separator: ",").last
        {
            let address = last.trimmingCharacters(in: .whitespaces)
            if !address.isEmpty && address.utf8.count <= 64 { return address }
        }
        return request.remoteAddress
    }

    func createAccount(_ request: HTTPRequest, _ responder: Responder) throws {
        guard configuration.signup == .open else {
            throw HTTPError(403, "signup_closed", "this server does not take new accounts")
        }
        let body = try JSONBody(request, allowed: ["name", "password"])
        let name = try body.string("name", maxBytes: 64)!
        let password = try body.string("password", maxBytes: 1024)!
        guard name.count >= 3,
            name.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            })
        else { throw HTTPError.badRequest("an account name has \(Self.namePattern)", code: "invalid_name") }
        guard password.count >= 8 else {
            throw HTTPError.badRequest("a password has at least 8 characters", code: "weak_password")
        }
        let iterations = configuration.passwordIterations
        try passwords.answer(responder) { [store] in
            let hash = Passwords.hash(password, iterations: iterations)
            do {
                let account = try store.createAccount(name: name.lowercased(), passwordHash: hash)
                return json(["id": account.id, "name": account.name], status: 201)
            } catch StoreError.accountExists {
                throw HTTPError(409, "account_exists", "an account named '\(name.lowercased())' exists already")
            }
        }
    }

    func createToken(_ request: HTTPRequest, _ responder: Responder) throws {
        let body = try JSONBody(request, allowed: ["name", "password"])
        let name = try body.string("name", maxBytes: 64)!.lowercased()
        let password = try body.string("password", maxBytes: 1024)!
        let address = clientAddress(request)
        let now = LoginLimiter.monotonic()
        if let retryAfter = logins.addressBlocked(address, now: now) {
            throw HTTPError(
                429, "rate_limited", "too many failed sign-ins from this address; try again in \(retryAfter) s",
                headers: [("Retry-After", "\(retryAfter)")])
        }
        if let retryAfter = logins.pairDelayed(name, address, now: now) {
            throw HTTPError(
                429, "rate_limited", "too many failed sign-ins as '\(name)'; try again in \(retryAfter) s",
                headers: [("Retry-After", "\(retryAfter)")])
        }
        let account = try store.account(named: name)
        try passwords.answer(responder) { [self] in
            // An unknown name is checked against a decoy hash: it costs what a known one costs.
            let verified = Passwords.verify(password, against: account?.passwordHash ?? decoyHash)
            guard let account, verified else {
                logins.failed(name, address, now: LoginLimiter.monotonic())
                throw HTTPError(401, "invalid_credentials", "wrong account name or password")
            }
            logins.succeeded(name, address)
            if Passwords.iterations(of: account.passwordHash) < configuration.passwordIterations {
                try store.setPasswordHash(
                    Passwords.hash(password, iterations: configuration.passwordIterations), of: account.id)
            }
            let token = Passwords.newToken()
            try store.saveToken(
                hash: Passwords.tokenHash(token), account: account.id, createdAt: Int64(configuration.clock()))
            return json(["token": token, "account": account.name], status: 201)
        }
    }

    func revokeToken(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try authenticate(request)
        try store.revokeToken(hash: Passwords.tokenHash(request.bearerToken!))
        return HTTPResponse(status: 204)
    }

    func whoAmI(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        return json(["id": account.id, "name": account.name, "serverTime": configuration.clock()])
    }

    func authenticate(_ request: HTTPRequest) throws -> Account {
        let challenge = [("WWW-Authenticate", "Bearer")]
        guard let token = request.bearerToken else {
            throw HTTPError(401, "unauthorized", "this route needs 'Authorization: Bearer TOKEN'", headers: challenge)
        }
        guard let account = try store.account(forTokenHash: Passwords.tokenHash(token)) else {
            throw HTTPError(401, "unauthorized", "the token is unknown or revoked", headers: challenge)
        }
        return account
    }

    // MARK: Lists

    func listID(_ request: HTTPRequest) throws -> ListID {
        guard let raw = request.pathParameters["id"], let id = ListID(hex: raw.lowercased()) else {
            throw HTTPError.notFound("no such list")
        }
        return id
    }

    /// The caller's role on the list; a list the caller is not a member of does not exist for them.
    func membership(_ request: HTTPRequest) throws -> (Account, ListID, Role) {
        let account = try authenticate(request)
        let list = try listID(request)
        guard let role = try store.role(of: account.id, in: list) else { throw HTTPError.notFound("no such list") }
        return (account, list, role)
    }

    static func membershipJSON(_ m: Membership) -> [String: Any] {
        ["id": m.list.description, "role": m.role.rawValue, "epoch": m.epoch, "cursor": m.cursor]
    }

    func createList(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let body = try JSONBody(request, allowed: ["id"])
        let raw = try body.string("id", maxBytes: 32)!
        guard let list = ListID(hex: raw.lowercased()) else {
            throw HTTPError.badRequest("'id' is 32 hex digits (the list id the client made)", code: "invalid_id")
        }
        do {
            return json(Self.membershipJSON(try store.createList(list, owner: account.id)), status: 201)
        } catch StoreError.listExists {
            if let existing = try store.memberships(of: account.id).first(where: { $0.list == list }) {
                return json(Self.membershipJSON(existing))  // creating twice is harmless
            }
            throw HTTPError(409, "list_exists", "a list with this id exists; join it with an invite")
        }
    }

    func listLists(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        return json(["lists": try store.memberships(of: account.id).map(Self.membershipJSON)])
    }

    func listMembers(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, _) = try membership(request)
        return json(["members": try store.members(of: list).map { ["account": $0.account, "role": $0.role.rawValue] }])
    }

    func removeMember(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        let name = request.pathParameters["account"]?.lowercased() ?? ""
        guard let target = try store.account(named: name), try store.role(of: target.id, in: list) != nil else {
            throw HTTPError.notFound("'\(name)' is not a member of this list")
        }
        guard target.id == account.id || role == .owner else {
            throw HTTPError(403, "forbidden", "only an owner can remove other members")
        }
        do {
            try store.removeMember(target.id, from: list)
        } catch StoreError.lastOwner {
            throw HTTPError(409, "last_owner", "the last owner cannot leave while others are members")
        }
        return HTTPResponse(status: 204)
    }

    func createInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, role) = try membership(request)
        let body = try JSONBody(request, allowed: ["role"])
        let raw = try body.string("role", required: false, maxBytes: 16) ?? "editor"
        guard let invited = Role(rawValue: raw) else {
            throw HTTPError.badRequest("'role' is owner, editor or viewer", code: "invalid_role")
        }
        guard role != .viewer, invited <= role else {
            throw HTTPError(403, "forbidden", "a \(role.rawValue) cannot invite as \(invited.rawValue)")
        }
        let code = Passwords.inviteCode()
        let expires = Int64(configuration.clock()) + Int64(configuration.inviteSeconds) * 1000
        try store.saveInvite(code: code, list: list, role: invited, createdBy: account.id, expiresAt: expires)
        return json(
            ["code": code, "role": invited.rawValue, "list": list.description, "expiresAt": expires], status: 201)
    }

    func redeemInvite(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let code = request.pathParameters["code"] ?? ""
        do {
            return json(
                Self.membershipJSON(
                    try store.redeemInvite(code: code, account: account.id, now: Int64(configuration.clock()))))
        } catch StoreError.noSuchInvite {
            throw HTTPError.notFound("no such invite, or it expired")
        }
    }

    // MARK: The log

    func push(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, role) = try membership(request)
        guard role.canPush else { throw HTTPError(403, "forbidden", "a viewer cannot change the list") }
        let encoded: [UInt8]
        try JSONBody.requireJSONContentType(request)
        if let fast = JSONBody.onlyString(request.body, key: "ops") {
            encoded = fast
        } else {
            encoded = Array(
                try JSONBody(request, allowed: ["ops"]).string("ops", maxBytes: .max, allowControl: true)!.utf8)
        }
        let operations: [BasketCore.Operation]
        do {
            operations = try OperationCodec.decode(encoded)
        } catch {
            throw HTTPError.badRequest("'ops' is not a valid operation encoding: \(error)", code: "invalid_ops")
        }
        guard operations.count <= configuration.maxBatch else {
            throw HTTPError.badRequest(
                "a push holds at most \(configuration.maxBatch) operations", code: "batch_too_large")
        }
        if let stray = operations.first(where: { $0.list != list }) {
            throw HTTPError.badRequest("operation for list \(stray.list) pushed to list \(list)", code: "wrong_list")
        }
        let now = configuration.clock()
        if let latest = operations.map(\.timestamp).max() {
            do throws(ClockSkewError) {
                try HybridClock.check(latest, wallMilliseconds: now)
            } catch {
                let response = json(
                    [
                        "error": ClockSkewError.code, "message": error.description, "serverTime": now,
                        "offsetMilliseconds": error.offsetMilliseconds,
                    ], status: 400)
                return response
            }
        }
        let result = try store.append(operations, to: list, receivedAt: Int64(now))
        if result.accepted > 0 {
            metrics.countAccepted(result.accepted)
            watchers.publish(list: list, cursor: result.cursor)
        }
        return json([
            "accepted": result.accepted, "duplicates": result.duplicates, "cursor": result.cursor,
            "epoch": result.epoch,
            "serverTime": now,
        ])
    }

    func pull(_ request: HTTPRequest, _ responder: Responder) throws {
        let (account, list, _) = try membership(request)
        func integer(_ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
            guard let raw = request.query[name] else { return value }
            guard let number = Int64(raw), range.contains(number) else {
                throw HTTPError.badRequest(
                    "'\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)",
                    code: "invalid_parameter")
            }
            return number
        }
        let after = try integer("after", default: 0, range: 0...Int64.max)
        let limit = Int(
            try integer("limit", default: Int64(configuration.maxPage), range: 1...Int64(configuration.maxPage)))
        let asked = try integer("wait", default: 0, range: 0...Int64(Self.longestWait))
        let wait = min(Double(asked), configuration.maxWaitSeconds)
        let page = try store.page(of: list, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
        if page.count > 0 || wait <= 0 {
            responder.respond(Self.pageResponse(page, serverTime: configuration.clock()))
            return
        }
        try watchers.park(
            list: list, after: after, limit: limit, account: account.id, seconds: wait, responder: responder
        ) {
            try store.head(of: list).cursor
        }
    }

    static func pageResponse(_ page: Page, serverTime: UInt64) -> HTTPResponse {
        var text = "{\"count\":\(page.count),\"cursor\":\(page.cursor),\"epoch\":\(JSONText.quoted(page.epoch))"
        text +=
            ",\"historyComplete\":\(page.historyComplete),\"more\":\(page.more),\"serverTime\":\(serverTime),\"ops\":"
        var body = Array(text.utf8)
        JSONText.appendQuoted(bytes: page.encoded, to: &body)
        body.append(UInt8(ascii: "}"))
        return .body(body, contentType: "application/json")
    }
}

/// Password hashes, tokens and invite codes.
enum Passwords {
    /// `pbkdf2-sha256$ITERATIONS$SALT$HASH` (hex).
    static func hash(_ password: String, iterations: Int) -> String {
        let salt = Secrets.randomBytes(16)
        let derived = Secrets.pbkdf2SHA256(password: password, salt: salt, iterations: iterations)
        return "pbkdf2-sha256$\(iterations)$\(Secrets.hex(salt))$\(Secrets.hex(derived))"
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
            let salt = Secrets.bytes(hex: parts[2]), let expected = Secrets.bytes(hex: parts[3])
        else { return false }
        let derived = Secrets.pbkdf2SHA256(
            password: password, salt: salt, iterations: iterations, length: expected.count)
        return Secrets.constantTimeEqual(derived, expected)
    }

    /// 256 random bits, as hex.
    static func newToken() -> String { Secrets.hex(Secrets.randomBytes(32)) }

    /// Tokens are stored as SHA-256 hashes: a stolen database does not hold usable tokens.
    static func tokenHash(_ token: String) -> String { Secrets.hex(SHA256.hash(Array(token.utf8))) }

    /// 80 random bits in an easy-to-type alphabet: `XXXX-XXXX-XXXX-XXXX`.
    static func inviteCode() -> String {
        let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ23456789")
        let bytes = Secrets.randomBytes(16)
        let characters = bytes.map { alphabet[Int($0) % alphabet.count] }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<($0 + 4)]) }.joined(separator: "-")
    }
}

extension StoreError: HTTPErrorConvertible {
    /// The answer for errors no route handles itself: a full disk is a 507 that says so.
    public var httpError: HTTPError {
        switch self {
        case .storageFull:
            HTTPError(
                507, "storage_full",
                "the server's storage is full; nothing of this request was stored. Try again when space is freed.")
        default:
            {
                Router.reportInternalError("store error: \(self)")
                return HTTPError(500, "internal", "internal error")
            }()
        }
    }
}
