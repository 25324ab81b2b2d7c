internal import Foundation

/// A hybrid logical clock timestamp: 48 bits of Unix milliseconds and a 16-bit counter.
///
/// Timestamps order by milliseconds, then counter. Two operations with the same timestamp are
/// ordered by their replica id (see ``Version``), so the order of all operations is total.
public struct HybridTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `milliseconds << 16 | counter`.
    public let rawValue: UInt64

    /// The largest millisecond value that fits in 48 bits.
    public static let maxMilliseconds: UInt64 = (1 << 48) - 1
    /// The smallest timestamp, before any other.
    public static let zero = HybridTimestamp(rawValue: 0)

    /// The timestamp whose packed value is `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The timestamp at `milliseconds` (at most ``maxMilliseconds``) with `counter`.
    public init(milliseconds: UInt64, counter: UInt16) {
        precondition(milliseconds <= Self.maxMilliseconds, "milliseconds do not fit in 48 bits")
        self.rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// Unix milliseconds (the top 48 bits).
    public var milliseconds: UInt64 { rawValue >> 16 }
    /// Orders timestamps within one millisecond (the low 16 bits).
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `milliseconds.counter`, e.g. `1764425400123.2`.
    public var description: String { "\(milliseconds).\(counter)" }
}

/// A timestamp too far ahead of the receiver's clock (more than ``HybridClock/maxDrift``).
public struct ClockSkewError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stable error code used on the wire and in the CLI: `clock_skew`.
    public static let code = Wire.ErrorCode.clockSkew.rawValue
    /// How far the remote timestamp is ahead of the receiver's wall clock, in milliseconds.
    public let offsetMilliseconds: UInt64
    /// The receiver's wall clock when it refused the timestamp.
    public let receiverMilliseconds: UInt64

    /// A refusal of a timestamp `offsetMilliseconds` ahead of a receiver whose clock read `receiverMilliseconds`.
    public init(offsetMilliseconds: UInt64, receiverMilliseconds: UInt64) {
        self.offsetMilliseconds = offsetMilliseconds
        self.receiverMilliseconds = receiverMilliseconds
    }

    public var description: String {
        let seconds = Double(offsetMilliseconds) / 1000
        return "clock_skew: a timestamp is \(formatSeconds(seconds)) ahead of this clock "
            + "(at most \(HybridClock.maxDrift / 60_000) minutes are accepted)"
    }

    private func formatSeconds(_ s: Double) -> String {
        s >= 120 ? "\(Int((s / 60).rounded())) min" : "\(Int(s.rounded())) s"
    }
}

/// A hybrid logical clock. A value type: the owner persists ``last`` and passes the wall clock in,
/// so the clock itself does no I/O and tests can drive it.
public struct HybridClock: Hashable, Sendable {
    /// Remote timestamps further ahead of the wall clock than this are refused: 5 minutes.
    public static let maxDrift: UInt64 = 5 * 60 * 1000

    /// The latest timestamp issued or received.
    public private(set) var last: HybridTimestamp

    /// A clock that has issued or received nothing after `last`.
    public init(last: HybridTimestamp = .zero) { self.last = last }

    /// A new timestamp, greater than every timestamp issued or received before.
    public mutating func now(wallMilliseconds: UInt64) -> HybridTimestamp {
        let wall = min(wallMilliseconds, HybridTimestamp.maxMilliseconds)
        let next: HybridTimestamp
        if wall > last.milliseconds {
            next = HybridTimestamp(milliseconds: wall, counter: 0)
        } else if last.counter < UInt16.max {
            next = HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter + 1)
        } else {
            next = HybridTimestamp(milliseconds: last.milliseconds + 1, counter: 0)
        }
        last = next
        return next
    }

    /// A new timestamp from the system's wall clock (see ``now(wallMilliseconds:)``).
    public mutating func now() -> HybridTimestamp {
        now(wallMilliseconds: Self.wallClockMilliseconds())
    }

    /// Takes in a remote timestamp against the system's wall clock (see ``receive(_:wallMilliseconds:)``).
    public mutating func receive(_ remote: HybridTimestamp) throws(ClockSkewError) {
        try receive(remote, wallMilliseconds: Self.wallClockMilliseconds())
    }

    /// Refuses a timestamp more than ``maxDrift`` ahead of `wallMilliseconds`.
    public static func check(_ remote: HybridTimestamp, wallMilliseconds: UInt64) throws(ClockSkewError) {
        if remote.milliseconds > wallMilliseconds + maxDrift {
            throw ClockSkewError(
                offsetMilliseconds: remote.milliseconds - wallMilliseconds, receiverMilliseconds: wallMilliseconds)
        }
    }

    /// Takes in a remote timestamp: the clock moves past it, so later local writes order after it.
    /// - Throws: ``ClockSkewError`` when `remote` is more than ``maxDrift`` ahead; the clock is unchanged.
    public mutating func receive(_ remote: HybridTimestamp, wallMilliseconds: UInt64) throws(ClockSkewError) {
        try Self.check(remote, wallMilliseconds: wallMilliseconds)
        #if DEBUG
            if PlantedRule.plants(.clockIgnoresReceived) { return }
        #endif
        if remote > last { last = remote }
    }

    /// The current Unix time in milliseconds.
    public static func wallClockMilliseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}

/// The order of operations on one register: timestamp first, then replica id as the tie-break.
public struct Version: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// When the write was made.
    public var timestamp: HybridTimestamp
    /// Who made it: breaks ties between equal timestamps.
    public var replica: ReplicaID

    /// The version of a write made at `timestamp` by `replica`.
    public init(timestamp: HybridTimestamp, replica: ReplicaID) {
        self.timestamp = timestamp
        self.replica = replica
    }

    /// The smallest version, beaten by every write.
    public static let zero = Version(timestamp: .zero, replica: ReplicaID(rawValue: 0))

    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.timestamp != rhs.timestamp { return lhs.timestamp < rhs.timestamp }
        return lhs.replica.rawValue < rhs.replica.rawValue
    }

    public var description: String { "\(timestamp)@\(replica)" }
}
