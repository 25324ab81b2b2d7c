import Foundation
import Synchronization

/// Failed sign-ins, limited two ways so that neither an attacker's address nor a guessed name
/// can lock a real owner out from elsewhere:
/// - per client address: at most `perAddress` failures (any name) and signups in a minute, then
///   429 until the oldest is a minute old;
/// - per (name, address): after 3 failures each attempt waits twice as long as the one before
///   (1 s, 2 s, 4 s, … at most 5 minutes); a success from that address clears it, and the same
///   name from another address is not delayed.
/// Time is monotonic (milliseconds since boot), arithmetic saturates, and memory is bounded:
/// at most `capacity` addresses and pairs are remembered, the stalest forgotten first.
final class LoginLimiter: Sendable {
    struct Pair: Hashable {
        var name: String
        var address: String
    }
    struct Delay {
        var failures: Int
        var notBefore: UInt64
        var lastSeen: UInt64
    }

    /// Recent failures (and signups) per address, and the delay of each (name, address).
    private struct Memory {
        var events: [String: [UInt64]] = [:]
        var delays: [Pair: Delay] = [:]

        /// Forgets the stalest entries once `capacity` is reached.
        mutating func makeRoom(capacity: Int) {
            if events.count >= capacity {
                let stalest = events.sorted { ($0.value.last ?? 0) < ($1.value.last ?? 0) }.prefix(capacity / 4)
                for (key, _) in stalest { events.removeValue(forKey: key) }
            }
            if delays.count >= capacity {
                let stalest = delays.sorted { $0.value.lastSeen < $1.value.lastSeen }.prefix(capacity / 4)
                for (key, _) in stalest { delays.removeValue(forKey: key) }
            }
        }
    }
    private let memory = Mutex(Memory())
    let perAddress: Int
    let capacity: Int
    static let window: UInt64 = 60_000
    static let freeFailures = 3
    static let longestDelay: UInt64 = 300_000

    init(perAddress: Int, capacity: Int = 100_000) {
        self.perAddress = perAddress
        self.capacity = capacity
    }

    /// Milliseconds since boot: never steps back when the wall clock does.
    static func monotonic() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// Seconds to wait before `address` may try again (any name), or nil.
    func addressBlocked(_ address: String, now: UInt64) -> Int? {
        memory.withLock { memory in
            let recent = (memory.events[address] ?? []).filter { now.subtractingSaturated($0) < Self.window }
            memory.events[address] = recent.isEmpty ? nil : recent
            guard recent.count >= perAddress, let oldest = recent.first else { return nil }
            return Self.seconds(Self.window.subtractingSaturated(now.subtractingSaturated(oldest)))
        }
    }

    /// Seconds before `name` may be tried again from `address`, or nil.
    func pairDelayed(_ name: String, _ address: String, now: UInt64) -> Int? {
        memory.withLock { memory in
            guard let delay = memory.delays[Pair(name: name, address: address)], delay.notBefore > now else {
                return nil
            }
            return Self.seconds(delay.notBefore - now)
        }
    }

    /// Counts an event against `address` (a failed login, or a signup).
    func count(_ address: String, now: UInt64) {
        memory.withLock { memory in
            memory.makeRoom(capacity: capacity)
            var recent = memory.events[address] ?? []
            if recent.count >= perAddress * 2 { recent.removeFirst() }  // bounded per address too
            recent.append(now)
            memory.events[address] = recent
        }
    }

    func failed(_ name: String, _ address: String, now: UInt64) {
        count(address, now: now)
        memory.withLock { memory in
            let pair = Pair(name: name, address: address)
            var delay = memory.delays[pair] ?? Delay(failures: 0, notBefore: 0, lastSeen: now)
            delay.failures = min(delay.failures + 1, 64)
            delay.lastSeen = now
            if delay.failures >= Self.freeFailures {
                let exponent = min(delay.failures - Self.freeFailures, 20)
                let wait = min(UInt64(1_000) << UInt64(exponent), Self.longestDelay)
                delay.notBefore = now.addingSaturated(wait)
            }
            memory.delays[pair] = delay
        }
    }

    func succeeded(_ name: String, _ address: String) {
        memory.withLock { _ = $0.delays.removeValue(forKey: Pair(name: name, address: address)) }
    }

    /// Entries remembered (for tests and /metrics).
    var size: Int { memory.withLock { $0.events.count + $0.delays.count } }

    /// Whole seconds, rounded up (a wait of exactly 1,000 ms is 1 s), at least 1.
    private static func seconds(_ milliseconds: UInt64) -> Int {
        Int(min(max(1, milliseconds.addingSaturated(999) / 1000), 3_600))
    }
}

extension UInt64 {
    func subtractingSaturated(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
    func addingSaturated(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
