import Synchronization

/// A small lock for state that is not `Sendable` itself.
final class Lock: Sendable {
    private let mutex = Mutex(())

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try mutex.withLock { _ in try body() }
    }
}
