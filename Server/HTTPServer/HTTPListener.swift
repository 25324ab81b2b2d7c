internal import CMicroHTTPD
import Foundation
import Gzip
import Synchronization

/// A generic HTTP/1.1 server over libmicrohttpd: epoll, a small thread pool, keep-alive,
/// request bodies with a size cap (413), gzip answers when the client accepts them, and
/// long-poll through suspend/resume. It knows nothing about what it serves.
///
/// ```swift
/// let router = Router { r in r.on("GET", "/healthz") { _ in .body(Array("ok".utf8), contentType: "text/plain") } }
/// let server = HTTPListener(configuration: .init(host: "127.0.0.1", port: 0), handler: router.handle)
/// try server.start()
/// print(server.port)
/// ```
public final class HTTPListener: @unchecked Sendable {

    /// What the listener was made with.
    public let configuration: Configuration
    let handler: @Sendable (HTTPRequest, Responder) -> Void
    // `@unchecked Sendable`: `loops` and `listenSocket` are written in start()/stop() only,
    // which the owner calls from one thread; `suspended` is behind its Mutex.
    private var loops: [EventLoop] = []
    private var listenSocket: Int32 = -1
    /// The port it listens on (the one the system picked for port 0), once started.
    private(set) public var port = 0
    let suspended = SuspendedRequests()
    /// Open connections, over every loop (``Configuration/connectionLimit``, ``Configuration/connectionsPerAddress``).
    let connections: ConnectionCounts
    /// Whether the daemons run: a response that arrives after stop() must not touch them.
    let running = Mutex(false)
    /// Requests begun and not yet completed (answered and sent, or abandoned by the client).
    let inFlight = Atomic(0)
    /// Bytes of request bodies held now, in all and per client address
    /// (``Configuration/maxBufferedBodyBytes``, ``Configuration/maxBufferedBodyBytesPerAddress``).
    private struct BodyBudget {
        var held = 0
        var byAddress: [ConnectionCounts.Address: Int] = [:]
        var byShare: [String: Int] = [:]
    }
    private let bodyBudget = Mutex(BodyBudget())

    /// Charges `bytes` just received to the body budget; false when that would pass the limit,
    /// the address's share or the request's share.
    func reserveBody(_ bytes: Int, for address: ConnectionCounts.Address?, share: String?) -> Bool {
        bodyBudget.withLock { budget in
            guard budget.held + bytes <= configuration.maxBufferedBodyBytes else { return false }
            let byAddress = address.map { budget.byAddress[$0, default: 0] } ?? 0
            let byShare = share.map { budget.byShare[$0, default: 0] } ?? 0
            guard byAddress + bytes <= configuration.maxBufferedBodyBytesPerAddress || address == nil,
                byShare + bytes <= configuration.maxBufferedBodyBytesPerShare || share == nil
            else { return false }
            if let address { budget.byAddress[address] = byAddress + bytes }
            if let share { budget.byShare[share] = byShare + bytes }
            budget.held += bytes
            return true
        }
    }

    func releaseBody(_ bytes: Int, for address: ConnectionCounts.Address?, share: String?) {
        guard bytes > 0 else { return }
        bodyBudget.withLock { budget in
            budget.held -= bytes
            if let address, let mine = budget.byAddress[address] {
                budget.byAddress[address] = mine > bytes ? mine - bytes : nil
            }
            if let share, let mine = budget.byShare[share] {
                budget.byShare[share] = mine > bytes ? mine - bytes : nil
            }
        }
    }

    /// Bytes of request bodies held in memory now.
    public var bufferedBodies: Int { bodyBudget.withLock { $0.held } }

    /// Connections open now.
    public var openConnections: Int { connections.open }

    /// ``Configuration/headersForEveryAnswer`` as C strings, made once: added to every answer
    /// without a conversion or an allocation each.
    struct FixedHeader {
        var name: [CChar]
        var value: [CChar]
        /// The name's bytes, lowercased, to find it among an answer's own fields.
        var key: [UInt8]

        /// Whether `field` (any case) is this header's name.
        func names(_ field: String) -> Bool {
            var index = 0
            for byte in field.utf8 {
                guard index < key.count else { return false }
                let lower = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                guard lower == key[index] else { return false }
                index += 1
            }
            return index == key.count
        }
    }
    let everyAnswer: [FixedHeader]

    /// A listener that hands each whole request to `handler` (call ``start()`` to serve).
    public init(configuration: Configuration, handler: @escaping @Sendable (HTTPRequest, Responder) -> Void) {
        self.configuration = configuration
        self.handler = handler
        everyAnswer = configuration.headersForEveryAnswer.map { name, value in
            FixedHeader(
                name: Array(name.utf8CString), value: Array(value.utf8CString), key: Array(name.lowercased().utf8))
        }
        connections = ConnectionCounts(
            total: configuration.connectionLimit, perAddress: configuration.connectionsPerAddress)
    }

    deinit { stop() }

    /// The listener could not start (the address is taken, not this machine's, …).
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds the socket and starts serving: one libmicrohttpd daemon per thread
    /// (``Configuration/threads``), each driven by its own `EventLoop` and all accepting on the
    /// one listening socket.
    ///
    /// Not libmicrohttpd's own thread pool: its loop (0.9.75, Debian's) waits again with the full
    /// timeout after a wait that returned exactly as many events as its buffer holds (128), with
    /// those 128 connections still unserved, until some other event comes. Watchers re-polling
    /// together after a fan-out waited 30 s that way (128 or 256 of 1,000, their requests unread
    /// in the socket). Our loop waits itself and runs the daemon without blocking (`EventLoop`).
    public func start() throws {
        let fd = try Self.bind(host: configuration.host, port: configuration.port)
        listenSocket = fd
        port = Self.boundPort(fd)
        let flags = MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        let context = Unmanaged.passUnretained(self).toOpaque()
        for index in 0..<max(1, configuration.threads) {
            let daemon = basket_mhd_start(
                UInt32(flags), fd, basketAccessHandler, context, basketRequestCompleted, context,
                basketAcceptPolicy, basketConnectionNotice, context,
                UInt32(configuration.connectionTimeoutSeconds), UInt32(configuration.connectionLimit),
                configuration.connectionMemoryBytes)
            guard let daemon,
                let loop = EventLoop(
                    daemon: daemon, name: "basket-http-\(index)", idleMilliseconds: configuration.idleWakeMilliseconds)
            else {
                if let daemon {
                    // Quiesced first: stopped without, a daemon closes the listening socket it shares.
                    _ = MHD_quiesce_daemon(daemon)
                    MHD_stop_daemon(daemon)
                }
                stopLoops()
                close(fd)
                listenSocket = -1
                throw StartError(description: "libmicrohttpd did not start on \(configuration.host):\(port)")
            }
            loops.append(loop)
        }
        running.withLock { $0 = true }
        for loop in loops { loop.start() }
    }

    /// Stops accepting, answers every suspended request with `shutdownResponse`, then stops.
    public func stop(
        shutdownResponse: HTTPResponse = .error(status: 503, code: "shutting_down", message: "the server is stopping")
    ) {
        guard !loops.isEmpty else { return }
        // No new connections from here on; the listening socket stays ours to close.
        for loop in loops { loop.quiesce() }
        let waiting = suspended.all
        for context in waiting { context.responder.respond(shutdownResponse) }
        // Let every request in flight (the resumed long-polls included) finish sending its answer:
        // a queued answer is not yet a sent one.
        let deadline = Date().addingTimeInterval(2)
        while inFlight.load(ordering: .acquiring) > 0 && Date() < deadline { usleep(2_000) }
        running.withLock { $0 = false }
        stopLoops()
        if listenSocket >= 0 { close(listenSocket) }
        listenSocket = -1
    }

    /// The loop that serves `connection` (while the daemons run: `loops` changes only in start()
    /// and stop(), and stop() stops the loops only after `running` is false).
    func loop(serving connection: OpaquePointer) -> EventLoop? {
        let daemon = basket_mhd_connection_daemon(connection)
        return loops.first { $0.daemon == daemon }
    }

    private func stopLoops() {
        for loop in loops { loop.finish() }
        loops = []
    }

    /// The number of requests waiting for an answer (long-polls).
    public var suspendedCount: Int { suspended.count }

    static func bind(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let info = result else {
            throw StartError(description: "'\(host)' is not an IP address: \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StartError(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if info.pointee.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard Glibc.bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw StartError(description: "cannot listen on \(host):\(port): \(message)")
        }
        guard listen(fd, 4096) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw StartError(description: "listen: \(message)")
        }
        return fd
    }

    static func boundPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        if Int32(storage.ss_family) == AF_INET6 {
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }
}

private func collectValue(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let context = Unmanaged<RequestContext>.fromOpaque(cls).takeUnretainedValue()
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: strlen(key)), as: UTF8.self)
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
    if kind == MHD_ValueKind.HEADER_KIND {
        context.headers[name.lowercased()] = text
    } else {
        context.query[name] = text
    }
    return MHD_Result.YES
}

private func basketAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let requestContext else { return MHD_Result.NO }
    let server = Unmanaged<HTTPListener>.fromOpaque(cls).takeUnretainedValue()

    guard let existing = requestContext.pointee else {
        let context = RequestContext(
            method: method.map { String(cString: $0) } ?? "GET", path: url.map { String(cString: $0) } ?? "/",
            connection: connection)
        let pointer = Unmanaged.passRetained(context).toOpaque()
        MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectValue, pointer)
        MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, collectValue, pointer)
        admitHead(context, server)
        requestContext.pointee = pointer
        server.inFlight.wrappingAdd(1, ordering: .relaxed)
        return MHD_Result.YES
    }
    let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()

    if let uploadDataSize, uploadDataSize.pointee > 0 {
        let size = uploadDataSize.pointee
        if let deadline = context.bodyDeadline, DispatchTime.now().uptimeNanoseconds > deadline {
            // Slower than the minimum rate: the connection goes, with whatever it held.
            return MHD_Result.NO
        }
        if context.keepsBody, let uploadData {
            if context.body.count + size > context.bodyLimit {
                context.tooLarge = true
            } else if !server.reserveBody(size, for: context.addressKey, share: context.share) {
                context.overBudget = true
            } else {
                context.reserved += size
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                    context.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            if !context.keepsBody {
                // What was kept goes at once; the rest of the body is read and dropped.
                context.body = []
                server.releaseBody(context.reserved, for: context.addressKey, share: context.share)
                context.reserved = 0
            }
        }
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }

    if context.isSuspended {
        // Resumed: the answer is ready.
        context.isSuspended = false
        server.suspended.remove(context)
        server.loop(serving: connection)?.unwatchHangUp(of: context)
        return queue(
            context.responder.take() ?? .error(status: 500, code: "internal", message: "no answer"), context, server)
    }
    guard !context.dispatched else { return MHD_Result.YES }
    context.dispatched = true
    if context.bodyDeadline != nil {
        // The body is in: back to the usual idle timeout (a long-poll or keep-alive may follow).
        basket_mhd_set_timeout(connection, UInt32(server.configuration.connectionTimeoutSeconds))
    }

    if let refusal = context.refusal { return queue(refusal, context, server) }
    if context.tooLarge {
        let limit = context.bodyLimit
        return queue(
            .error(status: 413, code: "body_too_large", message: "this request's body is limited to \(limit) bytes"),
            context,
            server)
    }
    if context.overBudget {
        var busy = HTTPResponse.error(
            status: 503, code: "busy", message: "the server holds too many request bodies; try again in a second")
        busy.headers.append(("Retry-After", "1"))
        return queue(busy, context, server)
    }
    var request = HTTPRequest(
        method: context.method, path: context.path, query: context.query, headers: context.headers)
    request.remoteAddress = context.remoteAddress
    request.body = context.body
    context.body = []
    // The handler holds the body now; the budget is for bodies still being read.
    server.releaseBody(context.reserved, for: context.addressKey, share: context.share)
    context.reserved = 0
    server.handler(request, context.responder)

    // Either the handler answered, or the connection waits (no thread held) until it does.
    let unmanaged = Unmanaged.passUnretained(context)
    let ready = context.responder.takeOrSuspend {
        context.isSuspended = true
        context.wasSuspended = true
        server.suspended.insert(context)
        MHD_suspend_connection(connection)
        server.loop(serving: connection)?.watchHangUp(of: context)
    } resume: {
        // The context stays alive while suspended: the request-completed callback releases it.
        server.running.withLock { isRunning in
            guard isRunning else { return }
            let connection = unmanaged.takeUnretainedValue().connection
            MHD_resume_connection(connection)
            // Looked up here, not for every request: only a suspended one needs its loop woken.
            server.loop(serving: connection)?.resumed()
        }
    }
    if let ready { return queue(ready, context, server) }
    return MHD_Result.YES
}

/// Decides from the head alone what becomes of a request's body: its limit (the server's, or
/// less from ``HTTPListener/Configuration/checkHead``), an answer that needs none of it, and the
/// deadline by which it must have arrived (with a short idle timeout meanwhile). Nothing is
/// charged to the body budget here: bytes are, as they arrive.
private func admitHead(_ context: RequestContext, _ server: HTTPListener) {
    let configuration = server.configuration
    let length = context.headers["content-length"].flatMap { Int($0) }
    context.bodyLimit = configuration.maxBodyBytes
    if context.headers["content-length"] != nil && context.headers["transfer-encoding"] != nil {
        // Two framings: a proxy and this server could read different requests out of the same
        // bytes (request smuggling). RFC 9112 §6.3: refuse, and close the connection after the
        // answer, so nothing behind this request on it is read as a request.
        var refusal = HTTPResponse.error(
            status: 400, code: "bad_request",
            message: "a request may not have both Content-Length and Transfer-Encoding (RFC 9112 section 6.3)")
        refusal.headers.append(("Connection", "close"))
        context.refusal = refusal
        return
    }
    guard (length ?? 0) > 0 || (length == nil && context.headers["transfer-encoding"] != nil) else { return }
    if let check = configuration.checkHead {
        let head = RequestHead(
            method: context.method, path: context.path, headers: context.headers,
            remoteAddress: context.remoteAddress, contentLength: length)
        switch check(head) {
        case .read(let limit, let share):
            context.bodyLimit = min(limit, configuration.maxBodyBytes)
            context.share = share
        case .refuse(let response): context.refusal = response
        }
    }
    if let length, length > context.bodyLimit { context.tooLarge = true }
    let expected = min(length ?? context.bodyLimit, context.bodyLimit)
    let seconds = configuration.bodyGraceSeconds + expected / max(1, configuration.minimumBodyBytesPerSecond)
    context.bodyDeadline = context.started + UInt64(seconds) * 1_000_000_000
    basket_mhd_set_timeout(
        context.connection, UInt32(min(configuration.bodyGraceSeconds, configuration.connectionTimeoutSeconds)))
}

private func queue(_ response: HTTPResponse, _ context: RequestContext, _ server: HTTPListener) -> MHD_Result {
    var body = response.body
    var headers = response.headers
    let isHead = context.method == "HEAD"
    // An answer that comes encoded (the web client's files, gzipped once at start) is sent as it is.
    if !isHead, body.count >= server.configuration.gzipMinimumBytes,
        !headers.contains(where: { $0.0 == "Content-Encoding" || $0.0 == "content-encoding" }),
        HTTPRequest.acceptsGzip(context.headers["accept-encoding"]), let compressed = Gzip.compress(body)
    {
        body = compressed
        headers.append(("Content-Encoding", "gzip"))
        headers.append(("Vary", "Accept-Encoding"))
    }
    let mhdResponse = body.withUnsafeBytes { buffer in
        MHD_create_response_from_buffer(
            buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress),
            MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let mhdResponse else { return MHD_Result.NO }
    for (name, value) in headers { MHD_add_response_header(mhdResponse, name, value) }
    for fixed in server.everyAnswer where !headers.contains(where: { fixed.names($0.0) }) {
        fixed.name.withUnsafeBufferPointer { name in
            fixed.value.withUnsafeBufferPointer { value in
                _ = MHD_add_response_header(mhdResponse, name.baseAddress, value.baseAddress)
            }
        }
    }
    context.status = response.status
    context.responseBytes = body.count
    let result = MHD_queue_response(context.connection, UInt32(response.status), mhdResponse)
    MHD_destroy_response(mhdResponse)
    return result
}

private func basketAcceptPolicy(
    _ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    guard let cls else { return MHD_Result.NO }
    let server = Unmanaged<HTTPListener>.fromOpaque(cls).takeUnretainedValue()
    var key = ConnectionCounts.Address(high: 0, low: 0)
    let known = basket_address_key(address, &key.high, &key.low) == 0
    return server.connections.admits(known ? key : nil) ? MHD_Result.YES : MHD_Result.NO
}

private func basketConnectionNotice(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection else { return }
    let server = Unmanaged<HTTPListener>.fromOpaque(cls).takeUnretainedValue()
    var key = ConnectionCounts.Address(high: 0, low: 0)
    let address = basket_mhd_connection_key(connection, &key.high, &key.low) == 0 ? key : nil
    if code == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED {
        server.connections.opened(address)
    } else {
        server.connections.closed(address)
    }
}

private func basketRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode
) {
    guard let cls, let pointer = requestContext?.pointee else { return }
    let server = Unmanaged<HTTPListener>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeRetainedValue()
    requestContext?.pointee = nil
    server.inFlight.wrappingSubtract(1, ordering: .releasing)
    server.releaseBody(context.reserved, for: context.addressKey, share: context.share)
    if context.wasSuspended {
        server.suspended.remove(context)
        if let connection { server.loop(serving: connection)?.unwatchHangUp(of: context) }
    }
    if let log = server.configuration.onRequestCompleted {
        log(
            HTTPListener.CompletedRequest(
                method: context.method, path: context.path, route: context.responder.route, status: context.status,
                responseBytes: context.responseBytes,
                seconds: Double(DispatchTime.now().uptimeNanoseconds - context.started) / 1e9,
                completed: code == MHD_RequestTerminationCode.REQUEST_TERMINATED_COMPLETED_OK))
    }
}
