import Foundation
import TestServers
import TestSupport
import Testing

/// `basket-bench fleet` at a small scale (1,100 devices on 2 instances sharing the tests'
/// PostgreSQL, 2 generator processes): it runs to the end and prints every row of its table,
/// every device connected and no error. Its timings are the benchmark's business, not a test's.
@Suite(.enabled(if: TestPostgres.url != nil, "\(TestPostgres.unavailable)"))
struct FleetBenchmarkTests {
    @Test func theFleetBenchmarkPrintsAWholeTableAtASmallScale() throws {
        let result = try Executables.run(
            "basket-bench",
            [
                "fleet", "--devices", "1100", "--instances", "2", "--generators", "2", "--rounds", "1", "--burst", "10",
                "--first-rate", "20", "--max-rate", "40", "--step-seconds", "1", "--churn-seconds", "2",
                "--rest-seconds", "1",
            ],
            environment: ["BASKET_BENCH_POSTGRES": TestPostgres.url ?? ""], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let rows = [
            "time to connect every device", "connections held per instance", "connections held in all",
            "RSS per instance, idle → with its devices", "server memory per parked long-poll",
            "PostgreSQL connections", "PostgreSQL memory (PSS",
            "at rest for 1 s (renewals, no push): CPU (cores) instances / PostgreSQL / generators",
            "at rest: PostgreSQL transactions per second (renewals", "fan-out to 5 watchers on 2 instances",
            "fan-out to 50 watchers on 2 instances", "fan-out to 1000 watchers on 2 instances",
            "burst: 10 pushes at once to family lists (40 watchers)", "burst: push answer p99 / delivery p50",
            "push rate 20/s: done/s", "push rate 40/s: done/s", "  CPU (cores) instances / PostgreSQL / generators",
            "what broke first", "fan-out to 1000 watchers while 1 % of devices (11/s) reconnect",
            "reconnects in 2 s / errors answered / watchers not answered",
            "long-polls parked / instances' descriptors open, after the churn",
            "errors (refused, closed or non-200 answers)",
        ]
        for row in rows { #expect(result.stdout.contains(row), "no row \(row):\n\(result.stdout)") }
        // A row's value: the cells are separated by " | ".
        func value(_ row: String) -> String? {
            result.stdout.split(separator: "\n").first { $0.hasPrefix(row) }.map {
                $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }[1]
            }
        }
        #expect(value("connections held in all") == "1100", "\(result.stdout)")
        #expect(value("connections held per instance") == "550 / 550", "\(result.stdout)")
        #expect(value("errors") == "0", "\(result.stdout)")
        // The churn: 11 devices a second for 2 s reconnected without an error, and once it was
        // over every device had exactly one long-poll parked (a dropped one is let go at once).
        #expect(value("reconnects in 2 s")?.hasSuffix(" / 0 / 0") == true, "\(result.stdout)")
        #expect(value("long-polls parked")?.hasPrefix("1100 / ") == true, "\(result.stdout)")
        // What it started, it stopped: no generator of its own is left.
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
            guard Int32(entry) != nil, let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else {
                return false
            }
            return String(decoding: line, as: UTF8.self).contains("fleet-generator")
        }
        #expect(left.isEmpty, "generators still running: \(left)")
    }
}
