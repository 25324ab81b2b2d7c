import BasketReplica
public import SeededRandom
import Synchronization

/// What a simulated network does to one request, drawn from a sync's fault seed: the same seed
/// gives the same fates, in the lab (`basket-sim`, `basket-lab run`) and in a real-process replay
/// (`basket-lab replay`) alike.
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

/// A network that meets each request with a fate drawn from the faults of the sync in progress:
/// the one switch over ``NetworkFate`` for the lab (requests answered by the server's router in
/// this process) and for a real-process replay (requests sent over HTTP). Requests held back
/// (``NetworkFate/delay``) wait here for ``takeDelayed(order:)``.
public final class FaultyNetwork<Request: Sendable>: Sendable {
    private struct State {
        var faults: SplitMix64?
        var delayed: [Request] = []
    }
    private let state = Mutex(State())

    /// A network without faults until ``faults(_:)``.
    public init() {}

    /// Faults drawn from `seed` for the requests from now on (nil or 0: none).
    public func faults(_ seed: UInt64?) {
        state.withLock { $0.faults = seed.flatMap { $0 == 0 ? nil : SplitMix64(seed: $0) } }
    }

    /// The next request's fate (``NetworkFate/deliver`` without faults).
    public func draw() -> NetworkFate {
        state.withLock { state in
            guard var faults = state.faults else { return .deliver }
            defer { state.faults = faults }
            return NetworkFate.draw(&faults)
        }
    }

    /// Carries `request` as `fate` says: `deliver` sends it (twice for a duplicate); a lost request
    /// or answer, or one held back, throws `SyncError.unreachable` as a real network would.
    public func carry<Answer>(
        _ request: Request, _ fate: NetworkFate, deliver: (Request) async throws -> Answer
    ) async throws -> Answer {
        switch fate {
        case .deliver: return try await deliver(request)
        case .dropRequest: throw SyncError.unreachable("simulated network: request lost")
        case .dropAnswer:
            _ = try await deliver(request)
            throw SyncError.unreachable("simulated network: answer lost")
        case .duplicate:
            _ = try? await deliver(request)
            return try await deliver(request)
        case .delay:
            state.withLock { $0.delayed.append(request) }
            throw SyncError.unreachable("simulated network: request delayed")
        }
    }

    /// The requests held back, in an order drawn from `order` (they are forgotten here).
    public func takeDelayed(order: UInt64) -> [Request] {
        var random = SplitMix64(seed: order)
        var delayed = state.withLock { state in
            defer { state.delayed = [] }
            return state.delayed
        }
        var ordered: [Request] = []
        while !delayed.isEmpty { ordered.append(delayed.remove(at: random.below(delayed.count))) }
        return ordered
    }
}
