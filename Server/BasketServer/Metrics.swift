import Foundation
public import HTTPServer
import Synchronization

/// Counters and a latency histogram, rendered in Prometheus' text format.
public final class Metrics: Sendable {
    private static let buckets: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30]
    private struct Counts {
        var requests: [String: Int] = [:]  // "route|status"
        var bucketCounts = [Int](repeating: 0, count: buckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var operationsAccepted = 0
    }
    private let counts = Mutex(Counts())

    public init() {}

    public func record(_ request: HTTPListener.CompletedRequest) {
        counts.withLock { c in
            c.requests["\(request.route)|\(request.status)", default: 0] += 1
            // Long-polls wait on purpose: they would only blur the latency of real work.
            guard !(request.route.hasSuffix("/ops") && request.method == "GET" && request.seconds > 0.5) else { return }
            c.latencyCount += 1
            c.latencySum += request.seconds
            for (i, bound) in Self.buckets.enumerated() where request.seconds <= bound { c.bucketCounts[i] += 1 }
        }
    }

    func countAccepted(_ n: Int) { counts.withLock { $0.operationsAccepted += n } }

    func render(gauges: [(name: String, help: String, value: Double)]) -> String {
        let c = counts.withLock { $0 }
        var out = "# HELP basket_http_requests_total Requests answered, by route and status.\n"
        out += "# TYPE basket_http_requests_total counter\n"
        for (key, count) in c.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "|", maxSplits: 1)
            out += "basket_http_requests_total{route=\"\(parts[0])\",status=\"\(parts[1])\"} \(count)\n"
        }
        out += "# HELP basket_http_request_duration_seconds Time to answer (long-polls that waited excluded).\n"
        out += "# TYPE basket_http_request_duration_seconds histogram\n"
        for (i, bound) in Self.buckets.enumerated() {
            out += "basket_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(c.bucketCounts[i])\n"
        }
        out += "basket_http_request_duration_seconds_bucket{le=\"+Inf\"} \(c.latencyCount)\n"
        out += "basket_http_request_duration_seconds_sum \(c.latencySum)\n"
        out += "basket_http_request_duration_seconds_count \(c.latencyCount)\n"
        out += "# HELP basket_operations_accepted_total Operations accepted by pushes since start.\n"
        out += "# TYPE basket_operations_accepted_total counter\n"
        out += "basket_operations_accepted_total \(c.operationsAccepted)\n"
        for gauge in gauges {
            out += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) gauge\n\(gauge.name) \(gauge.value)\n"
        }
        return out
    }
}
