import Dispatch
import Synchronization

/// Runs async work (a ``SyncEngine`` call, say) from synchronous code and waits for its result.
/// It blocks the calling thread, so call it from a thread of your own (a command-line tool's main
/// thread), never from a task on Swift concurrency's pool, where the work could wait behind it.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
