// swift-tools-version: 6.2
import PackageDescription

// Strict settings, applied to every Swift target below: Swift 6 language mode (complete
// concurrency checking), explicit `any`, imports internal unless marked `public`, and
// every warning treated as an error.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Basket",
    products: [
        .library(name: "BasketCore", targets: ["BasketCore"]),
        .library(name: "BasketReplica", targets: ["BasketReplica"]),
        .library(name: "BasketSearch", targets: ["BasketSearch"]),
        .library(name: "BasketTesting", targets: ["BasketTesting", "BasketModel"]),
        .executable(name: "basket", targets: ["basket"]),
        .executable(name: "basket-server", targets: ["basket-server"]),
        .executable(name: "basket-bench", targets: ["basket-bench"]),
        .executable(name: "basket-sim", targets: ["basket-sim"]),
        .executable(name: "basket-lab", targets: ["basket-lab"]),
    ],
    targets: [
        // C libraries from Debian -dev packages (Scripts/install-deps.sh installs them).
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", path: "Server/CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CPostgres", path: "Server/CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CBrotli", path: "Server/CBrotli", pkgConfig: "libbrotlienc", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // Shared by client and server.
        .target(name: "SQLite", dependencies: ["CSQLite", "PrivateFiles"], path: "Sources/SQLite"),
        // Files only their owner reads (0600 in 0700 directories), replaced atomically.
        .target(name: "PrivateFiles", path: "Sources/PrivateFiles"),
        // A deterministic random generator: the simulation, the benchmarks' data and the tests.
        .target(name: "SeededRandom", path: "Sources/SeededRandom"),
        // Child processes (posix_spawn, bounded waits): the tests and `basket-lab replay`.
        .target(name: "Spawn", path: "Sources/Spawn"),
        // One bounded HTTP request over libcurl: the CLI's transport and the server's Web Push sender.
        .target(name: "Curl", dependencies: ["CCurl"], path: "Sources/Curl"),
        // gzip through zlib: the server's answers, and encrypted lists' snapshots (BasketSeal).
        .target(name: "Gzip", dependencies: ["CZlib"], path: "Sources/Gzip"),
        // Pure Swift: no C library, so an app on any Swift platform can build the client modules.
        .target(name: "BasketCore", path: "Sources/BasketCore"),
        // The one seam for cryptography: libcrypto on Linux, CryptoKit on Apple platforms.
        .target(
            name: "PlatformCrypto", dependencies: [.target(name: "CCrypto", condition: .when(platforms: [.linux]))],
            path: "Sources/PlatformCrypto"),

        // Client.
        .target(
            name: "BasketSearch", dependencies: ["BasketCore"], path: "Client/BasketSearch",
            exclude: ["CATALOGUE-SOURCES.md", "catalogue.tsv", "groceries.txt"]),
        .target(
            name: "BasketReplica", dependencies: ["BasketCore", "SQLite"],
            path: "Client/BasketReplica",
            // FoundationNetworking sits on libcurl; naming it lets --static-swift-stdlib builds link.
            linkerSettings: [.linkedLibrary("curl", .when(platforms: [.linux]))]),
        // HTTP over libcurl with answers bounded after gzip, for the CLI on Linux (see its docs).
        // End-to-end encryption of lists: keys, sealing, envelopes (through PlatformCrypto).
        .target(
            name: "BasketSeal", dependencies: ["BasketCore", "BasketReplica", "PlatformCrypto", "Gzip"],
            path: "Client/BasketSeal"),
        .target(name: "CurlExchange", dependencies: ["BasketReplica", "Curl"], path: "Client/CurlExchange"),
        .target(
            name: "BasketCLI",
            dependencies: [
                "BasketCore", "BasketReplica", "BasketSearch", "BasketSeal", "PrivateFiles",
                .target(name: "CurlExchange", condition: .when(platforms: [.linux])),
            ],
            path: "Client/BasketCLI"),
        .executableTarget(name: "basket", dependencies: ["BasketCLI"], path: "Client/basket"),

        // Server.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Gzip", "CBrotli"], path: "Server/HTTPServer"),
        .target(name: "Postgres", dependencies: ["CPostgres"], path: "Server/Postgres"),
        .target(
            name: "BasketServer",
            dependencies: [
                "BasketCore", "SQLite", "PrivateFiles", "Postgres", "HTTPServer", "PlatformCrypto", "Curl", "Gzip",
            ],
            path: "Server/BasketServer"),
        .target(
            name: "BasketServerCLI", dependencies: ["BasketCore", "BasketServer", "HTTPServer", "PrivateFiles"],
            path: "Server/BasketServerCLI"),
        .executableTarget(name: "basket-server", dependencies: ["BasketServerCLI"], path: "Server/basket-server"),

        // Benchmarks (run release-built: Scripts/bench.sh).
        .executableTarget(
            name: "basket-bench",
            dependencies: [
                "BasketCore", "BasketReplica", "BasketSearch", "SQLite", "HTTPServer", "BasketServer", "Postgres",
                "BasketSeal", "PlatformCrypto", "SeededRandom", "Spawn",
            ],
            path: "Benchmarks/basket-bench"),

        // The deterministic simulation (client and server in one process, like the benchmarks).
        .target(
            name: "BasketSimulation",
            dependencies: ["BasketCore", "BasketReplica", "BasketTesting", "BasketTrace", "SeededRandom"],
            path: "Simulation/BasketSimulation"),
        .executableTarget(
            name: "basket-sim", dependencies: ["BasketSimulation", "BasketTrace"], path: "Simulation/basket-sim"),
        // Conflict scenarios: run in the lab, or replayed against a real server and the CLI's commands.
        .executableTarget(
            name: "basket-lab",
            dependencies: [
                "BasketCLI", "BasketCore", "BasketModel", "BasketReplica", "BasketTesting", "BasketTrace", "Spawn",
            ],
            path: "Simulation/basket-lab"),
        // Basket's merge rules stated again from docs/conflicts.md alone, to check the code against.
        .target(name: "BasketModel", dependencies: ["BasketCore"], path: "Simulation/BasketModel"),
        // A conflict lab in one process (devices, a server, a simulated network and clock), for
        // tests of apps built on Basket; the simulator is built on it.
        .target(
            name: "BasketTesting",
            dependencies: [
                "BasketCore", "BasketModel", "BasketReplica", "BasketSearch", "BasketServer", "BasketTrace",
                "HTTPServer", "SeededRandom",
            ],
            path: "Simulation/BasketTesting"),
        // What happened in a run, drawn as one HTML file (scenarios and the simulator).
        .target(name: "BasketTrace", dependencies: ["BasketCore", "BasketModel"], path: "Simulation/BasketTrace"),

        // Tests.
        // Light helpers any test may use (temporary directories, a seeded generator, a clock).
        .target(name: "TestSupport", dependencies: ["SeededRandom"], path: "Tests/TestSupport"),
        // Real processes: basket-server on SQLite or on PostgreSQL behind a proxy, the CLI.
        .target(
            name: "TestServers", dependencies: ["Postgres", "SQLite", "Spawn", "TestSupport"], path: "Tests/TestServers"
        ),
        .testTarget(
            name: "BasketSealTests", dependencies: ["BasketSeal", "BasketCore", "PlatformCrypto"],
            path: "Tests/BasketSealTests"),
        .testTarget(name: "PlatformCryptoTests", dependencies: ["PlatformCrypto"], path: "Tests/PlatformCryptoTests"),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"], path: "Tests/SQLiteTests"),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPServer", "Gzip", "TestSupport"], path: "Tests/HTTPServerTests"),
        .testTarget(
            name: "BasketServerTests",
            dependencies: [
                "BasketServer", "BasketServerCLI", "HTTPServer", "BasketCore", "Curl", "Gzip", "PlatformCrypto",
                "Postgres", "SQLite", "TestServers", "TestSupport",
            ],
            path: "Tests/BasketServerTests"),
        .testTarget(
            name: "BasketCoreTests",
            // CCrypto: the Swift SHA-256 is checked against libcrypto's.
            dependencies: ["BasketCore", "TestSupport", "CCrypto"],
            path: "Tests/BasketCoreTests"),
        .testTarget(
            name: "BasketSearchTests", dependencies: ["BasketSearch", "BasketCore", "TestSupport"],
            path: "Tests/BasketSearchTests"),
        .testTarget(
            name: "BasketReplicaTests",
            dependencies: ["BasketReplica", "BasketCore", "SQLite", "TestSupport"],
            path: "Tests/BasketReplicaTests"),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "BasketCLI", "BasketCore", "BasketModel", "BasketReplica", "BasketSearch", "SQLite", "TestSupport",
            ],
            path: "Tests/ConformanceTests"),
        .testTarget(
            name: "SimulationTests", dependencies: ["BasketSimulation", "BasketTesting"], path: "Tests/SimulationTests"),
        .testTarget(name: "LabTests", dependencies: ["BasketModel", "BasketTesting"], path: "Tests/LabTests"),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                // BasketServer and HTTPServer: the push tests' receiver reads messages as a browser does.
                "BasketCore", "BasketReplica", "BasketSearch", "BasketSeal", "BasketServer", "HTTPServer",
                "PlatformCrypto",
                "Postgres", "SQLite", "Spawn", "TestServers", "TestSupport",
                "basket",
                "basket-bench",
                "basket-lab",
                "basket-server",
                "basket-sim",
            ],
            path: "Tests/EndToEndTests"),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
