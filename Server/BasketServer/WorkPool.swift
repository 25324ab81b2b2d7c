import Foundation
import HTTPServer

/// Runs long work on a few threads of its own, off libmicrohttpd's request threads, with a bounded
/// queue. Two pools use it:
/// - password hashing (PBKDF2, about 0.3 s of one core at 600,000 iterations): signups in a loop
///   can keep its threads busy, but never the ones that serve pushes and pulls; when its queue is
///   full a request is refused at once (503 with Retry-After) instead of waiting;
/// - large pushes (``BasketService/offloadedPushBytes``): decoded and stored there, so the other
///   connections of the HTTP thread that read one do not wait behind it, and decoding overlaps
///   the store's writer; when its queue is full a push runs on its HTTP thread as small ones do.
final class WorkPool: @unchecked Sendable {
    // `@unchecked Sendable`: `jobs` and `closed` are behind `condition`; the threads are only
    // started in init.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var closed = false
    /// Jobs that may wait for a thread; more are refused.
    let queueLimit: Int

    init(name: String, threads: Int, queueLimit: Int) {
        self.queueLimit = queueLimit
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "basket-\(name)-\(index)"
            thread.start()
        }
    }

    /// Jobs waiting for a thread.
    var waiting: Int { condition.withLock { jobs.count } }

    /// Queues `job`; false when `queueLimit` jobs already wait (or the pool is closed).
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.withLock {
            guard !closed, jobs.count < queueLimit else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
    }

    /// Answers `responder` with what `work` returns, computed on one of the pool's threads; false
    /// when the queue is full (nothing ran).
    func answer(_ responder: Responder, _ work: @escaping @Sendable () throws -> HTTPResponse) -> Bool {
        submit {
            do {
                responder.respond(try work())
            } catch {
                responder.fail(error)
            }
        }
    }

    /// Lets the threads finish the jobs they hold and end; later submissions are refused.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    private func work() {
        while true {
            let job: (@Sendable () -> Void)? = condition.withLock {
                while jobs.isEmpty && !closed { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job()
        }
    }
}
