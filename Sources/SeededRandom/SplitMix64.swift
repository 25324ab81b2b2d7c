/// A small deterministic random generator (SplitMix64): the same seed gives the same sequence,
/// so a test case, a benchmark's data or a simulation run can be replayed from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence `seed` decides.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<n` (n > 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// What a simulated network does to one request, drawn from a sync's fault seed: the same seed
/// gives the same fates, in `basket-sim` and in a scenario's `sync (faults N)` alike.
public enum NetworkFate: Sendable, Equatable {
    /// Delivered, and its answer too.
    case deliver
    /// Lost on the way: the server never sees it.
    case dropRequest
    /// Delivered, and the answer lost on the way back.
    case dropAnswer
    /// Delivered twice.
    case duplicate
    /// Held back, to reach the server later in another order; its answer lost.
    case delay

    /// The next request's fate: 8 % lost, 8 % answer lost, 6 % duplicated, 6 % delayed.
    public static func draw(_ random: inout SplitMix64) -> NetworkFate {
        switch random.below(100) {
        case 0..<8: .dropRequest
        case 8..<16: .dropAnswer
        case 16..<22: .duplicate
        case 22..<28: .delay
        default: .deliver
        }
    }
}
