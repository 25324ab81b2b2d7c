import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How ``HTTPSyncTransport`` reads an answer through URLSession, trusting no server: a redirect is
/// not followed (the token would go along), the answer's bytes are counted as they arrive, after
/// gzip is undone, and the request is stopped past ``HTTPSyncTransport/maxAnswerBytes``, and a
/// request that has not ended by its deadline is stopped (URLSession's own timeout only measures
/// silence: a server sending a byte every few seconds would hold it forever).
///
/// On Linux, FoundationNetworking's libcurl inflates all of a gzip answer that has arrived in one
/// go before a delegate can stop it, and queues it for the delegate: 0.5 MB of gzip that inflates
/// to 512 MiB peaked at 0.57 GB (1.1 GB when the whole answer was read and then measured). No
/// URLSession setting turns its decompression off, so the command-line client passes an exchange
/// over libcurl itself there (the CurlExchange module), which holds at most the cap.
final class AnswerReader: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        var task: URLSessionDataTask
        var continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>
        var data = Data()
        var response: HTTPURLResponse?
        /// Why the reader stopped the request, when it did.
        var failure: SyncError?
    }
    // Each request by its task's identifier, until it completes.
    private let pending = Mutex<[Int: Pending]>([:])
    let maxBytes: Int

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Sends `request` on `session` (whose delegate this reader is) and returns the whole answer,
    /// or throws when it is larger than ``maxBytes`` or has not ended within `seconds`.
    func answer(to request: URLRequest, in session: URLSession, within seconds: Double) async throws -> (
        Data, HTTPURLResponse
    ) {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request)
            let id = task.taskIdentifier
            pending.withLock { $0[id] = Pending(task: task, continuation: continuation) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                // A server that said nothing at all is hung; one that began is too slow.
                let began = pending.withLock { $0[id]?.response != nil }
                stop(id, SyncError.noWholeAnswer(within: seconds, began: began))
            }
            task.resume()
        }
    }

    /// Stops a request still under way, for `reason` (its completion reports it).
    private func stop(_ id: Int, _ reason: SyncError) {
        let task: URLSessionDataTask? = pending.withLock { pending in
            guard pending[id] != nil, pending[id]?.failure == nil else { return nil }
            pending[id]?.failure = reason
            return pending[id]?.task
        }
        task?.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        pending.withLock { $0[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let over: Bool = pending.withLock { pending in
            guard pending[id]?.failure == nil else { return false }
            pending[id]?.data.append(data)
            return (pending[id]?.data.count ?? 0) > maxBytes
        }
        if over {
            pending.withLock { $0[id]?.data = Data() }
            stop(id, SyncError.answerTooLarge(limit: maxBytes))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let done = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let failure = done.failure {
            done.continuation.resume(throwing: failure)
        } else if let error {
            done.continuation.resume(throwing: error)
        } else if let response = done.response {
            done.continuation.resume(returning: (done.data, response))
        } else {
            done.continuation.resume(throwing: SyncError.badResponse("not an HTTP answer"))
        }
    }

    /// A redirect is answered with the redirect itself: URLSession would otherwise send the
    /// request, Authorization header included, to whatever host the server names.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
