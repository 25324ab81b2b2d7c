import BasketReplica
import Foundation
import SeededRandom
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The network of a scenario run: HTTP to the real server, through the faults of a
/// `sync (faults N)` while it runs (drawn as `basket-sim` draws them), delayed requests kept
/// for `network: deliver delayed`.
final class ScenarioNetwork: Sendable {
    private struct State {
        var faults: SplitMix64?
        var delayed: [URLRequest] = []
    }
    private let state = Mutex(State())
    private let http = HTTPSyncTransport.urlSession()

    /// Faults drawn from `seed` for the requests from now on (nil: none).
    func faults(_ seed: UInt64?) { state.withLock { $0.faults = seed.map(SplitMix64.init(seed:)) } }

    /// How a command's requests travel.
    var exchange: HTTPSyncTransport.Exchange {
        { [self] request in
            let fate: NetworkFate = state.withLock { state in
                guard var faults = state.faults else { return .deliver }
                defer { state.faults = faults }
                return NetworkFate.draw(&faults)
            }
            switch fate {
            case .deliver: return try await http(request)
            case .dropRequest: throw SyncError.unreachable("scenario network: request lost")
            case .dropAnswer:
                _ = try await http(request)
                throw SyncError.unreachable("scenario network: answer lost")
            case .duplicate:
                _ = try? await http(request)
                return try await http(request)
            case .delay:
                state.withLock { $0.delayed.append(request) }
                throw SyncError.unreachable("scenario network: request delayed")
            }
        }
    }

    /// The delayed requests reach the server, in an order drawn from `order`; answers are lost.
    func deliverDelayed(order: UInt64) {
        var random = SplitMix64(seed: order)
        var delayed = state.withLock { state in
            defer { state.delayed = [] }
            return state.delayed
        }
        var ordered: [URLRequest] = []
        while !delayed.isEmpty { ordered.append(delayed.remove(at: random.below(delayed.count))) }
        let http = self.http
        let requests = ordered
        _ = try? runBlocking {
            for request in requests { _ = try? await http(request) }
        }
    }
}
