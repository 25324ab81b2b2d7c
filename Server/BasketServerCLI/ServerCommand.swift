import BasketCore
import BasketServer
import Foundation
import HTTPServer
import PrivateFiles
import Synchronization

/// `basket-server`: configuration, subcommands, signals. The executable only calls ``main(_:environment:)``.
public enum ServerCommand {
    public static let version = "0.1.0"

    static let usage =
        "basket-server [--listen HOST:PORT] [--data DIR | --store postgres://…] [--connections N] [--retention-days N]"
        + " [--threads N] [--durability full|process] [--max-wait SECONDS] [--signup open|invite-only|closed]"
        + " [--trust-proxy]"
        + " [--connections-per-address N] [--metrics-listen HOST:PORT] [--public-metrics] [--password-iterations N]"
        + " [--max-lists N] [--max-members N] [--max-items N] [--max-list-mb N] [--max-watches N] [--sign-ins-per-address N]"
        + " [--max-connections N]"
        + " [--web DIR | --no-web]"
        + " | backup PATH | restore PATH | export PATH | import PATH | compact | renew-epochs"
        + " | signup-invite [--uses N] [--expires-days N]"

    static let help = """
        OVERVIEW: The Basket sync server: accounts, shared lists, and each list's operation log over HTTP.

        USAGE: \(usage)

        COMMANDS:
          (none)           Serve until SIGTERM or SIGINT (parked long-polls are answered, the store is closed).
          backup PATH      Write a consistent copy of the SQLite store to PATH (works while the server runs;
                           for PostgreSQL use pg_dump, docs/deploy.md).
          restore PATH     Replace the SQLite store with the backup at PATH and give every list a new epoch,
                           so clients push again what the backup does not hold. Stop the server first.
          export PATH      Write every account, token, list, member, invite and operation to PATH as JSON
                           lines, the same for every backend (to move a store; works while the server runs).
          import PATH      Read such a file into an empty store (a new --data folder or a new database).
                           Nothing is written when the file is malformed or the store is not empty.
          compact          Drop superseded operations received more than --retention-days ago, then exit.
          renew-epochs     Give every list a new epoch, so clients push again what the store does not hold
                           (after restoring a PostgreSQL database with pg_restore; restore does it for SQLite).
          signup-invite    Print a new signup invite code (for --signup invite-only), usable --uses N times
                           (default 1) for --expires-days N days (default 7); the store keeps only its hash.

        OPTIONS (each also from the environment):
          --listen HOST:PORT   BASKET_LISTEN      default 127.0.0.1:8080 ([::1]:8080 for IPv6; port 0 picks one)
          --data DIR           BASKET_DATA        default ./basket-server-data (holds basket-server.sqlite)
          --store URL          BASKET_STORE       a PostgreSQL database instead (postgres://user@host:port/db or
                                                  postgresql://…, libpq's syntax); several instances may share it
          --connections N      BASKET_CONNECTIONS default 8: PostgreSQL connections per instance
          --retention-days N   BASKET_RETENTION_DAYS  default 30; superseded operations older than this are dropped
          --threads N          BASKET_THREADS     default 4 (HTTP worker threads; pushes wait on disk, so more than cores)
          --durability MODE    BASKET_DURABILITY  full (default): an acknowledged push survives power loss (fsync);
                                                  process: it survives a crash of the server process, not of the machine
                                                  (SQLite only: on PostgreSQL its own synchronous_commit decides)
          --max-wait SECONDS   BASKET_MAX_WAIT    default 30 (0–30); a long-poll waits at most this long, however
                                                  long it asks (a proxy with a shorter read timeout needs less)
          --signup MODE        BASKET_SIGNUP      open (default): anyone may create an account; invite-only: with a
                                                  code from 'basket-server signup-invite'; closed: nobody
          --trust-proxy        BASKET_TRUST_PROXY=1  behind a proxy (docs/deploy.md): the client's address is the last
                                                  X-Forwarded-For entry, and the proxy limits connections per client
          --connections-per-address N  BASKET_CONNECTIONS_PER_ADDRESS  default 256 (0: no limit; --trust-proxy
                                                  sets 0, since every connection then comes from the proxy)
          --metrics-listen HOST:PORT  BASKET_METRICS_LISTEN  serve /metrics there only, not on the public port
          --public-metrics     BASKET_PUBLIC_METRICS=1  serve /metrics on the public port too (by default it is
                                                  served only with --metrics-listen: it tells how many accounts
                                                  and lists the server holds)
          --max-lists N        BASKET_MAX_LISTS   default 200: lists one account may make or join
          --max-members N      BASKET_MAX_MEMBERS default 50: members one list may have
          --max-items N        BASKET_MAX_ITEMS   default 20000: items one list may hold (removed ones too)
          --max-list-mb N      BASKET_MAX_LIST_MB default 64: MiB of stored operations one list may hold
          --max-watches N      BASKET_MAX_WATCHES default 64: long-polls one account may have parked at once
          --sign-ins-per-address N  BASKET_SIGN_INS_PER_ADDRESS  default 20: failed sign-ins, signups and unknown
                                                  invite codes one client address may have in a minute
          --max-connections N  BASKET_MAX_CONNECTIONS  default 20000: open connections at once (parked long-polls
                                                  included; the open-file limit must allow them)
          --password-iterations N  BASKET_PASSWORD_ITERATIONS  default 600000 (PBKDF2-SHA256, at least 1000;
                                                  lower only for tests: it is what a stolen store costs to crack)
          --web DIR            BASKET_WEB         the web client to serve at / (default: Client/web of this
                                                  checkout, found from the current folder or the executable)
          --no-web             BASKET_WEB=none    serve the API only
          --quiet              BASKET_QUIET=1     no access log
          -h, --help           Show help.
          --version            Show the version.
        """

    struct Settings {
        var host = "127.0.0.1"
        var port = 8080
        var data = "basket-server-data"
        var store: String?
        var connections = 8
        var retentionDays = 30.0
        var threads = 4
        var maxWait = 30.0
        var fsync = true
        var quiet = false
        var signup = BasketService.Signup.open
        var trustProxy = false
        var connectionsPerAddress: Int?
        var metricsHost: String?
        var metricsPort = 0
        var publicMetrics = false
        var passwordIterations = BasketService.Configuration().passwordIterations
        var command: String?
        var argument: String?
        var maxLists = 200
        var maxMembers = 50
        var maxItems: Int64 = 20_000
        var maxListMB = 64.0
        var maxWatches = BasketService.Configuration().maxWatchersPerAccount
        var signInsPerAddress = BasketService.Configuration().failedLoginsPerAddress
        var maxConnections = HTTPListener.Configuration().connectionLimit
        var inviteUses = 1
        var inviteDays = 7.0
        /// The web client's folder; nil for the default one, "none" for none.
        var web: String?
    }

    struct UsageError: Error { var message: String }

    static func parse(_ arguments: [String], environment: [String: String]) throws -> Settings {
        var settings = Settings()
        func address(_ name: String, _ value: String) throws -> (String, Int) {
            guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
                (0...65535).contains(port)
            else { throw UsageError(message: "\(name) takes HOST:PORT, like 127.0.0.1:8080 or [::1]:8080") }
            var host = String(value[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return (host, port)
        }
        func listen(_ value: String) throws { (settings.host, settings.port) = try address("--listen", value) }
        func metricsListen(_ value: String) throws {
            let (host, port) = try address("--metrics-listen", value)
            settings.metricsHost = host
            settings.metricsPort = port
        }
        func signup(_ value: String) throws {
            guard let mode = BasketService.Signup(rawValue: value) else {
                throw UsageError(message: "--signup is open, invite-only or closed, not '\(value)'")
            }
            settings.signup = mode
        }
        func number(_ name: String, _ value: String) throws -> Double {
            guard let n = Double(value), n >= 0 else {
                throw UsageError(message: "\(name) takes a number, not '\(value)'")
            }
            return n
        }
        if let value = environment["BASKET_LISTEN"], !value.isEmpty { try listen(value) }
        if let value = environment["BASKET_DATA"], !value.isEmpty { settings.data = value }
        if let value = environment["BASKET_WEB"], !value.isEmpty { settings.web = value }
        func store(_ name: String, _ value: String) throws {
            guard PostgresStore.isURL(value) else {
                throw UsageError(
                    message:
                        "\(name) takes a postgres:// or postgresql:// URL (without it the SQLite file in --data is used)"
                )
            }
            settings.store = value
        }
        if let value = environment["BASKET_STORE"], !value.isEmpty { try store("BASKET_STORE", value) }
        if let value = environment["BASKET_CONNECTIONS"], !value.isEmpty {
            settings.connections = max(1, Int(try number("BASKET_CONNECTIONS", value)))
        }
        if let value = environment["BASKET_RETENTION_DAYS"], !value.isEmpty {
            settings.retentionDays = try number("BASKET_RETENTION_DAYS", value)
        }
        if let value = environment["BASKET_THREADS"], !value.isEmpty {
            settings.threads = Int(try number("BASKET_THREADS", value))
        }
        func maxWait(_ name: String, _ value: String) throws {
            let seconds = try number(name, value)
            guard seconds <= Double(BasketService.longestWait) else {
                throw UsageError(message: "\(name) is at most \(BasketService.longestWait) seconds")
            }
            settings.maxWait = seconds
        }
        if let value = environment["BASKET_MAX_WAIT"], !value.isEmpty { try maxWait("BASKET_MAX_WAIT", value) }
        if environment["BASKET_QUIET"] == "1" { settings.quiet = true }
        if environment["BASKET_TRUST_PROXY"] == "1" { settings.trustProxy = true }
        if environment["BASKET_PUBLIC_METRICS"] == "1" { settings.publicMetrics = true }
        if let value = environment["BASKET_SIGNUP"], !value.isEmpty { try signup(value) }
        if let value = environment["BASKET_METRICS_LISTEN"], !value.isEmpty { try metricsListen(value) }
        func iterations(_ name: String, _ value: String) throws {
            let n = try number(name, value)
            guard n >= 1_000 && n <= 10_000_000 else { throw UsageError(message: "\(name) is 1000…10000000") }
            settings.passwordIterations = Int(n)
        }
        if let value = environment["BASKET_PASSWORD_ITERATIONS"], !value.isEmpty {
            try iterations("BASKET_PASSWORD_ITERATIONS", value)
        }
        func quota(_ name: String, _ value: String) throws {
            let n = try number(name, value)
            guard n >= 1 else { throw UsageError(message: "\(name) is at least 1") }
            switch name {
            case "--max-lists", "BASKET_MAX_LISTS": settings.maxLists = Int(min(n, 1e9))
            case "--max-members", "BASKET_MAX_MEMBERS": settings.maxMembers = Int(min(n, 1e9))
            case "--max-items", "BASKET_MAX_ITEMS": settings.maxItems = Int64(min(n, 1e15))
            case "--max-watches", "BASKET_MAX_WATCHES": settings.maxWatches = Int(min(n, 1e9))
            case "--sign-ins-per-address", "BASKET_SIGN_INS_PER_ADDRESS": settings.signInsPerAddress = Int(min(n, 1e6))
            case "--max-connections", "BASKET_MAX_CONNECTIONS": settings.maxConnections = Int(min(n, 1e7))
            default: settings.maxListMB = min(n, 1e9)
            }
        }
        for name in [
            "BASKET_MAX_LISTS", "BASKET_MAX_MEMBERS", "BASKET_MAX_ITEMS", "BASKET_MAX_LIST_MB", "BASKET_MAX_WATCHES",
            "BASKET_MAX_CONNECTIONS", "BASKET_SIGN_INS_PER_ADDRESS",
        ] {
            if let value = environment[name], !value.isEmpty { try quota(name, value) }
        }
        if let value = environment["BASKET_CONNECTIONS_PER_ADDRESS"], !value.isEmpty {
            settings.connectionsPerAddress = Int(try number("BASKET_CONNECTIONS_PER_ADDRESS", value))
        }
        func durability(_ value: String) throws {
            switch value {
            case "full": settings.fsync = true
            case "process": settings.fsync = false
            default: throw UsageError(message: "--durability is full or process, not '\(value)'")
            }
        }
        if let value = environment["BASKET_DURABILITY"], !value.isEmpty { try durability(value) }
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            func value() throws -> String {
                guard i < arguments.count else { throw UsageError(message: "\(arg) needs a value") }
                defer { i += 1 }
                return arguments[i]
            }
            switch arg {
            case "--listen": try listen(try value())
            case "--data": settings.data = try value()
            case "--web": settings.web = try value()
            case "--no-web": settings.web = "none"
            case "--store": try store(arg, try value())
            case "--connections": settings.connections = max(1, Int(try number(arg, try value())))
            case "--retention-days": settings.retentionDays = try number(arg, try value())
            case "--threads": settings.threads = max(1, Int(try number(arg, try value())))
            case "--max-wait": try maxWait(arg, try value())
            case "--quiet": settings.quiet = true
            case "--signup": try signup(try value())
            case "--trust-proxy": settings.trustProxy = true
            case "--public-metrics": settings.publicMetrics = true
            case "--metrics-listen": try metricsListen(try value())
            case "--password-iterations": try iterations(arg, try value())
            case "--max-lists", "--max-members", "--max-items", "--max-list-mb", "--max-watches", "--max-connections",
                "--sign-ins-per-address":
                try quota(arg, try value())
            case "--connections-per-address": settings.connectionsPerAddress = Int(try number(arg, try value()))
            case "--durability": try durability(try value())
            case "backup", "restore", "export", "import":
                guard settings.command == nil else { throw UsageError(message: "one command at a time") }
                settings.command = arg
                settings.argument = try value()
            case "--uses":
                let n = try number(arg, try value())
                guard n >= 1 && n <= 10_000 else { throw UsageError(message: "--uses is 1…10000") }
                settings.inviteUses = Int(n)
            case "--expires-days":
                let n = try number(arg, try value())
                guard n > 0 && n <= 365 else { throw UsageError(message: "--expires-days is more than 0, at most 365") }
                settings.inviteDays = n
            case "compact", "renew-epochs", "signup-invite":
                guard settings.command == nil else { throw UsageError(message: "one command at a time") }
                settings.command = arg
            default: throw UsageError(message: "unknown argument '\(arg)'")
            }
        }
        return settings
    }

    /// "2 accounts, 1 lists, …, 30 ops" in the dump's table order.
    static func describe(_ counts: [String: Int]) -> String {
        StoreDump.tables.map { "\(counts[$0.name] ?? 0) \($0.name)" }.joined(separator: ", ")
    }

    static func storePath(_ settings: Settings) -> String {
        (settings.data as NSString).appendingPathComponent("basket-server.sqlite")
    }

    /// The store the settings name: the PostgreSQL database, or the SQLite file in the data folder.
    static func openStore(_ settings: Settings) throws -> any DumpableStore {
        if let url = settings.store { return try PostgresStore(url: url, connections: settings.connections) }
        try PrivateFile.makeDirectory(settings.data)
        return try SQLiteStore(path: storePath(settings), fsyncEveryCommit: settings.fsync)
    }

    /// Opens the store, runs `body` with it, and closes it.
    static func withStore<T>(_ settings: Settings, _ body: (any DumpableStore) throws -> T) throws -> T {
        let store = try openStore(settings)
        defer { store.close() }
        return try body(store)
    }

    /// Where the store is, for messages.
    static func storeName(_ settings: Settings) -> String {
        settings.store.map(redacted) ?? storePath(settings)
    }

    /// The URL without its password.
    static func redacted(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.password != nil else { return url }
        parts.password = "***"
        return parts.string ?? url
    }

    /// Runs the server or a subcommand; returns the exit status.
    public static func main(_ arguments: [String], environment: [String: String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(help)
            return 0
        }
        if arguments.contains("--version") {
            print("basket-server \(version)")
            return 0
        }
        let settings: Settings
        do {
            settings = try parse(arguments, environment: environment)
        } catch let error as UsageError {
            printError("Error: \(error.message)\nUsage: \(usage)")
            return 64
        } catch {
            printError("Error: \(error)")
            return 64
        }
        do {
            switch settings.command {
            case "backup", "restore":
                guard settings.store == nil else {
                    printError(
                        "Error: \(settings.command!) is for the SQLite store; back up PostgreSQL with pg_dump and restore"
                            + " with pg_restore, then run renew-epochs (docs/deploy.md)")
                    return 64
                }
                try PrivateFile.makeDirectory(settings.data)
                let path = storePath(settings)
                let target = settings.argument!
                if settings.command == "restore" {
                    let lists = try SQLiteStore.restore(from: target, into: path)
                    print("Restored \(target) into \(path); \(lists) lists have a new epoch")
                    return 0
                }
                if FileManager.default.fileExists(atPath: target) {
                    printError("Error: \(target) exists; choose a new file for the backup")
                    return 1
                }
                try SQLiteStore(path: path).backup(to: target)
                print("Backed up \(path) to \(target)")
                return 0
            case "export":
                let counts = try withStore(settings) { try $0.export(to: settings.argument!) }
                print("Exported \(describe(counts)) to \(settings.argument!)")
                return 0
            case "import":
                let counts = try withStore(settings) { try $0.importDump(from: settings.argument!) }
                print("Imported \(describe(counts)) into \(storeName(settings))")
                return 0
            case "compact":
                let before = Int64(HybridClock.wallClockMilliseconds()) - Int64(settings.retentionDays * 86_400_000)
                let dropped = try withStore(settings) { try $0.compact(receivedBefore: before) }
                print("Dropped \(dropped) superseded operations")
                return 0
            case "renew-epochs":
                print("\(try withStore(settings) { try $0.renewEpochs() }) lists have a new epoch")
                return 0
            case "signup-invite":
                let now = Int64(HybridClock.wallClockMilliseconds())
                let expires = now + Int64(settings.inviteDays * 86_400_000)
                let code = try withStore(settings) {
                    try BasketService.createSignupInvite(
                        in: $0, uses: settings.inviteUses, expiresAt: expires, now: now)
                }
                print(code)
                printError(
                    "A signup invite for \(settings.inviteUses) account\(settings.inviteUses == 1 ? "" : "s"), valid"
                        + " \(settings.inviteDays) days: basket signup NAME --invite \(code)")
                return 0
            default:
                return try serve(settings)
            }
        } catch {
            printError("Error: \(error)")
            return 1
        }
    }

    /// The web client to serve: `--web DIR`, none with `--no-web`, else the checkout's when found.
    static func webApp(_ settings: Settings) throws -> WebApp? {
        switch settings.web {
        case "none": return nil
        case let directory?: return try WebApp(directory: directory)
        case nil:
            let executable =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            return try WebApp.defaultDirectory(executable: executable).map { try WebApp(directory: $0) }
        }
    }

    static func serve(_ settings: Settings) throws -> Int32 {
        raiseOpenFileLimit()
        signal(SIGPIPE, SIG_IGN)
        let store = try openStore(settings)
        var serviceConfiguration = BasketService.Configuration()
        serviceConfiguration.maxWaitSeconds = settings.maxWait
        serviceConfiguration.signup = settings.signup
        serviceConfiguration.trustForwardedFor = settings.trustProxy
        serviceConfiguration.passwordIterations = settings.passwordIterations
        serviceConfiguration.maxListsPerAccount = settings.maxLists
        serviceConfiguration.maxMembersPerList = settings.maxMembers
        serviceConfiguration.maxItemsPerList = settings.maxItems
        serviceConfiguration.maxBytesPerList = Int64(settings.maxListMB * 1_048_576)
        serviceConfiguration.maxWatchersPerAccount = settings.maxWatches
        serviceConfiguration.failedLoginsPerAddress = settings.signInsPerAddress
        let service = BasketService(store: store, configuration: serviceConfiguration)
        // /metrics on the public port only when asked (and never beside --metrics-listen).
        let separateMetrics = settings.metricsHost != nil || !settings.publicMetrics
        let web = try webApp(settings)
        let router = service.router(servingMetrics: !separateMetrics, web: web)
        var configuration = HTTPListener.Configuration(host: settings.host, port: settings.port)
        configuration.threads = settings.threads
        configuration.connectionLimit = settings.maxConnections
        configuration.connectionsPerAddress = settings.connectionsPerAddress ?? (settings.trustProxy ? 0 : 256)
        configuration.checkHead = service.checkHead
        configuration.headersForEveryAnswer = BasketService.headersForEveryAnswer
        if settings.trustProxy {
            // Every connection comes from the proxy, which buffers bodies itself (nginx): no share per address.
            configuration.maxBufferedBodyBytesPerAddress = configuration.maxBufferedBodyBytes
        }
        let metrics = service.metrics
        let quiet = settings.quiet
        Router.onInternalError { text in printError("basket-server: internal error: \(AccessLog.escaped(text))") }
        // Lines are written in batches: at most every 100 ms, or at 32 KiB (as nginx's
        // `access_log … buffer= flush=`), instead of a write(2) per request.
        let accessLog = AccessLog.Buffer(flushBytes: 32 << 10, flushMilliseconds: 100)
        configuration.onRequestCompleted = { request in
            metrics.record(request)
            if !quiet { accessLog.append(AccessLog.line(request)) }
        }
        let http = HTTPListener(configuration: configuration, handler: router.handle)
        try http.start()
        var metricsServer: HTTPListener?
        if let host = settings.metricsHost {
            let server = HTTPListener(
                configuration: .init(host: host, port: settings.metricsPort), handler: service.metricsRouter().handle)
            try server.start()
            metricsServer = server
            let text = host.contains(":") ? "[\(host)]" : host
            print("basket-server: /metrics on http://\(text):\(server.port)")
        }
        let hostText = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        let place = settings.store.map { "the PostgreSQL database \(redacted($0))" } ?? "data in \(settings.data)"
        print("basket-server \(version) listening on http://\(hostText):\(http.port) with \(place)")
        if let web {
            print("basket-server: the web client (version \(web.version)) at http://\(hostText):\(http.port)/")
        } else {
            print("basket-server: no web client (--web DIR serves one)")
        }
        if let last = store.appliedMigrations.last {
            print("basket-server: migrated the store from schema \(store.appliedMigrations.lowerBound) to \(last + 1)")
        }
        fflush(nil)

        // Compaction once an hour.
        let retention = settings.retentionDays
        let compaction = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        compaction.schedule(deadline: .now() + 3600, repeating: 3600)
        compaction.setEventHandler {
            let before = Int64(HybridClock.wallClockMilliseconds()) - Int64(retention * 86_400_000)
            _ = try? store.compact(receivedBefore: before)
        }
        compaction.resume()

        let stop = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "basket-server.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: signalQueue)
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        print("basket-server: stopping")
        compaction.cancel()
        service.shutdown()
        http.stop()
        metricsServer?.stop()
        store.close()
        accessLog.flush()
        print("basket-server: stopped")
        fflush(nil)
        _ = sources
        return 0
    }

    static func raiseOpenFileLimit() {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The access log: one line per request. It never holds a token (they travel in headers) or an
/// invite code (the code segment of a path is replaced), and it escapes control characters and
/// cuts long paths, so a request cannot write escape sequences or fake lines into it.
enum AccessLog {
    static func line(_ request: HTTPListener.CompletedRequest) -> String {
        let milliseconds = (request.seconds * 10_000).rounded() / 10
        return "\(timestamp()) \"\(escaped(request.method)) \(escaped(redacted(request.path)))\" \(request.status)"
            + " \(request.responseBytes) \(milliseconds)ms\(request.completed ? "" : " (client gone)")\n"
    }

    /// Now in UTC as `2026-12-02T15:46:57Z` (what `Date().formatted(.iso8601)` wrote, at a
    /// fraction of its cost: it is paid on every request).
    static func timestamp(_ seconds: time_t = time(nil)) -> String {
        var now = seconds
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Lines waiting for standard output: written whole, in order, once `flushBytes` are waiting
    /// or within `flushMilliseconds`, whichever comes first.
    final class Buffer: @unchecked Sendable {
        // `@unchecked Sendable`: the timer is only set up in init and cancelled in deinit; the
        // lines live in Mutexes.
        private let pending = Mutex<[UInt8]>([])
        /// One writer at a time, so batches keep their order.
        private let writing = Mutex(())
        let flushBytes: Int
        private let timer: any DispatchSourceTimer

        init(flushBytes: Int, flushMilliseconds: Int) {
            self.flushBytes = flushBytes
            timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "basket-server.access-log"))
            timer.schedule(
                deadline: .now() + .milliseconds(flushMilliseconds), repeating: .milliseconds(flushMilliseconds))
            timer.setEventHandler { [weak self] in self?.flush() }
            timer.resume()
        }

        deinit { timer.cancel() }

        func append(_ line: String) {
            let full = pending.withLock { bytes in
                bytes.append(contentsOf: line.utf8)
                return bytes.count >= flushBytes
            }
            if full { flush() }
        }

        /// Writes what is waiting now.
        func flush() {
            writing.withLock { _ in
                let bytes = pending.withLock { bytes in
                    defer { bytes = [] }
                    return bytes
                }
                guard !bytes.isEmpty else { return }
                bytes.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                        if n < 0 && errno == EINTR { continue }
                        guard n > 0 else { return }  // a closed or full log loses lines, never a request
                        offset += n
                    }
                }
            }
        }
    }

    /// The path with secrets replaced: invite codes (`/v1/invites/CODE`).
    static func redacted(_ path: String) -> String {
        guard path.utf8.starts(with: "/v1/invites/".utf8) else { return path }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[1] == "v1", parts[2] == "invites" else { return path }
        return (["", "v1", "invites", "…"] + parts.dropFirst(4).map(String.init)).joined(separator: "/")
    }

    /// Control characters and backslashes as `\xNN`, at most 512 bytes of text.
    static func escaped(_ text: String) -> String {
        // Most paths are short printable ASCII: nothing to change.
        if text.utf8.count <= 512, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x5C && $0 != 0x22 }) {
            return text
        }
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            if bytes >= 512 {
                out += "…"
                break
            }
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\\" || scalar == "\""
                || scalar.properties.generalCategory == .control
            {
                out += "\\x" + String(scalar.value, radix: 16)
            } else {
                out.unicodeScalars.append(scalar)
            }
            bytes += scalar.utf8.count
        }
        return out
    }
}
