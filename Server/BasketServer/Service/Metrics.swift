import Foundation
public import HTTPServer
import Synchronization

/// Counters and a latency histogram, rendered in Prometheus' text format.
public final class Metrics: Sendable {
    private static let buckets: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30]
    private struct RouteStatus: Hashable {
        var route: String
        var status: Int
    }
    private struct Counts {
        var requests: [RouteStatus: Int] = [:]
        var bucketCounts = [Int](repeating: 0, count: buckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var operationsAccepted = 0
    }
    private let counts = Mutex(Counts())

    /// Counters at zero.
    public init() {}

    /// Counts one finished request by route and status.
    public func record(_ request: HTTPListener.CompletedRequest) {
        let key = RouteStatus(route: request.route, status: request.status)
        // Long-polls wait on purpose: they would only blur the latency of real work.
        let timed = !(request.seconds > 0.5 && request.method == "GET" && request.route.hasSuffix("/ops"))
        let bucket = Self.buckets.firstIndex { request.seconds <= $0 }
        counts.withLock { c in
            c.requests[key, default: 0] += 1
            guard timed else { return }
            c.latencyCount += 1
            c.latencySum += request.seconds
            // Buckets are cumulative: the first that holds the time, and every one above it.
            if let bucket { for i in bucket..<Self.buckets.count { c.bucketCounts[i] += 1 } }
        }
    }

    func countAccepted(_ n: Int) { counts.withLock { $0.operationsAccepted += n } }

    func render(gauges: [(name: String, help: String, value: Double)]) -> String {
        let c = counts.withLock { $0 }
        var out = "# HELP basket_http_requests_total Requests answered, by route and status.\n"
        out += "# TYPE basket_http_requests_total counter\n"
        let sorted = c.requests.sorted { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }
        for (key, count) in sorted {
            out += "basket_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
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
