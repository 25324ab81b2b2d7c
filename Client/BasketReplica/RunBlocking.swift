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
    let outcome = Outcome(body)
    guard outcome.done.wait(timeout: .now() + seconds) == .success else { return nil }
    return outcome.result.withLock { $0 }
}
