import Foundation
import HTTPServer

/// Runs long work on a few threads of its own, off libmicrohttpd's request threads, with a bounded
/// queue. Two pools use it:
/// - password hashing (PBKDF2, about 0.3 s of one core at 600,000 iterations): signups in a loop
///   can keep its threads busy, but never the ones that serve pushes and pulls; when its queue is
///   full a request is refused at once (503 with Retry-After) instead of waiting. Its jobs carry
///   the client's address and a class: sign-ins go before signups, addresses take turns within a
///   class, and one address has at most ``perKeyLimit`` jobs in the pool, so neither a signup
///   flood nor one address can keep a sign-in from another waiting behind it;
/// - large pushes (``BasketService/offloadedPushBytes``): decoded and stored there, so the other
///   connections of the HTTP thread that read one do not wait behind it, and decoding overlaps
///   the store's writer; when its queue is full a push runs on its HTTP thread as small ones do.
final class WorkPool: @unchecked Sendable {
    // `@unchecked Sendable`: `classes`, `perKey` and `closed` are behind `condition`; the threads
    // are only started in init.
    private let condition = NSCondition()
    /// The jobs of one class, in turns by key: `order` holds each key with jobs once, the next
    /// to be served first.
    private struct Turns {
        var jobs: [String: [@Sendable () -> Void]] = [:]
        var order: [String] = []
        var waiting = 0
    }
    /// By class, the most urgent first (``Priority``).
    private var classes = [Turns](repeating: Turns(), count: Priority.allCases.count)
    /// Jobs of each key waiting or running.
    private var perKey: [String: Int] = [:]
    private var closed = false
    /// Jobs of one class that may wait for a thread; more are refused (so a flood of one class
    /// never leaves the other without room).
    let queueLimit: Int
    /// Jobs one key may have waiting or running at once; more are refused.
    let perKeyLimit: Int

    /// Which jobs go first: every waiting job of a class before any of the next.
    enum Priority: Int, CaseIterable {
        case first
        case later
    }

    /// What ``submit(key:priority:_:)`` did.
    enum Admission: Equatable {
        case queued
        /// ``queueLimit`` jobs of the class wait already, or the pool is closed.
        case full
        /// The key has ``perKeyLimit`` jobs in the pool.
        case keyFull
    }

    init(name: String, threads: Int, queueLimit: Int, perKeyLimit: Int = .max) {
        self.queueLimit = queueLimit
        self.perKeyLimit = perKeyLimit
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "basket-\(name)-\(index)"
            thread.start()
        }
    }

    /// Jobs waiting for a thread.
    var waiting: Int { condition.withLock { classes.reduce(0) { $0 + $1.waiting } } }

    /// Queues `job` under `key` (jobs of one key count against ``perKeyLimit``) in its class.
    func submit(key: String = "", priority: Priority = .first, _ job: @escaping @Sendable () -> Void) -> Admission {
        condition.withLock {
            let turns = priority.rawValue
            guard !closed, classes[turns].waiting < queueLimit else { return .full }
            guard perKey[key, default: 0] < perKeyLimit else { return .keyFull }
            perKey[key, default: 0] += 1
            classes[turns].waiting += 1
            if classes[turns].jobs[key] == nil { classes[turns].order.append(key) }
            classes[turns].jobs[key, default: []].append(job)
            condition.signal()
            return .queued
        }
    }

    /// Answers `responder` with what `work` returns, computed on one of the pool's threads
    /// (nothing ran unless it says ``Admission/queued``).
    func answer(
        _ responder: Responder, key: String = "", priority: Priority = .first,
        _ work: @escaping @Sendable () throws -> HTTPResponse
    ) -> Admission {
        submit(key: key, priority: priority) {
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

    /// The next job: the most urgent class's, of the key whose turn it is (which goes to the end
    /// of the turns if it has more). Call under `condition`.
    private func next() -> (key: String, job: @Sendable () -> Void)? {
        for turns in classes.indices where !classes[turns].order.isEmpty {
            let key = classes[turns].order.removeFirst()
            var jobs = classes[turns].jobs[key] ?? []
            let job = jobs.removeFirst()
            if jobs.isEmpty {
                classes[turns].jobs[key] = nil
            } else {
                classes[turns].jobs[key] = jobs
                classes[turns].order.append(key)
            }
            classes[turns].waiting -= 1
            return (key, job)
        }
        return nil
    }

    private func work() {
        while true {
            let taken: (key: String, job: @Sendable () -> Void)? = condition.withLock {
                while classes.allSatisfy({ $0.waiting == 0 }) && !closed { condition.wait() }
                return next()
            }
            guard let (key, job) = taken else { return }
            job()
            condition.withLock {
                let left = perKey[key, default: 1] - 1
                perKey[key] = left > 0 ? left : nil
            }
        }
    }
}
