import BasketCore
import BasketServer
import Foundation
import HTTPServer

/// `basket-server` with no command: serves until SIGTERM or SIGINT.
enum Serve {
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
        let store = try StoreAccess.open(settings)
        var serviceConfiguration = BasketService.Configuration()
        serviceConfiguration.maxWaitSeconds = settings.maxWait
        serviceConfiguration.signup = settings.signup
        serviceConfiguration.trustForwardedFor = settings.trustProxy
        serviceConfiguration.passwordIterations = settings.passwordIterations
        serviceConfiguration.maxListsPerAccount = settings.maxLists
        serviceConfiguration.requireEncryption = settings.requireEncryption
        serviceConfiguration.maxMembersPerList = settings.maxMembers
        serviceConfiguration.maxItemsPerList = settings.maxItems
        serviceConfiguration.maxBytesPerList = Int64(settings.maxListMB * 1_048_576)
        serviceConfiguration.maxWatchersPerAccount = settings.maxWatches
        serviceConfiguration.failedLoginsPerAddress = settings.signInsPerAddress
        serviceConfiguration.push = settings.push
        if let frozen = settings.frozenClock { serviceConfiguration.clock = { frozen } }
        let service = BasketService(store: store, configuration: serviceConfiguration)
        // The Web Push key pair, made on the first start and kept in the store.
        service.preparePush()
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
        Router.onInternalError { text in
            ServerCommand.printError("basket-server: internal error: \(AccessLog.escaped(text))")
        }
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
        let place =
            settings.store.map { "the PostgreSQL database \(ServerCommand.redacted($0))" } ?? "data in \(settings.data)"
        // Before "listening on", which tells a waiting script the server is up.
        if let frozen = settings.frozenClock {
            // A test switch must never run unnoticed: every timestamp check and token age uses it.
            ServerCommand.printError(
                "basket-server: warning: the clock stands still at \(frozen) ms (--frozen-clock): for replaying"
                    + " conflict scenarios only; clock checks and token ages use this time, never serve people with it")
        }
        print("basket-server \(ServerCommand.version) listening on http://\(hostText):\(http.port) with \(place)")
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
}
