public import BasketCore
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The HTTP API of `basket-server` over URLSession: sync, accounts, invites.
public final class HTTPSyncTransport: SyncTransport, Sendable {
    /// The server's address.
    public let baseURL: URL
    /// The bearer token sent with every request; nil before signing in.
    public let token: String?
    /// The keys of encrypted lists: their operations are sealed as they are pushed and opened as
    /// they are pulled; nil: every list is plain.
    public let keyring: (any Keyring)?
    private let exchange: Exchange

    /// Sends one request and returns the answer's body and status. URLSession by default; a
    /// simulation passes its own network (see `basket-sim`). A thrown error means the server was
    /// not reached, or its answer was lost.
    public typealias Exchange = @Sendable (URLRequest) async throws -> (Data, Int)

    /// - Parameters:
    ///   - baseURL: the server, like `http://127.0.0.1:8080`.
    ///   - token: the bearer token from ``login(name:password:device:)``; nil before signing in.
    ///   - exchange: how requests travel; nil for HTTP through URLSession.
    ///   - answerTimeout: how long a request waits for the server's answer (a long-poll: this
    ///     beyond its wait) before it gives up as ``SyncError/unreachable(_:)``.
    ///   - unavailableRetryDelays: seconds waited before a request answered 503 (the server's
    ///     store away for a moment) is sent again, once per entry; then it fails as unreachable.
    ///   - keyring: the keys of encrypted lists (``keyring``).
    public init(
        baseURL: URL, token: String?, answerTimeout: Double = 30, exchange: Exchange? = nil,
        unavailableRetryDelays: [Double] = [1, 2], keyring: (any Keyring)? = nil
    ) {
        self.baseURL = baseURL
        self.token = token
        self.keyring = keyring
        self.answerTimeout = answerTimeout
        self.exchange = exchange ?? Self.urlSession()
        self.unavailableRetryDelays = unavailableRetryDelays
    }

    /// HTTP through a URLSession of its own (what `exchange: nil` means): answers read up to
    /// 32 MiB within the request's deadline, redirects refused. A simulated network wraps it.
    public static func urlSession() -> Exchange {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 60
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let reader = AnswerReader(maxBytes: Self.maxAnswerBytes)
        let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
        return { request in
            let (data, http) = try await reader.answer(to: request, in: session, within: Self.deadline(of: request))
            try refuseRedirect(status: http.statusCode, location: http.value(forHTTPHeaderField: "Location") ?? "")
            return (data, http.statusCode)
        }
    }

    /// How long a request waits for an answer (see ``init(baseURL:token:answerTimeout:exchange:unavailableRetryDelays:keyring:)``).
    public let answerTimeout: Double

    /// Seconds waited before a request answered 503 is sent again (``send``).
    let unavailableRetryDelays: [Double]

    /// The largest answer read: a page is cut at about 1 MiB of operations by the server, so
    /// anything near this is not a Basket server's answer.
    public static let maxAnswerBytes = 32 << 20

    /// Throws ``SyncError/redirected(status:location:)`` for a 3xx answer: an exchange does not
    /// follow a redirect, as the token would go along to wherever the server names.
    public static func refuseRedirect(status: Int, location: String) throws {
        guard (300..<400).contains(status) else { return }
        throw SyncError.redirected(status: status, location: printable(String(location.prefix(200))))
    }

    /// How long a request may take in all: its timeout (the long-poll's wait and the answer
    /// timeout for a pull, the answer timeout otherwise), and a second for every 16 KiB it sends
    /// (the least a server takes a body at, docs/security.md).
    public static func deadline(of request: URLRequest) -> Double {
        request.timeoutInterval + Double(request.httpBody?.count ?? 0) / Double(16 << 10)
    }

    /// The most lists one `GET /v1/lists` is taken with (a server keeps 200 per account).
    static let maxLists = 10_000

    /// Why a request did not reach the server, as a person reads it (URLSession's errors print
    /// as "NSURLErrorDomain error -1001" on Linux).
    static func why(_ error: any Error, waited seconds: Double) -> String {
        guard let failure = error as? URLError else { return error.localizedDescription }
        switch failure.code {
        case .timedOut: return "the server did not answer within \(Int(seconds.rounded())) s"
        case .cannotConnectToHost: return "the connection was refused (is the server running?)"
        case .cannotFindHost, .dnsLookupFailed: return "no such host"
        case .networkConnectionLost: return "the connection was lost"
        case .notConnectedToInternet: return "this device has no network"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "the TLS connection failed (\(failure.localizedDescription))"
        default: return failure.localizedDescription
        }
    }

    /// Text from the server as it may be shown: control characters escaped.
    static func printable(_ text: String) -> String { Printable.escaped(text) }

    // MARK: Accounts

    /// Creates an account; `invite` is a signup invite, for a server that takes new accounts only with one.
    public func signUp(name: String, password: String, invite: String? = nil) async throws {
        let _: Wire.Account = try await call(
            .signUp, sending: Wire.Signup(name: name, password: password, invite: invite))
    }

    /// The same server, network and keys, signed in with `token`.
    public func with(token: String) -> HTTPSyncTransport {
        HTTPSyncTransport(
            baseURL: baseURL, token: token, answerTimeout: answerTimeout, exchange: exchange,
            unavailableRetryDelays: unavailableRetryDelays, keyring: keyring)
    }

    /// Signs in; returns a new bearer token. `device` names this device in the account's devices list.
    public func login(name: String, password: String, device: String? = nil) async throws -> String {
        let answer: Wire.NewToken = try await call(
            .login, sending: Wire.Credentials(name: name, password: password, device: device))
        guard answer.token.utf8.count <= 256 else { throw SyncError.badResponse("no token in the answer") }
        return answer.token
    }

    /// Revokes the token this transport uses.
    public func logout() async throws { _ = try await send(.logout) }

    /// Revokes every token of the account, this one included; returns how many.
    public func logoutEverywhere() async throws -> Int {
        let answer: Wire.Revoked = try await call(.logoutEverywhere)
        return answer.revoked
    }

    /// The devices signed in to the account.
    public func devices() async throws -> [Device] {
        let answer: Wire.Tokens = try await call(.devices)
        return answer.tokens.prefix(10_000).map { token in
            Device(
                id: Self.printable(String(token.id.prefix(32))), name: Self.printable(String(token.device.prefix(64))),
                created: token.created, lastUsed: token.lastUsed, isCurrent: token.current)
        }
    }

    /// Signs a device out (its next sync gets 401).
    public func revokeDevice(_ id: String) async throws {
        _ = try await send(.revokeDevice, [id])
    }

    /// Changes the password; every other device is signed out. Returns how many were.
    public func changePassword(from old: String, to new: String, wrappedKey: String? = nil) async throws -> Int {
        let answer: Wire.Revoked = try await call(
            .changePassword, sending: Wire.PasswordChange(password: old, newPassword: new, wrappedKey: wrappedKey))
        return answer.revoked
    }

    /// The account's key pair as the server keeps it (`GET /v1/account/keys`): the public key and
    /// the private key wrapped under the password's key; nil when the account has none yet. What
    /// does not have the key forms (docs/encryption.md) is a bad answer.
    public func accountKeys() async throws -> (publicKey: String, wrappedKey: String)? {
        let answer: Wire.AccountKeys
        do {
            answer = try await call(.accountKeys)
        } catch let error as SyncError where error.errorCode == .notFound {
            return nil
        }
        guard Wire.KeyForm.isKey(answer.publicKey), let wrapped = answer.wrappedKey, Wire.KeyForm.isWrapped(wrapped)
        else { throw SyncError.badResponse("the account's keys are not in their form") }
        return (answer.publicKey, wrapped)
    }

    /// Keeps the account's key pair on the server (`PUT /v1/account/keys`).
    public func setAccountKeys(_ setup: Wire.KeySetup) async throws {
        let _: Wire.AccountKeys = try await call(.setAccountKeys, sending: setup)
    }

    /// A forgotten password's first step (`POST /v1/account/recovery`, no token): the public key
    /// and the private key wrapped under the recovery code's key.
    public func recoveryKeys(name: String, secret: String) async throws -> (publicKey: String, recoveryKey: String) {
        let answer: Wire.AccountKeys = try await call(
            .recover, sending: Wire.Recovery(name: name, recoverySecret: secret))
        guard Wire.KeyForm.isKey(answer.publicKey), let wrapped = answer.recoveryKey, Wire.KeyForm.isWrapped(wrapped)
        else { throw SyncError.badResponse("the account's keys are not in their form") }
        return (answer.publicKey, wrapped)
    }

    /// A forgotten password's second step: the new password with the private key wrapped under
    /// its key; every device is signed out and this one signed in (the new token).
    public func recover(
        name: String, secret: String, newPassword: String, wrappedKey: String, device: String? = nil
    ) async throws -> String {
        let answer: Wire.NewToken = try await call(
            .recover,
            sending: Wire.Recovery(
                name: name, recoverySecret: secret, newPassword: newPassword, wrappedKey: wrappedKey, device: device))
        guard answer.token.utf8.count <= 256 else { throw SyncError.badResponse("no token in the answer") }
        return answer.token
    }

    /// The list's keys sealed to this account (`GET /v1/lists/{id}/envelope`); nil when no
    /// member's device left them, or when they are over the envelope's bound.
    public func envelope(of list: ListID) async throws -> String? {
        try await listEnvelope(of: list).envelope
    }

    /// The envelope of the list's keys left for this account, with the list's key epochs (an
    /// envelope that is not one is left out; epochs are bounded).
    public func listEnvelope(of list: ListID) async throws -> Wire.ListEnvelope {
        let answer: Wire.ListEnvelope = try await call(.envelope, [list.description])
        return Wire.ListEnvelope(
            envelope: answer.envelope.flatMap { Wire.KeyForm.isEnvelope($0) ? $0 : nil },
            keyEpoch: answer.keyEpoch.map { min(max($0, 0), Int64(Sealed.maxEpoch)) },
            rotationDue: answer.rotationDue)
    }

    /// Leaves the list's keys sealed to members (`PUT /v1/lists/{id}/envelopes`); with `epoch`,
    /// a rotation to that key epoch (every member with a key pair gets one).
    public func deliverEnvelopes(
        _ envelopes: [Wire.EnvelopeDelivery.Envelope], to list: ListID, epoch: Int64? = nil
    ) async throws {
        _ = try await send(
            .deliverEnvelopes, [list.description], body: Wire.EnvelopeDelivery(envelopes: envelopes, epoch: epoch))
    }

    /// Deletes the signed-in account, its password checked as at sign-in: what became of its lists.
    public func deleteAccount(password: String) async throws -> Wire.AccountDeleted {
        try await call(.deleteAccount, sending: Wire.AccountDeletion(password: password))
    }

    /// The account name and the server's clock.
    public func account() async throws -> (name: String, serverTime: UInt64) {
        let answer: Wire.Account = try await call(.account)
        return (Self.printable(String(answer.name.prefix(64))), answer.serverTime ?? 0)
    }

    /// What an invite code is for, without joining (`POST /v1/invites/preview`).
    public func preview(code: String) async throws -> Wire.InvitePreview {
        try await call(.previewInvite, sending: Wire.InviteCode(code: code))
    }

    /// An invite code for a list: `uses` times at most (1 by default), for `expiresIn` seconds
    /// (the server's default when nil); `title`, the list's, is shown to whoever previews it.
    public func invite(
        to list: ListID, role: Role, uses: Int = 1, expiresIn: Int? = nil, title: String? = nil
    ) async throws -> Invite {
        let answer: Wire.NewInvite = try await call(
            .invite, [list.description],
            sending: Wire.InviteRequest(role: role, uses: uses, expiresIn: expiresIn, title: title))
        guard answer.code.utf8.count <= 64 else { throw SyncError.badResponse("no code in the answer") }
        return Invite(
            id: Self.printable(String(answer.id.prefix(32))), code: Self.printable(answer.code), role: answer.role,
            createdBy: "", expiresAt: answer.expiresAt, usesLeft: answer.usesLeft)
    }

    /// The list's invites that still work (all of them for an owner, one's own for an editor).
    public func invites(of list: ListID) async throws -> [Invite] {
        let answer: Wire.Invites = try await call(.invites, [list.description])
        return answer.invites.prefix(10_000).map { invite in
            Invite(
                id: Self.printable(String(invite.id.prefix(32))), code: nil, role: invite.role,
                createdBy: Self.printable(String(invite.createdBy.prefix(64))), expiresAt: invite.expiresAt,
                usesLeft: invite.usesLeft)
        }
    }

    /// Withdraws an invite.
    public func revokeInvite(_ id: String, of list: ListID) async throws {
        _ = try await send(.revokeInvite, [list.description, id])
    }

    /// The list's members and their roles (`GET /v1/lists/{id}/members`).
    public func members(of list: ListID) async throws -> [Wire.Member] {
        let answer: Wire.Members = try await call(.members, [list.description])
        return answer.members.prefix(10_000).map {
            // Replica ids are 16 hex digits; anything else from the server is dropped.
            let replicas = ($0.replicas ?? []).prefix(100).filter { $0.utf8.count == 16 && ReplicaID(hex: $0) != nil }
            return Wire.Member(
                account: Self.printable(String($0.account.prefix(64))), role: $0.role, replicas: Array(replicas),
                publicKey: $0.publicKey.flatMap { Wire.KeyForm.isKey($0) ? $0 : nil })
        }
    }

    /// Gives a member another role (an owner's call).
    public func setRole(_ role: Role, of account: String, in list: ListID) async throws {
        let _: Wire.Member = try await call(
            .setRole, [list.description, account], sending: Wire.RoleChange(role: role))
    }

    /// Removes a member (an owner's call), or the account itself (leaving the list).
    public func removeMember(_ account: String, from list: ListID) async throws {
        _ = try await send(.removeMember, [list.description, account])
    }

    /// Deletes the list on the server, with its log, members and invites (an owner's call).
    public func deleteList(_ list: ListID) async throws {
        _ = try await send(.deleteList, [list.description])
    }

    /// Joins the list an invite code is for. The code goes in the body, never in the URL.
    public func join(code: String) async throws -> RemoteList {
        try Self.checked(try await call(.join, sending: Wire.InviteCode(code: code)))
    }

    // MARK: Sync

    /// The lists the account is a member of (`GET /v1/lists`).
    public func lists() async throws -> [RemoteList] {
        let answer: Wire.Lists = try await call(.lists)
        guard answer.lists.count <= Self.maxLists else {
            throw SyncError.badResponse("\(answer.lists.count) lists in one answer (at most \(Self.maxLists))")
        }
        return try answer.lists.map(Self.checked)
    }

    /// Registers a list made on this device (`POST /v1/lists`; idempotent for a member).
    /// An encrypted list (one the ``keyring`` has keys for) is registered as one.
    public func createList(_ id: ListID) async throws -> RemoteList {
        let encrypted = keyring?.sealing(for: id) != nil
        let answer: Wire.Membership = try await call(.createList, sending: Wire.NewList(id: id, encrypted: encrypted))
        let remote = try Self.checked(answer)
        guard (remote.encrypted ?? false) == encrypted else {
            throw SyncError.badResponse(
                encrypted
                    ? "the server registered the list plain, where this device made it encrypted end to end"
                    : "the list is encrypted end to end and this device has no keys for it (join it with the whole"
                        + " code, keys included)")
        }
        return remote
    }

    /// Pushes operations of one list (`POST /v1/lists/{id}/ops`); the answer is checked to account for every one.
    /// An encrypted list's are sealed first (the outbox keeps them as they were written).
    public func push(_ operations: OperationText, count: Int, to list: ListID) async throws -> PushOutcome {
        var operations = operations
        if let sealing = keyring?.sealing(for: list) {
            do {
                operations = OperationText(try operations.operations().map(sealing.seal))
            } catch {
                throw SyncError.badResponse("the outbox's operations cannot be read to be sealed: \(error)")
            }
        }
        let data = try await send(.push, [list.description], body: Wire.Push(ops: operations))
        return try Self.pushOutcome(data, pushed: count)
    }

    /// A push's answer, only when it has every field it must: the outbox is emptied on its word.
    static func pushOutcome(_ data: Data, pushed: Int) throws -> PushOutcome {
        guard let answer = try? JSONDecoder().decode(Wire.PushResult.self, from: data) else {
            throw SyncError.badResponse(
                "a push answer without accepted, duplicates, cursor, epoch and serverTime (nothing was dropped)")
        }
        guard answer.accepted >= 0, answer.duplicates >= 0, answer.accepted + answer.duplicates == pushed,
            answer.cursor >= 0, !answer.epoch.isEmpty, answer.epoch.utf8.count <= 64
        else {
            throw SyncError.badResponse(
                "a push answer that does not account for the \(pushed) operations sent (nothing was dropped)")
        }
        return answer
    }

    /// A page after `cursor` (`GET /v1/lists/{id}/ops`), long-polling `wait` seconds; the page is checked to belong to `list` and follow `cursor`.
    public func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int) async throws -> PulledPage {
        try await pull(list, after: cursor, limit: limit, wait: wait, query: "")
    }

    /// The same, with when this device last heard who is shopping or of the inbox.
    public func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int, together: Int64) async throws
        -> PulledPage
    {
        try await pull(list, after: cursor, limit: limit, wait: wait, query: "&together=\(max(0, together))")
    }

    private func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int, query: String) async throws
        -> PulledPage
    {
        let answer: Wire.Page = try await call(
            .pull, [list.description], query: "after=\(cursor)&limit=\(limit)&wait=\(wait)" + query,
            timeout: Double(wait) + answerTimeout)
        return try Self.page(answer, of: list, after: cursor, sealing: keyring?.sealing(for: list))
    }

    /// A pulled page, only when it is one of `list`'s pages after `cursor`. An encrypted list's
    /// operations (`sealing`) are opened and validated one by one: one that does not open, or
    /// opens to what breaks the rules, is left out and counted (``PulledPage/unopened``), never
    /// stopping the page.
    /// A page's sealed operations opened and validated, in order, on every core for a long page;
    /// with how many did not open or validate (each skipped), and whether one of those is sealed
    /// under a key newer than `sealing` holds (another member rotated it).
    public static func opened(_ sealed: [Op], of list: ListID, sealing: any ListSealing) -> (
        opened: [Op], unopened: Int, keysBehind: Bool
    ) {
        let newest = sealing.newestEpoch
        let opened = onEveryCore(sealed) { op -> Op? in
            guard op.list == list, let opened = try? sealing.open(op), (try? opened.validate()) != nil else {
                return nil
            }
            return opened
        }
        var unopened = 0
        var keysBehind = false
        for (op, opened) in zip(sealed, opened) where opened == nil {
            if case .text(let text) = op.value, let epoch = Sealed.epoch(of: text), epoch > newest { keysBehind = true }
            unopened += 1
        }
        return (opened.compactMap { $0 }, unopened, keysBehind)
    }

    /// `transform` of each of `operations`, in order: a long page's on every core (opening a
    /// sealed value is most of what applying an encrypted list's page costs), a short one's here.
    static func onEveryCore(_ operations: [Op], _ transform: @Sendable (Op) -> Op?) -> [Op?] {
        let cores = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard cores > 1, operations.count >= 512 else { return operations.map(transform) }
        var results = [Op?](repeating: nil, count: operations.count)
        let share = (operations.count + cores - 1) / cores
        results.withUnsafeMutableBufferPointer { buffer in
            // Each chunk writes its own range of the buffer, and concurrentPerform returns when all did.
            nonisolated(unsafe) let out = buffer
            DispatchQueue.concurrentPerform(iterations: cores) { chunk in
                for index in (chunk * share)..<min((chunk + 1) * share, operations.count) {
                    out[index] = transform(operations[index])
                }
            }
        }
        return results
    }

    static func page(
        _ answer: Wire.Page, of list: ListID, after cursor: Int64, sealing: (any ListSealing)? = nil
    ) throws -> PulledPage {
        guard !answer.epoch.isEmpty, answer.epoch.utf8.count <= 64 else {
            throw SyncError.badResponse("a page without an epoch of 1 to 64 bytes")
        }
        var operations: [Op]
        do {
            operations = try answer.ops.operations(sealed: sealing != nil)
        } catch {
            throw SyncError.badResponse("the page's operations: \(error)")
        }
        var unopened = 0
        var keysBehind = false
        if let sealing {
            (operations, unopened, keysBehind) = Self.opened(operations, of: list, sealing: sealing)
        }
        if let stray = operations.first(where: { $0.list != list }) {
            throw SyncError.badResponse("a page of list \(list) holding an operation of list \(stray.list)")
        }
        guard answer.cursor >= 0, operations.isEmpty || answer.cursor > cursor else {
            throw SyncError.badResponse("a page whose cursor \(answer.cursor) does not follow \(cursor)")
        }
        var page = PulledPage(
            operations: operations, cursor: answer.cursor, epoch: answer.epoch, more: answer.more,
            historyComplete: answer.historyComplete, serverTime: answer.serverTime, role: answer.role)
        page.shopping = answer.shopping.map { Self.checked($0, of: list, sealing: sealing) }
        page.together = answer.together
        page.inbox = answer.inbox.map { min(max($0, 0), 100) }
        page.unopened = unopened
        page.keysBehind = keysBehind
        // OperationCodec validated each operation as it decoded it.
        page.isValidated = true
        return page
    }

    // MARK: Snapshots

    /// The newest snapshot of an encrypted list, opened (`GET /v1/lists/{id}/snapshot`); nil when
    /// the server has none, this device holds no keys of the list, or it does not open here (a
    /// device then pulls the whole log, as before any snapshot was made).
    public func snapshot(of list: ListID) async throws -> OpenedSnapshot? {
        guard let sealing = keyring?.sealing(for: list) else { return nil }
        let data = try await send(.snapshot, [list.description])
        guard !data.isEmpty else { return nil }
        let answer: Wire.ListSnapshot
        do {
            answer = try JSONDecoder().decode(Wire.ListSnapshot.self, from: data)
        } catch {
            throw SyncError.badResponse("\(Wire.Route.snapshot) answered without a snapshot")
        }
        guard answer.cursor >= 0, !answer.epoch.isEmpty, answer.epoch.utf8.count <= 64,
            let operations = try? sealing.openSnapshot(answer.snapshot, at: answer.cursor)
        else { return nil }
        return OpenedSnapshot(operations: operations, cursor: answer.cursor, epoch: answer.epoch)
    }

    /// Seals `operations`, the list's state at `cursor`, and leaves them on the server
    /// (`PUT /v1/lists/{id}/snapshot`); nothing for a list this device holds no keys of.
    public func putSnapshot(_ operations: [Op], at cursor: Int64, of list: ListID) async throws {
        guard let sealing = keyring?.sealing(for: list) else { return }
        let text = sealing.sealSnapshot(operations, at: cursor)
        guard text.utf8.count <= Sealed.maxSnapshotBytes else { return }  // the list is too large for one
        _ = try await send(.putSnapshot, [list.description], body: Wire.SnapshotRequest(cursor: cursor, snapshot: text))
    }

    /// Makes a plain list encrypted end to end (`POST /v1/lists/{id}/encryption`, owners): the
    /// log's new epoch.
    public func encrypt(_ list: ListID, _ conversion: Wire.Conversion) async throws -> String {
        let answer: Wire.Conversion.Answer = try await call(.encrypt, [list.description], sending: conversion)
        guard answer.epoch.utf8.count <= 64 else {
            throw SyncError.badResponse("an epoch of \(answer.epoch.utf8.count) bytes")
        }
        return answer.epoch
    }

    // MARK: Shopping

    /// Who is shopping for the list, and who finished lately (`GET /v1/lists/{id}/shopping`).
    public func shopping(of list: ListID) async throws -> Wire.Shopping {
        Self.checked(
            try await call(.shopping, [list.description]) as Wire.Shopping, of: list,
            sealing: keyring?.sealing(for: list))
    }

    /// "I'm going shopping" for the list, at `shop` when given; everyone's statuses after it. An
    /// encrypted list's shop name goes sealed (`Sealed.shopPlace(of:shop:)`).
    public func startShopping(_ list: ListID, at shop: String?) async throws -> Wire.Shopping {
        let sealing = keyring?.sealing(for: list)
        let sent = shop.map { name in
            sealing.flatMap { $0.seal(Sealed.shopPlace(of: list, shop: name)).value.textValue } ?? name
        }
        return Self.checked(
            try await call(.startShopping, [list.description], sending: Wire.ShoppingStart(shop: sent))
                as Wire.Shopping, of: list, sealing: sealing)
    }

    /// "Done shopping", having bought `bought` items; everyone's statuses after it.
    public func stopShopping(_ list: ListID, bought: Int) async throws -> Wire.Shopping {
        Self.checked(
            try await call(.stopShopping, [list.description], query: "bought=\(bought)") as Wire.Shopping, of: list,
            sealing: keyring?.sealing(for: list))
    }

    /// Statuses as a person may be shown them: at most 50, names and shops cut to their limits
    /// and made printable (a hostile server's text reaches a terminal). An encrypted list's shop
    /// names are opened first (`sealing`): one that does not open, or opens to no shop's name, is
    /// left out of its status.
    static func checked(
        _ statuses: [Wire.ShoppingStatus], of list: ListID? = nil, sealing: (any ListSealing)? = nil
    ) -> [Wire.ShoppingStatus] {
        statuses.prefix(50).map { status in
            var status = status
            if let sealing, let list {
                status.shop = status.shop.flatMap { sealed in
                    (try? sealing.open(Sealed.shopPlace(of: list, shop: sealed)))?.value.textValue
                }.flatMap {
                    (try? ItemName.clean($0, for: .title)).flatMap {
                        $0.utf8.count <= Wire.ShoppingStart.maxShopBytes ? $0 : nil
                    }
                }
            }
            status.who = printable(String(decoding: status.who.utf8.prefix(64), as: UTF8.self))
            status.shop = status.shop.map {
                printable(String(decoding: $0.utf8.prefix(Wire.ShoppingStart.maxShopBytes), as: UTF8.self))
            }
            status.bought = status.bought.map { min(max($0, 0), 100_000) }
            return status
        }
    }

    static func checked(_ answer: Wire.Shopping, of list: ListID? = nil, sealing: (any ListSealing)? = nil)
        -> Wire.Shopping
    {
        Wire.Shopping(shopping: checked(answer.shopping, of: list, sealing: sealing), serverTime: answer.serverTime)
    }

    // MARK: Add-only keys and the inbox

    /// Makes an add-only key for the list (`POST /v1/lists/{id}/keys`): its secret, shown once.
    public func makeAddKey(_ list: ListID, name: String) async throws -> Wire.NewAddKey {
        try await call(.makeAddKey, [list.description], sending: Wire.AddKeyRequest(name: name))
    }

    /// The list's add-only keys (never their secrets).
    public func addKeys(of list: ListID) async throws -> [Wire.AddKey] {
        let answer: Wire.AddKeys = try await call(.addKeys, [list.description])
        return answer.keys.prefix(100).map {
            Wire.AddKey(
                id: Self.printable(String($0.id.prefix(32))), name: Self.printable(String($0.name.prefix(64))),
                createdBy: Self.printable(String($0.createdBy.prefix(64))), created: $0.created)
        }
    }

    /// Revokes an add-only key of the list.
    public func revokeAddKey(_ id: String, of list: ListID) async throws {
        _ = try await send(.revokeAddKey, [list.description, id])
    }

    /// The texts waiting in the list's inbox (at most 100).
    public func inbox(of list: ListID) async throws -> [Wire.InboxEntry] {
        let answer: Wire.Inbox = try await call(.inbox, [list.description])
        return Array(answer.entries.prefix(100))
    }

    /// Takes one text of the list's inbox to file it; nil when another device took it first.
    public func takeFromInbox(_ id: String, of list: ListID) async throws -> Wire.InboxEntry? {
        do {
            let entry: Wire.InboxEntry = try await call(.takeFromInbox, [list.description, id])
            guard entry.text.utf8.count <= Wire.InboxText.maxBytes, entry.from.utf8.count <= 256 else {
                throw SyncError.badResponse("an inbox text over its limits")
            }
            return entry
        } catch SyncError.server(let status, let code, _)
            where status == 404 && code == Wire.ErrorCode.notFound.rawValue
        {
            return nil
        }
    }

    // MARK: Plumbing

    /// A list from the server, only with an epoch of 1 to 64 bytes and a cursor that is not negative.
    static func checked(_ list: RemoteList) throws -> RemoteList {
        guard !list.epoch.isEmpty, list.epoch.utf8.count <= 64, list.cursor >= 0 else {
            throw SyncError.badResponse("a list without an epoch of 1 to 64 bytes, or with a negative cursor")
        }
        return list
    }

    /// Sends a request and decodes its answer as `Answer`; an answer that is not one is a
    /// ``SyncError/badResponse(_:)``.
    private func call<Answer: Decodable>(
        _ route: Wire.Route, _ segments: [String] = [], query: String = "", sending body: (any Encodable)? = nil,
        timeout: Double? = nil
    ) async throws -> Answer {
        let data = try await send(route, segments, query: query, body: body, timeout: timeout)
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw SyncError.badResponse("\(route) answered without \(Answer.self)")
        }
    }

    /// Sends a request; returns the body of a 2xx answer, and throws ``SyncError`` for any other.
    private func send(
        _ route: Wire.Route, _ segments: [String] = [], query: String = "", body: (any Encodable)? = nil,
        timeout: Double? = nil
    ) async throws -> Data {
        let method = route.method
        let path = route.path(filling: segments) + (query.isEmpty ? "" : "?" + query)
        guard
            let url = URL(string: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        else {
            throw SyncError.badResponse("bad URL for \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout ?? answerTimeout)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            request.httpBody = try encoder.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        var data = Data()
        var status = 0
        // A 503 is the server's store away for a moment (a restart, a failover): nothing was
        // done, and every request here is safe to repeat. Tried again twice, 1 s and 2 s later;
        // then it is "unreachable", which keeps the outbox and retries later as any outage does.
        for delay in unavailableRetryDelays.map(Optional.some) + [nil] {
            do {
                (data, status) = try await exchange(request)
            } catch let error as SyncError {
                throw error
            } catch {
                throw SyncError.unreachable(Self.why(error, waited: request.timeoutInterval))
            }
            guard status == Wire.ErrorCode.unavailable.status else { break }
            guard let delay else {
                throw SyncError.unreachable("the server is unavailable for a moment (503); try again shortly")
            }
            try await Task.sleep(for: .seconds(delay))
        }
        guard (200..<300).contains(status) else {
            let refusal = try? JSONDecoder().decode(Wire.ErrorBody.self, from: data)
            let code = refusal?.error ?? "http_\(status)"
            if code == Wire.ErrorCode.clockSkew.rawValue {
                throw SyncError.clockSkew(
                    serverTime: refusal?.serverTime ?? 0, offsetMilliseconds: refusal?.offsetMilliseconds ?? 0)
            }
            // The server's words are shown to a person: bounded, control characters escaped.
            let message = refusal?.message ?? HTTPURLResponse.localizedString(forStatusCode: status)
            throw SyncError.server(
                status: status, code: Self.printable(String(code.prefix(64))),
                message: Self.printable(String(message.prefix(500))))
        }
        return data
    }
}
