import Foundation
public import HTTPServer

/// Counters and a latency histogram, rendered in Prometheus' text format.
public final class Metrics: @unchecked Sendable {
    // `@unchecked Sendable`: every field is behind `lock`.
    private let lock = NSLock()
    private var requests: [String: Int] = [:]  // "route|status"
    private static let buckets: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30]
    private var bucketCounts = [Int](repeating: 0, count: buckets.count)
    private var latencyCount = 0
    private var latencySum = 0.0
    private var operationsAccepted = 0

    public init() {}

    public func record(_ request: HTTPListener.CompletedRequest) {
        lock.withLock {
            requests["\(request.route)|\(request.status)", default: 0] += 1
            // Long-polls wait on purpose: they would only blur the latency of real work.
            guard !(request.route.hasSuffix("/ops") && request.method == "GET" && request.seconds > 0.5) else { return }
            latencyCount += 1
            latencySum += request.seconds
            for (i, bound) in Self.buckets.enumerated() where request.seconds <= bound { bucketCounts[i] += 1 }
        }
    }

    func countAccepted(_ n: Int) { lock.withLock { operationsAccepted += n } }

    func render(gauges: [(name: String, help: String, value: Double)]) -> String {
        lock.withLock {
            var out = "# HELP basket_http_requests_total Requests answered, by route and status.\n"
            out += "# TYPE basket_http_requests_total counter\n"
            for (key, count) in requests.sorted(by: { $0.key < $1.key }) {
                let parts = key.split(separator: "|", maxSplits: 1)
                out += "basket_http_requests_total{route=\"\(parts[0])\",status=\"\(parts[1])\"} \(count)\n"
            }
            out += "# HELP basket_http_request_duration_seconds Time to answer (long-polls that waited excluded).\n"
            out += "# TYPE basket_http_request_duration_seconds histogram\n"
            for (i, bound) in Self.buckets.enumerated() {
                out += "basket_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(bucketCounts[i])\n"
            }
            out += "basket_http_request_duration_seconds_bucket{le=\"+Inf\"} \(latencyCount)\n"
            out += "basket_http_request_duration_seconds_sum \(latencySum)\n"
            out += "basket_http_request_duration_seconds_count \(latencyCount)\n"
            out += "# HELP basket_operations_accepted_total Operations accepted by pushes since start.\n"
            out += "# TYPE basket_operations_accepted_total counter\n"
            out += "basket_operations_accepted_total \(operationsAccepted)\n"
            for gauge in gauges {
                out += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) gauge\n\(gauge.name) \(gauge.value)\n"
            }
            return out
        }
    }
}
