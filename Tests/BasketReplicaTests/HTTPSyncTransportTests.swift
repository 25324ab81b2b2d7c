import BasketCore
import Foundation
import Synchronization
import Testing

@testable import BasketReplica

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the HTTP transport reads the server's refusals: a 503 (the server's store away for a
/// moment: a restart, a failover) is tried again a bounded number of times, then reported as
/// unreachable, which keeps the outbox and retries later; other refusals are reported at once.
struct HTTPSyncTransportTests {
    /// Answers with `statuses` in turn (the last one again once they run out), counting requests.
    final class Script: Sendable {
        let statuses: [Int]
        let asked = Atomic(0)
        init(_ statuses: [Int]) { self.statuses = statuses }

        func exchange(_ request: URLRequest) async throws -> (Data, Int) {
            let n = asked.wrappingAdd(1, ordering: .relaxed).oldValue
            let status = statuses[min(n, statuses.count - 1)]
            let body =
                status == 200
                ? #"{"lists":[]}"#
                : #"{"error":"\#(status == 503 ? "unavailable" : "forbidden")","message":"no"}"#
            return (Data(body.utf8), status)
        }
    }

    static func transport(_ script: Script) -> HTTPSyncTransport {
        HTTPSyncTransport(
            baseURL: URL(string: "http://127.0.0.1:1")!, token: "t", exchange: script.exchange,
            unavailableRetryDelays: [0.01, 0.02])
    }

    @Test func a503IsTriedAgainAndTheAnswerAfterItIsRead() async throws {
        let script = Script([503, 503, 200])
        #expect(try await Self.transport(script).lists().isEmpty)
        #expect(script.asked.load(ordering: .relaxed) == 3)
    }

    @Test func a503ThatLastsIsUnreachableAfterABoundedNumberOfTries() async throws {
        let script = Script([503])
        await #expect {
            _ = try await Self.transport(script).lists()
        } throws: { error in
            guard case SyncError.unreachable(let why) = error else { return false }
            return why.contains("503")
        }
        #expect(script.asked.load(ordering: .relaxed) == 3)
    }

    @Test func otherRefusalsAreReportedAtOnce() async throws {
        let script = Script([403])
        await #expect(throws: SyncError.server(status: 403, code: "forbidden", message: "no")) {
            _ = try await Self.transport(script).lists()
        }
        #expect(script.asked.load(ordering: .relaxed) == 1)
    }
}
