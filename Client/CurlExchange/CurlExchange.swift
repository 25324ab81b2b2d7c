public import BasketReplica
import Curl
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP for `HTTPSyncTransport` over libcurl's easy interface (the `Curl` module), for the
/// command-line client on Linux, where URLSession cannot bound an answer's memory:
/// FoundationNetworking always asks libcurl to undo gzip and queues everything libcurl inflated
/// for its delegate before the delegate can stop the request, so half a megabyte of gzip became
/// 0.57 GB in memory.
///
/// Here libcurl hands the inflated answer to a write callback in pieces of at most 16 KiB, and
/// the callback refuses the piece that would take the answer past its cap: libcurl stops
/// inflating at once. An answer therefore holds at most the cap plus one piece, whatever its gzip
/// inflates to. The rest is what `HTTPSyncTransport.urlSession()` does: redirects refused (the
/// token would go along), a deadline for the whole request (a server sending a byte every few
/// seconds is given up on), connections kept alive between requests.
public enum CurlExchange {
    /// An exchange for `HTTPSyncTransport.init(baseURL:token:answerTimeout:exchange:unavailableRetryDelays:)`
    /// whose answers are read up to `maxAnswerBytes` after gzip is undone.
    /// Cheap to make: libcurl starts (and loads its TLS library) at the first request, so a
    /// command that never reaches the server pays nothing for it.
    public static func make(maxAnswerBytes: Int = HTTPSyncTransport.maxAnswerBytes) -> HTTPSyncTransport.Exchange {
        let handles = CurlHandles()
        return { request in try await perform(request, on: handles, maxAnswerBytes: maxAnswerBytes) }
    }

    static func perform(_ request: URLRequest, on handles: CurlHandles, maxAnswerBytes: Int) async throws -> (
        Data, Int
    ) {
        guard let url = request.url?.absoluteString else { throw SyncError.badResponse("a request without a URL") }
        let deadline = HTTPSyncTransport.deadline(of: request)
        let curlRequest = CurlRequest(
            method: request.httpMethod ?? "GET", url: url,
            headers: (request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) },
            body: request.httpBody.map { Array($0) }, deadline: deadline, maxAnswerBytes: maxAnswerBytes)
        let answer: CurlAnswer
        do {
            answer = try await handles.perform(curlRequest)
        } catch {
            throw failure(error, waited: deadline)
        }
        try HTTPSyncTransport.refuseRedirect(status: answer.status, location: answer.location)
        return (answer.body, answer.status)
    }

    /// A failed request as a person reads it (libcurl's own words are terse).
    static func failure(_ error: CurlError, waited seconds: Double) -> any Error {
        switch error {
        case .answerTooLarge(let limit): SyncError.answerTooLarge(limit: limit)
        case .cancelled: CancellationError()
        case .timedOut(let began): SyncError.noWholeAnswer(within: seconds, began: began)
        case .couldNotConnect: SyncError.unreachable("the connection was refused (is the server running?)")
        case .noSuchHost: SyncError.unreachable("no such host")
        case .connectionLost: SyncError.unreachable("the connection was lost")
        case .badGzip: SyncError.badResponse("its gzip could not be undone")
        case .unsupportedProtocol: SyncError.unreachable("the server's address is not http or https")
        case .tls(let words): SyncError.unreachable("the TLS connection failed (\(words))")
        case .addressRefused: SyncError.unreachable("the server's address was refused")
        case .other(let words): SyncError.unreachable(words)
        }
    }
}
