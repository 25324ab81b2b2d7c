import CCurl
public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP request over libcurl's easy interface, bounded on every side: a deadline for the
/// whole request (not an idle timeout), an answer read up to a cap after gzip is undone, no
/// redirects followed, and, where the caller says so, a check of every address libcurl is about
/// to connect to, made on the resolved address itself so that a name cannot point elsewhere
/// between the check and the connection. The command-line client's transport (`CurlExchange`)
/// and the server's Web Push sender use it.
public struct CurlRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The whole URL.
    public var url: String
    /// Header fields to send (libcurl adds Host, Content-Length and Accept-Encoding itself).
    public var headers: [(String, String)]
    /// The body to send, if any.
    public var body: [UInt8]?
    /// Seconds the whole request may take, the answer included.
    public var deadline: Double
    /// The most bytes of answer kept, after gzip is undone: one more fails the request.
    public var maxAnswerBytes: Int
    /// Ask for gzip and undo it.
    public var acceptsGzip = true
    /// The schemes libcurl may use (`"https"`, `"http,https"`).
    public var protocols = "http,https"
    /// Asked with each address before libcurl connects to it; false refuses the connection
    /// (``CurlError/addressRefused``). Proxies from the environment are ignored when it is set, so
    /// the address checked is the one connected to. Nil: any address.
    public var allowsAddress: (@Sendable (CurlAddress) -> Bool)?

    /// A request with the limits every request needs.
    public init(
        method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil, deadline: Double,
        maxAnswerBytes: Int
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.maxAnswerBytes = maxAnswerBytes
    }
}

/// An address libcurl is about to connect to.
public enum CurlAddress: Sendable, Equatable {
    /// Four bytes.
    case v4([UInt8])
    /// Sixteen bytes.
    case v6([UInt8])
}

/// What came back.
public struct CurlAnswer: Sendable {
    /// The status code.
    public var status: Int
    /// The answer's body, gzip undone.
    public var body: Data
    /// The `Location` header of the answer, cut to 200 bytes ("" without one).
    public var location: String
}

/// Why a request got no answer.
public enum CurlError: Error, Equatable, Sendable {
    /// The answer went past the request's cap.
    case answerTooLarge(limit: Int)
    /// The caller's task was cancelled.
    case cancelled
    /// The deadline passed; `began`: a status line had arrived.
    case timedOut(began: Bool)
    /// Nothing listens there, or the connection was refused.
    case couldNotConnect
    /// The name does not resolve.
    case noSuchHost
    /// The connection broke before a whole answer.
    case connectionLost
    /// The answer's gzip could not be undone.
    case badGzip
    /// The URL's scheme is not one the request allows.
    case unsupportedProtocol
    /// TLS failed (libcurl's words).
    case tls(String)
    /// ``CurlRequest/allowsAddress`` refused every address of the host.
    case addressRefused
    /// Anything else (libcurl's words).
    case other(String)
}

/// What one request's callbacks write into, touched only by the thread running the request
/// (the cancellation flag excepted, which is atomic).
final class Transfer: @unchecked Sendable {
    let limit: Int
    let allowsAddress: (@Sendable (CurlAddress) -> Bool)?
    var body = Data()
    /// The answer went past ``limit`` and the write callback refused it.
    var over = false
    /// A status line arrived: the server answered, if not in full.
    var began = false
    /// An address was refused by ``allowsAddress``.
    var refused = false
    /// The last answer's Location header, cut to 200 bytes.
    var location = ""
    let cancelled = Atomic<Bool>(false)

    init(limit: Int, allowsAddress: (@Sendable (CurlAddress) -> Bool)?) {
        self.limit = limit
        self.allowsAddress = allowsAddress
    }
}

/// Takes each piece of the inflated answer, refusing the one that would take it past the cap
/// (any count but the one given stops libcurl with `CURLE_WRITE_ERROR`).
private func receiveBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard transfer.body.count + length <= transfer.limit else {
        transfer.over = true
        return length == 0 ? 1 : 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.body.append($0, count: length) }
    return length
}

/// Notes the status line and the Location header; libcurl bounds a header line (100 KB).
private func receiveHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let data, let context else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
    if line.hasPrefix("HTTP/") {
        transfer.began = true
        transfer.location = ""
    } else if line.lowercased().hasPrefix("location:") {
        let value = line.dropFirst("location:".count).trimmingCharacters(in: .whitespacesAndNewlines)
        transfer.location = String(decoding: value.utf8.prefix(200), as: UTF8.self)
    }
    return length
}

/// Called by libcurl about once a second and as bytes move: a non-zero answer stops the request
/// (`CURLE_ABORTED_BY_CALLBACK`) once its task was cancelled.
private func checkCancelled(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
}

/// Opens the socket of a connection libcurl is about to make, after asking the request's
/// ``CurlRequest/allowsAddress`` about the resolved address (a refused one gets no socket, and
/// libcurl tries the host's next address or fails).
private func openSocket(
    _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    guard let context, let address else { return -1 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let family = address.pointee.family
    if let allows = transfer.allowsAddress {
        let seen: CurlAddress? = withUnsafePointer(to: &address.pointee.addr) { raw in
            let raw = UnsafeRawPointer(raw)
            switch family {
            case AF_INET:
                let bytes = raw.load(fromByteOffset: 4, as: (UInt8, UInt8, UInt8, UInt8).self)
                return .v4([bytes.0, bytes.1, bytes.2, bytes.3])
            case AF_INET6 where Int(address.pointee.addrlen) >= 24:
                return .v6((0..<16).map { raw.load(fromByteOffset: 8 + $0, as: UInt8.self) })
            default: return nil
            }
        }
        guard let seen, allows(seen) else {
            transfer.refused = true
            return -1
        }
    }
    return socket(family, address.pointee.socktype, address.pointee.protocol)
}

/// Easy handles kept between requests, so that their connections are kept alive: a handle
/// remembers its connections across `curl_easy_reset`. At most `maxIdle` wait unused.
public final class CurlHandles: Sendable {
    private struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }
    private let idle = Mutex<[Handle]>([])
    private let maxIdle: Int

    /// Handles of which at most `maxIdle` are kept between requests.
    public init(maxIdle: Int = 8) { self.maxIdle = maxIdle }

    deinit {
        idle.withLock { handles in
            for handle in handles { curl_easy_cleanup(handle.pointer) }
        }
    }

    /// libcurl's process-wide start, once, before the first handle (Swift runs a static's
    /// initializer once, however many threads ask: libcurl's own start is not safe to run twice).
    static let globalSetUp: Void = { _ = curl_global_init(Int(CURL_GLOBAL_ALL)) }()

    /// Sends `request` on a thread of its own (libcurl's easy interface blocks), without holding
    /// one of Swift's few cooperative threads for a long-poll's minute.
    public func perform(_ request: CurlRequest) async throws(CurlError) -> CurlAnswer {
        let transfer = Transfer(limit: request.maxAnswerBytes, allowsAddress: request.allowsAddress)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<CurlAnswer, CurlError>, Never>) in
                let thread = Thread { [self] in
                    continuation.resume(returning: Result { () throws(CurlError) in try run(request, transfer) })
                }
                thread.start()
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
        return try result.get()
    }

    /// Sends `request` on the calling thread, which it blocks until the answer or the deadline.
    public func performBlocking(_ request: CurlRequest) throws(CurlError) -> CurlAnswer {
        try run(request, Transfer(limit: request.maxAnswerBytes, allowsAddress: request.allowsAddress))
    }

    private func take() throws(CurlError) -> Handle {
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        _ = Self.globalSetUp
        guard let pointer = curl_easy_init() else { throw CurlError.other("libcurl could not start a request") }
        return Handle(pointer: pointer)
    }

    private func give(_ handle: Handle) {
        let kept = idle.withLock { idle in
            guard idle.count < maxIdle else { return false }
            idle.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle.pointer) }
    }

    private func run(_ request: CurlRequest, _ transfer: Transfer) throws(CurlError) -> CurlAnswer {
        let handle = try take()
        defer { give(handle) }
        let curl = handle.pointer
        curl_easy_reset(curl)

        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        // libcurl names the encodings it undoes itself (CURLOPT_ACCEPT_ENCODING below).
        for (name, value) in request.headers where name.lowercased() != "accept-encoding" {
            headers = curl_slist_append(headers, "\(name): \(value)")
        }
        // No "Expect: 100-continue" round trip before a large body; no form type on an empty one.
        headers = curl_slist_append(headers, "Expect:")
        if request.body == nil { headers = curl_slist_append(headers, "Content-Type:") }

        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var settings: [CURLcode] = [
            basket_curl_set_string(curl, CURLOPT_URL, request.url),
            basket_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, request.protocols),
            basket_curl_set_long(curl, CURLOPT_NOSIGNAL, 1),
            basket_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0),
            basket_curl_set_long(curl, CURLOPT_BUFFERSIZE, 16 << 10),
            basket_curl_set_long(curl, CURLOPT_TIMEOUT_MS, Int(request.deadline * 1000)),
            basket_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(min(request.deadline, 30) * 1000)),
            basket_curl_set_list(curl, CURLOPT_HTTPHEADER, headers),
            basket_curl_set_write(curl, CURLOPT_WRITEFUNCTION, receiveBody),
            basket_curl_set_pointer(curl, CURLOPT_WRITEDATA, context),
            basket_curl_set_write(curl, CURLOPT_HEADERFUNCTION, receiveHeader),
            basket_curl_set_pointer(curl, CURLOPT_HEADERDATA, context),
            basket_curl_set_long(curl, CURLOPT_NOPROGRESS, 0),
            basket_curl_set_progress(curl, checkCancelled),
            basket_curl_set_pointer(curl, CURLOPT_XFERINFODATA, context),
        ]
        if request.acceptsGzip { settings.append(basket_curl_set_string(curl, CURLOPT_ACCEPT_ENCODING, "gzip")) }
        if request.allowsAddress != nil {
            settings.append(basket_curl_set_opensocket(curl, openSocket))
            settings.append(basket_curl_set_pointer(curl, CURLOPT_OPENSOCKETDATA, context))
            settings.append(basket_curl_set_string(curl, CURLOPT_NOPROXY, "*"))
        }
        if request.method != "GET" {
            settings.append(basket_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, request.method))
        }
        if let body = request.body {
            settings.append(basket_curl_set_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            // libcurl copies the bytes, so they need not outlive this setting.
            settings.append(
                body.isEmpty
                    ? basket_curl_set_string(curl, CURLOPT_COPYPOSTFIELDS, "")
                    : body.withUnsafeBytes {
                        basket_curl_set_pointer(
                            curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                    })
        }
        if let failed = settings.first(where: { $0 != CURLE_OK }) {
            throw CurlError.other("libcurl refused a setting: \(Self.words(failed))")
        }

        let result = curl_easy_perform(curl)
        if transfer.over { throw CurlError.answerTooLarge(limit: transfer.limit) }
        guard result == CURLE_OK else { throw Self.failure(result, transfer) }
        return CurlAnswer(status: basket_curl_response_code(curl), body: transfer.body, location: transfer.location)
    }

    /// libcurl's words for `code`.
    static func words(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }

    static func failure(_ code: CURLcode, _ transfer: Transfer) -> CurlError {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(began: transfer.began)
        case CURLE_COULDNT_CONNECT: return transfer.refused ? .addressRefused : .couldNotConnect
        case CURLE_COULDNT_RESOLVE_HOST: return .noSuchHost
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: return .connectionLost
        case CURLE_BAD_CONTENT_ENCODING: return .badGzip
        case CURLE_UNSUPPORTED_PROTOCOL: return .unsupportedProtocol
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .tls(words(code))
        default: return transfer.refused ? .addressRefused : .other(words(code))
        }
    }
}
