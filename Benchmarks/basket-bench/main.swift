// basket-bench: release-built benchmarks that print a table. See docs/performance.md.
//
//   Scripts/bench.sh            (builds in release mode, then runs every benchmark)
//   .build/release/basket-bench replica
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: basket-bench replica [--ops N] [--items N] [--runs N]
           basket-bench server [--clients N] [--batches N] [--watchers N] [--burst N] [--idle-watchers N] [--requests N]
                               [--together N]   (a shopping status on every list, N push subscriptions)
           basket-bench search [--items N] [--queries N]
           basket-bench quality [--corpus DIR] [--seed N] [--per-kind N] [--no-fzf]   (fzf from Debian for its baseline)
           basket-bench catalogue [--misses]
           basket-bench parser [--misses]
           basket-bench curves [--csv PATH] [--max-items N] [--max-watchers N] [--max-devices N]
                               [--curves items,lists,watchers,fleet]   (fleet: needs BASKET_BENCH_POSTGRES)
           basket-bench devices [--devices N] [--hot N] [--lists N] [--rounds N]   (as root: raises the open-file limit)
           basket-bench http [--runs N] [--seconds N] [--connections N]   (wrk and nginx from Debian)
           basket-bench backends [--clients N] [--batches N] [--watchers N]   (needs BASKET_BENCH_POSTGRES)
           basket-bench interactive [--items N] [--runs N]   (the release basket next to it)
           basket-bench shops [--items N] [--days N] [--runs N]
           basket-bench seal [--ops N] [--runs N]
           basket-bench fleet [--devices N] [--instances N] [--generators N] [--rounds N] [--burst N]
                              [--first-rate N] [--max-rate N] [--step-seconds N] [--churn-seconds N]
                              [--rest-seconds N]
                              (needs BASKET_BENCH_POSTGRES)
    """
if arguments.first == "--help" || arguments.first == "-h" {
    print(usage)
    exit(0)
}
/// Runs one benchmark; an error goes to stderr with exit status 1.
func run(_ benchmark: () throws -> Void) {
    do {
        try benchmark()
    } catch {
        FileHandle.standardError.write(Data("basket-bench: \(error)\n".utf8))
        exit(1)
    }
}

let rest = Array(arguments.dropFirst())
switch arguments.first {
case "replica", nil: run { try ReplicaBenchmark(arguments: rest).run() }
case "search": run { try SearchBenchmark(arguments: rest).run() }
case "quality": run { try QualityBenchmark(arguments: rest).run() }
case "catalogue": run { try CatalogueBenchmark(arguments: rest).run() }
case "parser": run { try ParserBenchmark(arguments: rest).run() }
case "server": run { try ServerBenchmark(arguments: rest).run() }
case "curves": run { try CurvesBenchmark(arguments: rest).run() }
case "devices": run { try DevicesBenchmark(arguments: rest).run() }
case "http": run { try HTTPBenchmark(arguments: rest).run() }
case "backends": run { try BackendBenchmark(arguments: rest).run() }
case "interactive": run { try InteractiveBenchmark(arguments: rest).run() }
case "shops": run { try ShopsBenchmark(arguments: rest).run() }
case "seal": run { try SealBenchmark(arguments: rest).run() }
case "fleet": run { try FleetBenchmark(arguments: rest).run() }
case "fleet-generator": run { try FleetGenerator(arguments: rest).run() }
default:
    FileHandle.standardError.write(Data("Error: unknown benchmark '\(arguments[0])'\n\(usage)\n".utf8))
    exit(64)
}
