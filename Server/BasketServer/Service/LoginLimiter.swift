import Foundation
import Synchronization

/// Failed sign-ins, limited two ways so that neither an attacker's address nor a guessed name
/// can lock a real owner out from elsewhere:
/// - per client address: at most `perAddress` failures (any name) and signups in a minute, then
///   429 until the oldest is a minute old;
/// - per (name, address): after 3 failures each attempt waits twice as long as the one before
///   (1 s, 2 s, 4 s, … at most 5 minutes); a success from that address clears it, and the same
///   name from another address is not delayed.
///
/// An attempt counts from when it is let through (``attempt(_:_:now:)``), as a failure until its
/// password has been checked: 17 wrong passwords sent at once are not all checked before the
/// first of them counts. Addresses are the client's address group (`AddressGroup`).
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
        /// Attempts let through whose password is still being checked, per address and per pair
        /// (bounded by the password queue, which takes at most a couple per address).
        var pendingByAddress: [String: Int] = [:]
        var pending: [Pair: Int] = [:]

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

    /// Why an attempt may not go on now, and for how many seconds.
    enum Refusal: Equatable {
        /// Too many failures (and signups) from the address, under any name.
        case address(seconds: Int)
        /// Too many failures for this name from the address.
        case name(seconds: Int)
    }

    /// Seconds to wait before `address` may try again (any name), or nil.
    func addressBlocked(_ address: String, now: UInt64) -> Int? {
        memory.withLock { Self.addressBlocked(&$0, address, now: now, perAddress: perAddress) }
    }

    private static func addressBlocked(_ memory: inout Memory, _ address: String, now: UInt64, perAddress: Int)
        -> Int?
    {
        let recent = (memory.events[address] ?? []).filter { now.subtractingSaturated($0) < Self.window }
        memory.events[address] = recent.isEmpty ? nil : recent
        let pending = memory.pendingByAddress[address, default: 0]
        guard recent.count + pending >= perAddress else { return nil }
        guard let oldest = recent.first else { return 1 }  // only attempts under way: ask again soon
        return Self.seconds(Self.window.subtractingSaturated(now.subtractingSaturated(oldest)))
    }

    /// Seconds before `pair`'s name may be tried again from its address, or nil.
    private static func pairDelayed(_ memory: inout Memory, _ pair: Pair, now: UInt64) -> Int? {
        let delay = memory.delays[pair]
        let pending = memory.pending[pair, default: 0]
        // Attempts under way count as failures until they are checked: past the free ones, one at a time.
        if pending > 0 && (delay?.failures ?? 0) + pending >= Self.freeFailures { return 1 }
        guard let delay, delay.notBefore > now else { return nil }
        return Self.seconds(delay.notBefore - now)
    }

    /// Lets a sign-in attempt go on, or says why not. One let through is under way until
    /// ``failed(_:_:now:)``, ``succeeded(_:_:)`` or ``abandoned(_:_:)`` ends it.
    func attempt(_ name: String, _ address: String, now: UInt64) -> Refusal? {
        memory.withLock { memory in
            if let seconds = Self.addressBlocked(&memory, address, now: now, perAddress: perAddress) {
                return .address(seconds: seconds)
            }
            let pair = Pair(name: name, address: address)
            if let seconds = Self.pairDelayed(&memory, pair, now: now) { return .name(seconds: seconds) }
            memory.pendingByAddress[address, default: 0] += 1
            memory.pending[pair, default: 0] += 1
            return nil
        }
    }

    /// Ends an attempt that was let through, without a verdict (its password was never checked).
    func abandoned(_ name: String, _ address: String) {
        memory.withLock { Self.end(&$0, Pair(name: name, address: address)) }
    }

    private static func end(_ memory: inout Memory, _ pair: Pair) {
        if let count = memory.pending[pair] { memory.pending[pair] = count > 1 ? count - 1 : nil }
        if let count = memory.pendingByAddress[pair.address] {
            memory.pendingByAddress[pair.address] = count > 1 ? count - 1 : nil
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

    /// Ends an attempt: a wrong password.
    func failed(_ name: String, _ address: String, now: UInt64) {
        count(address, now: now)
        memory.withLock { memory in
            let pair = Pair(name: name, address: address)
            Self.end(&memory, pair)
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

    /// Ends an attempt: the right password (the pair's delay is cleared).
    func succeeded(_ name: String, _ address: String) {
        memory.withLock { memory in
            let pair = Pair(name: name, address: address)
            Self.end(&memory, pair)
            memory.delays.removeValue(forKey: pair)
        }
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
