// What every test target may use: temporary directories, a seeded generator, a hand-moved
// clock, a locked value. Real processes and PostgreSQL are in TestServers.
public import Foundation
import SeededRandom
import Synchronization

/// A temporary directory, removed when the value is deinitialised.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String = "basket-test") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public var path: String { url.path }

    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The tests' deterministic random generator: the same seed gives the same test case.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public mutating func next() -> UInt64 { generator.next() }

    /// A number in `0..<n` (n > 0).
    public mutating func below(_ n: Int) -> Int { generator.below(n) }

    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool { generator.chance(percent) }
}

/// A wall clock that tests move by hand.
public final class ManualClock: Sendable {
    private let now: Mutex<UInt64>

    public init(milliseconds: UInt64 = 1_764_400_000_000) { now = Mutex(milliseconds) }

    public var milliseconds: UInt64 { now.withLock { $0 } }

    public func advance(by delta: UInt64) { now.withLock { $0 += delta } }

    public func set(_ value: UInt64) { now.withLock { $0 = value } }
}

/// A value behind a lock, shareable between threads.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try mutex.withLock { try body(&$0) }
    }
}
