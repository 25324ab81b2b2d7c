public import BasketReplica
import CCurl
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP for `HTTPSyncTransport` over libcurl's easy interface, for the command-line client on
/// Linux, where URLSession cannot bound an answer's memory: FoundationNetworking always asks
/// libcurl to undo gzip and queues everything libcurl inflated for its delegate before the
/// delegate can stop the request, so half a megabyte of gzip became 0.57 GB in memory.
///
/// Here libcurl hands the inflated answer to a write callback in pieces of at most 16 KiB
/// (`CURLOPT_BUFFERSIZE`), on the thread that runs the request, and the callback refuses the piece
/// that would take the answer past its cap: libcurl stops inflating at once. An answer therefore
/// holds at most the cap plus one piece, whatever its gzip inflates to. The rest is what
/// `HTTPSyncTransport.urlSession()` does: redirects refused (the token would go along), a
/// deadline for the whole request (a server sending a byte every few seconds is given up on),
/// connections kept alive between requests.
public enum CurlExchange {
    /// An exchange for `HTTPSyncTransport.init(baseURL:token:answerTimeout:exchange:unavailableRetryDelays:)`
    /// whose answers are read up to `maxAnswerBytes` after gzip is undone.
    /// Cheap to make: libcurl starts (and loads its TLS library) at the first request, so a
    /// command that never reaches the server pays nothing for it.
    public static func make(maxAnswerBytes: Int = HTTPSyncTransport.maxAnswerBytes) -> HTTPSyncTransport.Exchange {
        let handles = Handles()
        return { request in try await handles.perform(request, maxAnswerBytes: maxAnswerBytes) }
    }

    /// libcurl's process-wide start, once, before the first handle (Swift runs a static's
    /// initializer once, however many threads ask: libcurl's own start is not safe to run twice).
    static let globalSetUp: Void = { _ = curl_global_init(Int(CURL_GLOBAL_ALL)) }()
}

/// What one request's callbacks write into, touched only by the thread running the request
/// (the cancellation flag excepted, which is atomic).
final class Transfer: @unchecked Sendable {
    let limit: Int
    var body = Data()
    /// The answer went past ``limit`` and the write callback refused it.
    var over = false
    /// A status line arrived: the server answered, if not in full.
    var began = false
    /// The last answer's Location header, cut to 200 bytes.
    var location = ""
    let cancelled = Atomic<Bool>(false)

    init(limit: Int) { self.limit = limit }
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

/// Easy handles kept between requests, so that their connections are kept alive: a handle
/// remembers its connections across `curl_easy_reset`. At most ``maxIdle`` wait unused.
final class Handles: Sendable {
    private struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }
    private let idle = Mutex<[Handle]>([])
    static let maxIdle = 8

    deinit {
        idle.withLock { handles in
            for handle in handles { curl_easy_cleanup(handle.pointer) }
        }
    }

    /// Sends `request` on a thread of its own (libcurl's easy interface blocks), without holding
    /// one of Swift's few cooperative threads for a long-poll's minute.
    func perform(_ request: URLRequest, maxAnswerBytes: Int) async throws -> (Data, Int) {
        let transfer = Transfer(limit: maxAnswerBytes)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, Int), any Error>) in
                let thread = Thread { [self] in
                    continuation.resume(with: Result { try run(request, transfer) })
                }
                thread.start()
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
    }

    private func take() throws -> Handle {
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        _ = CurlExchange.globalSetUp
        guard let pointer = curl_easy_init() else { throw SyncError.unreachable("libcurl could not start a request") }
        return Handle(pointer: pointer)
    }

    private func give(_ handle: Handle) {
        let kept = idle.withLock { idle in
            guard idle.count < Self.maxIdle else { return false }
            idle.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle.pointer) }
    }

    private func run(_ request: URLRequest, _ transfer: Transfer) throws -> (Data, Int) {
        guard let url = request.url?.absoluteString else { throw SyncError.badResponse("a request without a URL") }
        let deadline = HTTPSyncTransport.deadline(of: request)
        let handle = try take()
        defer { give(handle) }
        let curl = handle.pointer
        curl_easy_reset(curl)

        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        // libcurl names the encodings it undoes itself (CURLOPT_ACCEPT_ENCODING below).
        for (name, value) in request.allHTTPHeaderFields ?? [:] where name.lowercased() != "accept-encoding" {
            headers = curl_slist_append(headers, "\(name): \(value)")
        }
        // No "Expect: 100-continue" round trip before a large body; no form type on an empty one.
        headers = curl_slist_append(headers, "Expect:")
        let body = request.httpBody
        if body == nil { headers = curl_slist_append(headers, "Content-Type:") }

        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var settings: [CURLcode] = [
            basket_curl_set_string(curl, CURLOPT_URL, url),
            basket_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https"),
            basket_curl_set_long(curl, CURLOPT_NOSIGNAL, 1),
            basket_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0),
            basket_curl_set_string(curl, CURLOPT_ACCEPT_ENCODING, "gzip"),
            basket_curl_set_long(curl, CURLOPT_BUFFERSIZE, 16 << 10),
            basket_curl_set_long(curl, CURLOPT_TIMEOUT_MS, Int(deadline * 1000)),
            basket_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(min(deadline, 30) * 1000)),
            basket_curl_set_list(curl, CURLOPT_HTTPHEADER, headers),
            basket_curl_set_write(curl, CURLOPT_WRITEFUNCTION, receiveBody),
            basket_curl_set_pointer(curl, CURLOPT_WRITEDATA, context),
            basket_curl_set_write(curl, CURLOPT_HEADERFUNCTION, receiveHeader),
            basket_curl_set_pointer(curl, CURLOPT_HEADERDATA, context),
            basket_curl_set_long(curl, CURLOPT_NOPROGRESS, 0),
            basket_curl_set_progress(curl, checkCancelled),
            basket_curl_set_pointer(curl, CURLOPT_XFERINFODATA, context),
        ]
        let method = request.httpMethod ?? "GET"
        if method != "GET" { settings.append(basket_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method)) }
        if let body {
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
            throw SyncError.unreachable("libcurl refused a setting: \(String(cString: curl_easy_strerror(failed)))")
        }

        let result = curl_easy_perform(curl)
        if transfer.over { throw SyncError.answerTooLarge(limit: transfer.limit) }
        guard result == CURLE_OK else { throw Self.failure(result, transfer, waited: deadline) }
        let status = basket_curl_response_code(curl)
        try HTTPSyncTransport.refuseRedirect(status: status, location: transfer.location)
        return (transfer.body, status)
    }

    /// A failed request as a person reads it (libcurl's own words are terse).
    static func failure(_ code: CURLcode, _ transfer: Transfer, waited seconds: Double) -> any Error {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK: return CancellationError()
        case CURLE_OPERATION_TIMEDOUT: return SyncError.noWholeAnswer(within: seconds, began: transfer.began)
        case CURLE_COULDNT_CONNECT: return SyncError.unreachable("the connection was refused (is the server running?)")
        case CURLE_COULDNT_RESOLVE_HOST: return SyncError.unreachable("no such host")
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return SyncError.unreachable("the connection was lost")
        case CURLE_BAD_CONTENT_ENCODING: return SyncError.badResponse("its gzip could not be undone")
        case CURLE_UNSUPPORTED_PROTOCOL: return SyncError.unreachable("the server's address is not http or https")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM:
            return SyncError.unreachable("the TLS connection failed (\(String(cString: curl_easy_strerror(code))))")
        default: return SyncError.unreachable(String(cString: curl_easy_strerror(code)))
        }
    }
}
