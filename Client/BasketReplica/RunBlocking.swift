import Dispatch
import Synchronization

/// Async work started from synchronous code: its result once it has one, and a signal when it does.
private final class Outcome<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () async throws -> T) {
        Task.detached { [self] in
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
    }
}

/// Runs async work (a ``SyncEngine`` call, say) from synchronous code and waits for its result.
/// It blocks the calling thread, so call it from a thread of your own (a command-line tool's main
/// thread), never from a task on Swift concurrency's pool, where the work could wait behind it.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome(body)
    outcome.done.wait()
    return try outcome.result.withLock { $0! }.get()
}

/// Like ``runBlocking(_:)``, waiting `seconds` at most: nil when the work had not ended by then
/// (it goes on in the background, and what it does is not waited for).
public func runBlocking<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () async throws -> T)
    -> Result<T, any Error>?
{
    let outcome = Outcome { await result(within: seconds, of: body) }
    outcome.done.wait()
    switch outcome.result.withLock({ $0 }) {
    case .success(let finished): return finished
    case .failure, nil: return nil  // not reached: waiting for the result throws nothing
    }
}

/// Runs `body` in a task of its own and waits for it `seconds` at most: its result, or nil when
/// time ran out first. The work is not cancelled then: it goes on in the background (a request
/// under way ends when answered, or with the process), and nothing waits for it. The one wait
/// with a deadline of the client: no polling, the first of the two to finish resumes the caller.
public func result<T: Sendable>(within seconds: Double, of body: @escaping @Sendable () async throws -> T) async
    -> Result<T, any Error>?
{
    let first = FirstOf<T>()
    return await withCheckedContinuation { continuation in
        first.wait(continuation)
        let work = Task.detached {
            do {
                first.resume(with: .success(try await body()))
            } catch {
                first.resume(with: .failure(error))
            }
        }
        let timer = Task.detached {
            try? await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)))
            first.resume(with: nil)
        }
        first.onResume { timer.cancel() }
        _ = work
    }
}

/// The continuation of ``result(within:of:)``, resumed once: by the work's result or by the
/// deadline, whichever comes first; the other is dropped.
private final class FirstOf<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<T, any Error>?, Never>?
        var resumed = false
        var onResume: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<Result<T, any Error>?, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Called once the caller is resumed (at once when it is already).
    func onResume(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.resumed { return true }
            state.onResume = action
            return false
        }
        if now { action() }
    }

    func resume(with result: Result<T, any Error>?) {
        var continuation: CheckedContinuation<Result<T, any Error>?, Never>?
        var action: (@Sendable () -> Void)?
        state.withLock { state in
            guard !state.resumed else { return }
            state.resumed = true
            continuation = state.continuation
            action = state.onResume
            state.continuation = nil
            state.onResume = nil
        }
        continuation?.resume(returning: result)
        action?()
    }
}
