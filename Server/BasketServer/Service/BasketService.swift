import BasketCore
import Foundation
public import HTTPServer

/// The sync service: accounts, tokens, lists with members and invites, and each list's
/// operation log with push, pull and long-poll. It answers HTTP requests through a `Router`
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
        /// Signups and sign-ins of one client address (`AddressGroup`) waiting or being hashed at
        /// once; more get 429 `rate_limited`. Sign-ins go before signups, and addresses take turns.
        public var passwordJobsPerAddress = 2
        /// Threads that decode and store large pushes (off the HTTP threads).
        public var pushThreads = 4
        /// Large pushes that may wait for a push thread; more run on their HTTP thread.
        public var pushQueue = 64
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
        public var maxPageBytes = LogPage.defaultMaxBytes
        /// How long a long-poll waits at most, in seconds: a request may ask for up to
        /// ``BasketService/longestWait``; a longer wait than this setting is shortened to it.
        public var maxWaitSeconds = 30.0
        /// Failed sign-ins from one client address in a minute before 429 (any account name).
        public var failedLoginsPerAddress = 20
        /// How long an invite code works unless its maker says otherwise.
        public var inviteSeconds = 7 * 24 * 3600
        /// The longest an invite may work, and the most uses it may have.
        public var maxInviteSeconds = 30 * 24 * 3600
        /// The most uses one invite may be made for.
        public var maxInviteUses = 100
        /// Working invites one list may have out at once, and one member on one list.
        public var maxInvitesPerList = 100
        /// The most working invites one member may have out on one list.
        public var maxInvitesPerMember = 20
        /// A token unused this long expires (its device signs in again).
        public var tokenIdleSeconds = 90 * 24 * 3600
        /// A token this old expires, used or not.
        public var tokenLifetimeSeconds = 365 * 24 * 3600
        /// Whether new lists must be encrypted end to end (`--require-encryption`): a request for
        /// a plain one is refused (`encryption_required`). Lists that exist keep what they are.
        public var requireEncryption = false
        /// Lists one account may have (made or joined), and members one list may have.
        public var maxListsPerAccount = 200
        /// The most members one list may have.
        public var maxMembersPerList = 50
        /// Items one list may hold (every item it has held: the server does not merge, so removed
        /// items count), and bytes of stored operations (``ListLimits/bytes(of:)``): 64 MiB is
        /// about 700,000 operations of a real shopping list.
        public var maxItemsPerList: Int64 = 20_000
        /// The most bytes of stored operations one list may hold (``ListLimits/bytes(of:)``).
        public var maxBytesPerList: Int64 = 64 << 20
        /// The most replica ids one account may bind to one list (a device has one; a member a
        /// few over the years): the members answer names them all, and its cost stays bounded.
        public var maxReplicasPerMember = Int64(MemberRecord.maxReplicas)
        /// The most replica ids bound to one list, every member's together.
        public var maxReplicasPerList: Int64 = 2_000
        /// Signed-in sessions kept in memory (`SessionCache`), and how long one is trusted before
        /// the store is asked again: the longest a revocation made where no notification reaches
        /// this instance can take to be seen.
        public var sessionCacheEntries = 10_000
        /// How long a token's session is taken from the cache before the store is asked again.
        public var sessionCacheSeconds = 30.0
        /// The server's wall clock in Unix milliseconds.
        public var clock: @Sendable () -> UInt64 = { HybridClock.wallClockMilliseconds() }
        /// Web Push: where messages may go, who the server says it is, how often a list is told of.
        public var push = PushConfiguration()
        /// Milliseconds that never step back, for sign-in throttling (tests set one of their own).
        public var monotonicClock: @Sendable () -> UInt64 = { LoginLimiter.monotonic() }

        /// The defaults `basket-server` starts with.
        public init() {}
    }

    /// Where the service keeps its state.
    public let store: any Store
    /// The limits it was made with.
    public let configuration: Configuration
    /// Its counters, for /metrics.
    public let metrics = Metrics()
    let watchers: Watchers
    let logins: LoginLimiter
    let passwords: WorkPool
    /// Threads for large pushes (``offloadedPushBytes``).
    let pushWork: WorkPool
    let sessions: SessionCache
    /// The VAPID key pair, and the notifier that sends Web Push messages (nil when push is off).
    let pushKeys: PushKeys
    let pushNotifier: PushNotifier?
    /// When who is shopping for each list, or its inbox, last changed (``TogetherTimes``).
    let together = TogetherTimes()
    /// Texts each add-only key put in the last minute.
    let inboxLimiter = InboxLimiter(perMinute: BasketService.inboxTextsPerKeyPerMinute)
    /// Verified when a sign-in names no account, so an unknown name costs what a known one does.
    let decoyHash: String

    /// Who may create an account (``Configuration/signup``).
    public enum Signup: String, Sendable, CaseIterable {
        /// Anyone who can reach the server.
        case open
        /// With a signup invite the operator made (`basket-server signup-invite`).
        case inviteOnly = "invite-only"
        /// Nobody: the accounts there are are all there will be.
        case closed
    }

    /// The longest `wait` (seconds) the API lets a long-poll ask for.
    public static let longestWait = 30

    /// A service over `store` with `configuration`'s limits.
    public init(store: any Store, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        logins = LoginLimiter(perAddress: configuration.failedLoginsPerAddress)
        sessions = SessionCache(capacity: configuration.sessionCacheEntries, seconds: configuration.sessionCacheSeconds)
        passwords = WorkPool(
            name: "password", threads: configuration.passwordThreads, queueLimit: configuration.passwordQueue,
            perKeyLimit: configuration.passwordJobsPerAddress)
        pushWork = WorkPool(name: "push", threads: configuration.pushThreads, queueLimit: configuration.pushQueue)
        decoyHash = Passwords.hash("decoy password", iterations: configuration.passwordIterations)
        pushKeys = PushKeys(store: store, clock: configuration.clock)
        if configuration.push.enabled {
            var settings = PushNotifier.Settings()
            settings.endpoints = PushEndpoints(allowedPrefixes: configuration.push.allowedEndpointPrefixes)
            settings.subject = configuration.push.subject
            settings.interval = Int64(configuration.push.intervalSeconds * 1000)
            pushNotifier = PushNotifier(
                store: store, key: pushKeys, settings: settings, clock: configuration.clock,
                tokenIdle: Int64(configuration.tokenIdleSeconds) * 1000,
                tokenLifetime: Int64(configuration.tokenLifetimeSeconds) * 1000)
        } else {
            pushNotifier = nil
        }
        watchers = Watchers(
            maxPerAccount: configuration.maxWatchersPerAccount,
            answer: { list, after, limit in
                Self.watchAnswer(list, after: after, limit: limit, store: store, configuration: configuration)
            },
            readHeads: { try store.heads(of: $0) },
            nothingNew: { list, after, head in
                Self.pageResponse(LogPage.nothingAfter(after, in: list, head: head), serverTime: configuration.clock())
            })
        // Pushes to other instances on the same store wake this one's long-polls too, and their
        // revocations reach this one's session cache.
        let watchers = self.watchers
        let sessions = self.sessions
        let together = self.together
        store.watchCommits { event in
            switch event {
            case .committed(let list, let cursor): watchers.publish(list: list, cursor: cursor)
            case .accountChanged(let account):
                sessions.forget(account: account)
                Self.dismissRevoked(account, watchers: watchers, store: store)
            case .membershipChanged(let list, let account):
                Self.endWatches(
                    of: account, on: list, watchers: watchers, store: store, configuration: configuration)
            case .listDeleted(let list):
                watchers.dismissAll(list: list, with: HTTPError.notFound("no such list").response)
            case .shoppingChanged(let list, let at), .inboxChanged(let list, let at):
                Self.togetherChanged(
                    list, at: at, watchers: watchers, store: store, configuration: configuration, times: together)
            case .resumed:
                sessions.forgetAll()
                // Before anything new is published to them: a removal or revocation made while
                // this instance was not listening must not let a push through.
                Self.recheckParked(watchers: watchers, store: store)
                watchers.refresh { try store.head(of: $0).cursor }
            }
        }
    }

    /// Ends `account`'s parked long-polls of `list` after its membership changed (here or on
    /// another instance): 404 when it is no longer a member, else its page, so it asks again in
    /// its new role. When the store cannot say, they are answered 503: the client asks again,
    /// and its next request checks the membership anew.
    static func endWatches(
        of account: Int64, on list: ListID, watchers: Watchers, store: any ListStore & LogStore,
        configuration: Configuration
    ) {
        let role: Role
        do {
            guard let now = try store.role(of: account, in: list) else {
                return watchers.dismiss(account: account, list: list, with: HTTPError.notFound("no such list").response)
            }
            role = now
        } catch {
            return watchers.dismiss(account: account, list: list, with: StoreError.unavailable.httpError.response)
        }
        // Still a member, in another role: the page after each wait's cursor, with the role.
        watchers.dismiss(account: account, list: list) { after, limit in
            watchAnswer(list, after: after, limit: limit, store: store, configuration: configuration, role: role)
        }
    }

    /// What a parked long-poll is answered with: the page after its cursor (with `role`, when
    /// the caller's role changed while it waited).
    static func watchAnswer(
        _ list: ListID, after: Int64, limit: Int, store: any LogStore, configuration: Configuration, role: Role? = nil
    ) -> HTTPResponse {
        do {
            let page = try store.page(of: list, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
            return pageResponse(page, serverTime: configuration.clock(), role: role)
        } catch StoreError.noSuchList {
            return HTTPError.notFound("no such list").response
        } catch let error as any HTTPErrorConvertible {
            return error.httpError.response
        } catch {
            Router.reportInternalError("reading the log of \(list): \(error)")
            return HTTPError(.internal, "internal error").response
        }
    }

    /// After the notification connection was lost for a while (``CommitEvent/resumed``): ends
    /// the parked long-polls of members removed meanwhile, or of lists deleted meanwhile (404),
    /// and of tokens revoked meanwhile (401). One membership read per parked (list, account) and
    /// one session read per parked token, on the listener's thread; when the store cannot say, a
    /// long-poll stays parked and its next request is checked as any is.
    static func recheckParked(watchers: Watchers, store: any ListStore & AccountStore) {
        var accounts = Set<Int64>()
        for (list, account) in watchers.parkedMembers() {
            accounts.insert(account)
            guard case .some(.none) = try? store.role(of: account, in: list) else { continue }
            watchers.dismiss(account: account, list: list, with: HTTPError.notFound("no such list").response)
        }
        for account in accounts { dismissRevoked(account, watchers: watchers, store: store) }
    }

    /// Answers the account's parked long-polls whose token was revoked (401) at once, so a
    /// signed-out device gets nothing more; the others stay parked.
    static func dismissRevoked(_ account: Int64, watchers: Watchers, store: any AccountStore) {
        watchers.dismiss(
            account: account,
            unless: { hash in
                do { return try store.session(forTokenHash: hash) != nil } catch { return true }  // kept when unsure
            },
            with: HTTPError(
                .unauthorized, "the token is unknown or revoked", headers: [("WWW-Authenticate", "Bearer")]
            ).response)
    }

    /// The number of parked long-polls.
    public var watcherCount: Int { watchers.count }

    /// Answers every parked long-poll (so clients re-poll elsewhere) and refuses new ones.
    public func shutdown() {
        watchers.close()
        passwords.close()
        pushWork.close()
        pushNotifier?.close()
    }

    /// Every route of the API; `/metrics` too unless `servingMetrics` is false (it is then
    /// served on its own address, ``metricsRouter()``), and the web client's when there is one.
    public func router(servingMetrics: Bool = true, web: WebApp? = nil) -> Router {
        Router { r in
            web?.register(&r)
            r.on(.health) { _ in Self.health }
            if servingMetrics { r.on(.metrics, answer: metricsPage) }
            r.on(.time) { [self] _ in answer(Wire.ServerTime(serverTime: configuration.clock())) }
            r.on(.signUp, createAccount)
            r.on(.login, createToken)
            r.on(.devices, answer: listTokens)
            r.on(.logoutEverywhere, answer: revokeAllTokens)
            r.on(.logout, answer: revokeCurrentToken)
            r.on(.revokeDevice, answer: revokeToken)
            r.on(.account, answer: whoAmI)
            r.on(.deleteAccount, deleteAccount)
            r.on(.changePassword, changePassword)
            r.on(.accountKeys, answer: accountKeys)
            r.on(.setAccountKeys, setAccountKeys)
            r.on(.recover, recover)
            r.on(.envelope, answer: listEnvelope)
            r.on(.deliverEnvelopes, answer: deliverEnvelopes)
            r.on(.snapshot, answer: listSnapshot)
            r.on(.putSnapshot, answer: putSnapshot)
            r.on(.encrypt, answer: encryptList)
            r.on(.createList, answer: createList)
            r.on(.lists, answer: listLists)
            r.on(.members, answer: listMembers)
            r.on(.deleteList, answer: deleteList)
            r.on(.setRole, answer: changeRole)
            r.on(.removeMember, answer: removeMember)
            r.on(.invite, answer: createInvite)
            r.on(.invites, answer: listInvites)
            r.on(.revokeInvite, answer: revokeInvite)
            r.on(.join, answer: redeemInvite)
            r.on(.previewInvite, answer: previewInvite)
            r.on(.push, push)
            r.on(.pull, pull)
            r.on(.shopping, answer: shopping)
            r.on(.startShopping, answer: startShopping)
            r.on(.stopShopping, answer: stopShopping)
            r.on(.makeAddKey, answer: makeAddKey)
            r.on(.addKeys, answer: addKeys)
            r.on(.revokeAddKey, answer: revokeAddKey)
            r.on(.putInInbox, answer: putInInbox)
            r.on(.inbox, answer: inbox)
            r.on(.takeFromInbox, answer: takeFromInbox)
            r.on(.pushKey, answer: pushKey)
            r.on(.subscribePush, answer: subscribePush)
            r.on(.pushSubscriptions, answer: pushSubscriptions)
            r.on(.unsubscribePush, answer: unsubscribePush)
        }
    }

    /// Header fields every answer of the server carries, errors included
    /// (`HTTPListener/Configuration/headersForEveryAnswer`): an answer is never a page that may
    /// run anything, be sniffed into another type, be framed, or leak its address as a referrer.
    /// The web client's pages carry their own policy (``WebApp``).
    public static let headersForEveryAnswer: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    /// The most body the routes that need no token take (signup, sign-in): a name, a password
    /// of at most 1,024 bytes, a device name and an invite code fit in it.
    public static let maxUnauthenticatedBodyBytes = 4 << 10
    /// Bodies larger than this are read only for a request whose token is good.
    public static let maxBodyBeforeAuthentication = 64 << 10

    /// Decides from a request's head, before its body is read (`HTTPListener/Configuration/checkHead`):
    /// signup and sign-in take at most ``maxUnauthenticatedBodyBytes``; a body larger than
    /// ``maxBodyBeforeAuthentication`` is read only when the `Authorization` header holds a good
    /// token, else answered (401) without keeping any of it. A stranger can so make the server
    /// keep at most 64 KiB per request. A body with a good token is charged to its account's
    /// share of the body budget too (`maxBufferedBodyBytesPerShare`), so one account's devices
    /// on many addresses cannot hold the whole budget.
    @Sendable public func checkHead(_ head: RequestHead) -> HeadVerdict {
        if [Wire.Route.signUp, .login, .recover].contains(where: { $0.method == head.method && $0.pattern == head.path }
        ) {
            return .read(maxBodyBytes: Self.maxUnauthenticatedBodyBytes)
        }
        guard (head.contentLength ?? .max) > Self.maxBodyBeforeAuthentication else {
            // A small body: read in any case (its route answers a bad token), charged to the
            // account when its session is cached. Not a read of the store: the route checks the
            // token anyway, and an unknown token would cost two reads.
            return .read(maxBodyBytes: .max, share: cachedAccount(head.request).map { "account \($0)" })
        }
        do {
            let account = try session(head.request).account.id
            return .read(maxBodyBytes: .max, share: "account \(account)")
        } catch let error as any HTTPErrorConvertible {
            return .refuse(error.httpError.response)
        } catch {
            Router.reportInternalError("checking a token before a body: \(error)")
            return .refuse(HTTPError(.internal, "internal error").response)
        }
    }

    /// The answer of `/healthz`, encoded once.
    static let health = answer(Wire.Health(status: "ok"))

    /// `/metrics` and `/healthz` alone, for a private address (`--metrics-listen`).
    public func metricsRouter() -> Router {
        Router { r in
            r.on(.health) { _ in Self.health }
            r.on(.metrics, answer: metricsPage)
        }
    }

    func metricsPage(_ request: HTTPRequest) -> HTTPResponse {
        let statistics = try? store.statistics()
        let push = pushNotifier?.counters ?? PushNotifier.Counts()
        let text = metrics.render(
            gauges: [
                ("basket_watchers", "Long-polls waiting for operations.", Double(watchers.count)),
                (
                    "basket_long_polls_run_out", "Long-polls whose wait ran out (answered by the sweep).",
                    Double(watchers.ranOut)
                ),
                (
                    "basket_wakeups_caught_at_wait_end",
                    "Waits that ran out and found pushes this instance was never told of (then answered with them).",
                    Double(watchers.caughtUp)
                ),
                ("basket_operations_stored", "Operations in the store.", Double(statistics?.operations ?? 0)),
                ("basket_lists", "Lists in the store.", Double(statistics?.lists ?? 0)),
                ("basket_accounts", "Accounts in the store.", Double(statistics?.accounts ?? 0)),
                ("basket_push_sent", "Web Push messages a push service took.", Double(push.sent)),
                (
                    "basket_push_failed", "Web Push messages that failed (refused, unreachable, timed out).",
                    Double(push.failed)
                ),
                ("basket_push_gone", "Subscriptions ended by their push service (404, 410).", Double(push.gone)),
                ("basket_push_dropped", "Web Push events or messages dropped at a full queue.", Double(push.dropped)),
                (
                    "basket_push_waiting_lists", "Lists with Web Push events waiting.",
                    Double(pushNotifier?.waitingLists ?? 0)
                ),
                ("basket_database_bytes", "Size of the store's database.", Double(statistics?.databaseBytes ?? 0)),
                (
                    "basket_password_queue", "Sign-ins and signups waiting for a password thread.",
                    Double(passwords.waiting)
                ),
            ] + store.gauges().map { ($0.name, $0.help, $0.value) })
        return .body(Array(text.utf8), contentType: "text/plain; version=0.0.4")
    }
}

extension HTTPError {
    /// An error of the API (``Wire/ErrorCode``), answered with its status.
    init(_ code: Wire.ErrorCode, _ message: String, headers: [(String, String)] = []) {
        self.init(code.status, code.rawValue, message, headers: headers)
    }

    /// A 400 of the API with its code.
    static func badRequest(_ message: String, code: Wire.ErrorCode) -> HTTPError { HTTPError(code, message) }
}

extension StoreError: HTTPErrorConvertible {
    /// The answer for errors no route handles itself: a full disk is a 507 that says so.
    public var httpError: HTTPError {
        switch self {
        case .unavailable:
            HTTPError(
                .unavailable,
                "the server's database is not reachable for a moment; nothing of this request was lost. Try again.",
                headers: [("Retry-After", "2")])
        case .storageFull:
            HTTPError(
                .storageFull,
                "the server's storage is full; nothing of this request was stored. Try again when space is freed.")
        default:
            {
                Router.reportInternalError("store error: \(self)")
                return HTTPError(.internal, "internal error")
            }()
        }
    }
}

extension RouterBuilder {
    /// Registers `route` of the API's table (`Wire.Route`) for `handler`.
    mutating func on(_ route: Wire.Route, _ handler: @escaping Router.Handler) {
        on(route.method, route.pattern, handler)
    }

    /// Registers `route` of the API's table for a handler that answers at once.
    mutating func on(_ route: Wire.Route, answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        on(route.method, route.pattern, answer: answer)
    }
}
