public import BasketCore
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The HTTP API of `basket-server` over URLSession: sync, accounts, invites.
public final class HTTPSyncTransport: SyncTransport, Sendable {
    public let baseURL: URL
    public let token: String?
    private let exchange: Exchange

    /// Sends one request and returns the answer's body and status. URLSession by default; a
    /// simulation passes its own network (see `basket-sim`). A thrown error means the server was
    /// not reached, or its answer was lost.
    public typealias Exchange = @Sendable (URLRequest) async throws -> (Data, Int)

    /// - Parameters:
    ///   - baseURL: the server, like `http://127.0.0.1:8080`.
    ///   - token: the bearer token from ``login(name:password:)``; nil before signing in.
    ///   - exchange: how requests travel; nil for HTTP through URLSession.
    public init(baseURL: URL, token: String?, exchange: Exchange? = nil) {
        self.baseURL = baseURL
        self.token = token
        if let exchange {
            self.exchange = exchange
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpMaximumConnectionsPerHost = 64
            configuration.timeoutIntervalForRequest = 60
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let session = URLSession(
                configuration: configuration, delegate: RefuseRedirects(), delegateQueue: nil)
            self.exchange = { request in
                let (data, response) = try await session.data(for: request)
                guard let http = response as? HTTPURLResponse else { throw SyncError.badResponse("not an HTTP answer") }
                if (300..<400).contains(http.statusCode) {
                    let location = (http.value(forHTTPHeaderField: "Location") ?? "").prefix(200)
                    throw SyncError.redirected(status: http.statusCode, location: Self.printable(String(location)))
                }
                guard data.count <= Self.maxAnswerBytes else {
                    throw SyncError.badResponse("an answer of \(data.count) bytes (at most \(Self.maxAnswerBytes))")
                }
                return (data, http.statusCode)
            }
        }
    }

    /// The largest answer read: a page is cut at about 1 MiB of operations by the server, so
    /// anything near this is not a Basket server's answer.
    static let maxAnswerBytes = 32 << 20

    /// Text from the server as it may be shown: control characters escaped.
    static func printable(_ text: String) -> String { Printable.escaped(text) }

    // MARK: Accounts

    /// Creates an account; `invite` is a signup invite, for a server that takes new accounts only with one.
    public func signUp(name: String, password: String, invite: String? = nil) async throws {
        var body = ["name": name, "password": password]
        if let invite { body["invite"] = invite }
        _ = try await call("POST", "/v1/accounts", body: body)
    }

    /// Signs in; returns a new bearer token. `device` names this device in the account's devices list.
    public func login(name: String, password: String, device: String? = nil) async throws -> String {
        var body = ["name": name, "password": password]
        if let device { body["device"] = device }
        let answer = try await call("POST", "/v1/tokens", body: body)
        guard let token = answer["token"] as? String, token.utf8.count <= 256 else {
            throw SyncError.badResponse("no token in the answer")
        }
        return token
    }

    /// Revokes the token this transport uses.
    public func logout() async throws { _ = try await call("DELETE", "/v1/tokens/current") }

    /// Revokes every token of the account, this one included; returns how many.
    public func logoutEverywhere() async throws -> Int {
        (try await call("DELETE", "/v1/tokens")["revoked"] as? NSNumber)?.intValue ?? 0
    }

    /// The devices signed in to the account.
    public func devices() async throws -> [Device] {
        let answer = try await call("GET", "/v1/tokens")
        return (answer["tokens"] as? [[String: Any]] ?? []).prefix(10_000).compactMap { object in
            guard let id = object["id"] as? String else { return nil }
            return Device(
                id: Self.printable(String(id.prefix(32))),
                name: Self.printable(String((object["device"] as? String ?? "").prefix(64))),
                created: (object["created"] as? NSNumber)?.int64Value ?? 0,
                lastUsed: (object["lastUsed"] as? NSNumber)?.int64Value ?? 0,
                isCurrent: object["current"] as? Bool ?? false)
        }
    }

    /// Signs a device out (its next sync gets 401).
    public func revokeDevice(_ id: String) async throws {
        let escaped = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
        _ = try await call("DELETE", "/v1/tokens/\(escaped)")
    }

    /// Changes the password; every other device is signed out. Returns how many were.
    public func changePassword(from old: String, to new: String) async throws -> Int {
        let answer = try await call("POST", "/v1/account/password", body: ["password": old, "newPassword": new])
        return (answer["revoked"] as? NSNumber)?.intValue ?? 0
    }

    /// The account name and the server's clock.
    public func account() async throws -> (name: String, serverTime: UInt64) {
        let answer = try await call("GET", "/v1/account")
        return (answer["name"] as? String ?? "", (answer["serverTime"] as? NSNumber)?.uint64Value ?? 0)
    }

    /// An invite code for a list: `uses` times at most (1 by default), for `expiresIn` seconds
    /// (the server's default when nil).
    public func invite(to list: ListID, role: String, uses: Int = 1, expiresIn: Int? = nil) async throws -> Invite {
        var body: [String: Any] = ["role": role, "uses": uses]
        if let expiresIn { body["expiresIn"] = expiresIn }
        let answer = try await call("POST", "/v1/lists/\(list)/invites", json: body)
        guard let code = answer["code"] as? String, code.utf8.count <= 64 else {
            throw SyncError.badResponse("no code in the answer")
        }
        return Self.invite(answer, code: code)
    }

    /// The list's invites that still work (all of them for an owner, one's own for an editor).
    public func invites(of list: ListID) async throws -> [Invite] {
        let answer = try await call("GET", "/v1/lists/\(list)/invites")
        return (answer["invites"] as? [[String: Any]] ?? []).prefix(10_000).map { Self.invite($0, code: nil) }
    }

    /// Withdraws an invite.
    public func revokeInvite(_ id: String, of list: ListID) async throws {
        let escaped = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
        _ = try await call("DELETE", "/v1/lists/\(list)/invites/\(escaped)")
    }

    static func invite(_ object: [String: Any], code: String?) -> Invite {
        Invite(
            id: printable(String((object["id"] as? String ?? "").prefix(32))), code: code,
            role: printable(String((object["role"] as? String ?? "").prefix(16))),
            createdBy: printable(String((object["createdBy"] as? String ?? "").prefix(64))),
            expiresAt: (object["expiresAt"] as? NSNumber)?.int64Value ?? 0,
            usesLeft: (object["usesLeft"] as? NSNumber)?.intValue ?? 0)
    }

    /// Joins the list an invite code is for. The code goes in the body, never in the URL.
    public func join(code: String) async throws -> RemoteList {
        try Self.remoteList(try await call("POST", "/v1/invites", body: ["code": code]))
    }

    // MARK: Sync

    public func lists() async throws -> [RemoteList] {
        let answer = try await call("GET", "/v1/lists")
        return try (answer["lists"] as? [[String: Any]] ?? []).map(Self.remoteList)
    }

    public func createList(_ id: ListID) async throws -> RemoteList {
        try Self.remoteList(try await call("POST", "/v1/lists", body: ["id": id.description]))
    }

    public func push(_ operations: [BasketCore.Operation], to list: ListID) async throws -> PushOutcome {
        let text = String(decoding: OperationCodec.encode(operations), as: UTF8.self)
        let answer = try await call("POST", "/v1/lists/\(list)/ops", body: ["ops": text])
        return try Self.pushOutcome(answer, pushed: operations.count)
    }

    /// A push's answer, only when it has every field it must: the outbox is emptied on its word.
    static func pushOutcome(_ answer: [String: Any], pushed: Int) throws -> PushOutcome {
        // (On Linux a JSON 0 or 1 also reads as Bool: numbers are taken as NSNumber, checked by value.)
        func number(_ key: String) -> NSNumber? { answer[key] as? NSNumber }
        guard let accepted = number("accepted")?.intValue, let duplicates = number("duplicates")?.intValue,
            let cursor = number("cursor")?.int64Value, let epoch = answer["epoch"] as? String,
            let serverTime = number("serverTime")?.uint64Value
        else {
            throw SyncError.badResponse(
                "a push answer without accepted, duplicates, cursor, epoch and serverTime (nothing was dropped)")
        }
        guard accepted >= 0, duplicates >= 0, accepted + duplicates == pushed, cursor >= 0,
            !epoch.isEmpty, epoch.utf8.count <= 64
        else {
            throw SyncError.badResponse(
                "a push answer that does not account for the \(pushed) operations sent (nothing was dropped)")
        }
        return PushOutcome(
            accepted: accepted, duplicates: duplicates, cursor: cursor, epoch: epoch, serverTime: serverTime)
    }

    public func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int) async throws -> PulledPage {
        let answer = try await call(
            "GET", "/v1/lists/\(list)/ops?after=\(cursor)&limit=\(limit)&wait=\(wait)", timeout: Double(wait) + 30)
        return try Self.page(answer, of: list, after: cursor)
    }

    /// A pulled page, only when it is one of `list`'s pages after `cursor`.
    static func page(_ answer: [String: Any], of list: ListID, after cursor: Int64) throws -> PulledPage {
        guard let text = answer["ops"] as? String, let next = (answer["cursor"] as? NSNumber)?.int64Value,
            let epoch = answer["epoch"] as? String, !epoch.isEmpty, epoch.utf8.count <= 64
        else { throw SyncError.badResponse("a page without ops, cursor or epoch") }
        let operations: [BasketCore.Operation]
        do {
            operations = try OperationCodec.decode(Array(text.utf8))
        } catch {
            throw SyncError.badResponse("the page's operations: \(error)")
        }
        if let stray = operations.first(where: { $0.list != list }) {
            throw SyncError.badResponse("a page of list \(list) holding an operation of list \(stray.list)")
        }
        let more = answer["more"] as? Bool ?? false
        guard next >= 0, operations.isEmpty || next > cursor else {
            throw SyncError.badResponse("a page whose cursor \(next) does not follow \(cursor)")
        }
        return PulledPage(
            operations: operations, cursor: next, epoch: epoch, more: more,
            historyComplete: answer["historyComplete"] as? Bool ?? true,
            serverTime: (answer["serverTime"] as? NSNumber)?.uint64Value ?? 0)
    }

    // MARK: Plumbing

    static func remoteList(_ object: [String: Any]) throws -> RemoteList {
        guard let raw = object["id"] as? String, let id = ListID(hex: raw), let epoch = object["epoch"] as? String
        else {
            throw SyncError.badResponse("a list without id or epoch")
        }
        return RemoteList(
            id: id, role: object["role"] as? String ?? "viewer", epoch: epoch,
            cursor: (object["cursor"] as? NSNumber)?.int64Value ?? 0)
    }

    private func call(_ method: String, _ path: String, body: [String: String]? = nil, timeout: Double = 60)
        async throws -> [String: Any]
    {
        try await call(method, path, json: body, timeout: timeout)
    }

    private func call(_ method: String, _ path: String, json body: [String: Any]?, timeout: Double = 60)
        async throws -> [String: Any]
    {
        guard
            let url = URL(string: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        else {
            throw SyncError.badResponse("bad URL for \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let data: Data
        let status: Int
        do {
            (data, status) = try await exchange(request)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError.unreachable(error.localizedDescription)
        }
        let object = data.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (200..<300).contains(status) else {
            let code = object["error"] as? String ?? "http_\(status)"
            if code == ClockSkewError.code {
                throw SyncError.clockSkew(
                    serverTime: (object["serverTime"] as? NSNumber)?.uint64Value ?? 0,
                    offsetMilliseconds: (object["offsetMilliseconds"] as? NSNumber)?.uint64Value ?? 0)
            }
            // The server's words are shown to a person: bounded, control characters escaped.
            let message = object["message"] as? String ?? HTTPURLResponse.localizedString(forStatusCode: status)
            throw SyncError.server(
                status: status, code: Self.printable(String(code.prefix(64))),
                message: Self.printable(String(message.prefix(500))))
        }
        return object
    }
}

/// Answers a redirect with the redirect itself: URLSession would otherwise send the request,
/// Authorization header included, to whatever host the server names (and turn a POST into a GET).
final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
