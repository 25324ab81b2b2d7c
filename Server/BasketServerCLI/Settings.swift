import BasketServer
import Foundation
import HTTPServer

/// What `basket-server` was asked to do and with which settings: the environment first, then
/// the arguments, each read through `ServerOption/all`.
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
    var requireEncryption = false
    var passwordIterations = BasketService.Configuration().passwordIterations
    /// A wall clock that stands still at this Unix time (ms), for replaying scenarios.
    var frozenClock: UInt64?
    /// The command (nil: serve) and its argument (a path, for those that take one).
    var command: (any ServerSubcommand.Type)?
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
    /// Web Push.
    var push = BasketService.PushConfiguration()
}

/// A mistake in the arguments or the environment: exit status 64 and the usage line.
struct UsageError: Error { var message: String }

/// One option of `basket-server`: its flag, the environment variable that sets it too, what it
/// takes, its help, and what it does to the settings. `--help` and the parser both read the
/// table (``all``), so an option is added in one place.
struct ServerOption: Sendable {
    /// `--listen`.
    var flag: String
    /// `BASKET_LISTEN`; for an option without a value, the variable set to 1 turns it on.
    var environment: String?
    /// What it takes (`HOST:PORT`); nil for an option without a value.
    var value: String?
    /// Its help, a line or more.
    var help: String
    /// The only command it belongs to (`signup-invite`), nil for the server's own.
    var command: (any ServerSubcommand.Type)?
    /// Sets it: the name it was given by (flag or variable, for messages) and its value ("1" for
    /// an option without one).
    var apply: @Sendable (inout Settings, _ name: String, _ value: String) throws -> Void

    init(
        _ flag: String, _ value: String? = nil, env environment: String? = nil,
        for command: (any ServerSubcommand.Type)? = nil,
        _ help: String, apply: @escaping @Sendable (inout Settings, _ name: String, _ value: String) throws -> Void
    ) {
        self.flag = flag
        self.environment = environment
        self.value = value
        self.help = help
        self.command = command
        self.apply = apply
    }

    /// Every option, in the order `--help` lists them.
    static let all: [ServerOption] = [
        ServerOption(
            "--listen", "HOST:PORT", env: "BASKET_LISTEN",
            "default 127.0.0.1:8080 ([::1]:8080 for IPv6; port 0 picks one)"
        ) { settings, name, value in (settings.host, settings.port) = try address(name, value) },
        ServerOption("--data", "DIR", env: "BASKET_DATA", "default ./basket-server-data (holds basket-server.sqlite)") {
            settings, _, value in settings.data = value
        },
        ServerOption(
            "--store", "URL", env: "BASKET_STORE",
            """
            a PostgreSQL database instead (postgres://user@host:port/db or postgresql://…, libpq's syntax);
            several instances may share it
            """
        ) { settings, name, value in
            guard PostgresStore.isURL(value) else {
                throw UsageError(
                    message:
                        "\(name) takes a postgres:// or postgresql:// URL (without it the SQLite file in --data is used)"
                )
            }
            settings.store = value
        },
        ServerOption("--connections", "N", env: "BASKET_CONNECTIONS", "default 8: PostgreSQL connections per instance")
        {
            settings, name, value in settings.connections = max(1, Int(try number(name, value)))
        },
        ServerOption(
            "--retention-days", "N", env: "BASKET_RETENTION_DAYS",
            "default 30; superseded operations older than this are dropped"
        ) { settings, name, value in settings.retentionDays = try number(name, value) },
        ServerOption(
            "--threads", "N", env: "BASKET_THREADS",
            "default 4 (HTTP worker threads; pushes wait on disk, so more than cores)"
        ) { settings, name, value in settings.threads = max(1, Int(try number(name, value))) },
        ServerOption(
            "--durability", "MODE", env: "BASKET_DURABILITY",
            """
            full (default): an acknowledged push survives power loss (fsync); process: it survives
            a crash of the server process, not of the machine (SQLite only: on PostgreSQL its own
            synchronous_commit decides)
            """
        ) { settings, name, value in
            switch value {
            case "full": settings.fsync = true
            case "process": settings.fsync = false
            default: throw UsageError(message: "--durability is full or process, not '\(value)'")
            }
        },
        ServerOption(
            "--max-wait", "SECONDS", env: "BASKET_MAX_WAIT",
            """
            default 30 (0–30); a long-poll waits at most this long, however long it asks (a proxy
            with a shorter read timeout needs less)
            """
        ) { settings, name, value in
            let seconds = try number(name, value)
            guard seconds <= Double(BasketService.longestWait) else {
                throw UsageError(message: "\(name) is at most \(BasketService.longestWait) seconds")
            }
            settings.maxWait = seconds
        },
        ServerOption(
            "--signup", "MODE", env: "BASKET_SIGNUP",
            """
            open (default): anyone may create an account; invite-only: with a code from
            'basket-server signup-invite'; closed: nobody
            """
        ) { settings, _, value in
            guard let mode = BasketService.Signup(rawValue: value) else {
                throw UsageError(message: "--signup is open, invite-only or closed, not '\(value)'")
            }
            settings.signup = mode
        },
        ServerOption(
            "--trust-proxy", env: "BASKET_TRUST_PROXY",
            """
            behind a proxy (docs/deploy.md): the client's address is the last X-Forwarded-For
            entry, and the proxy limits connections per client
            """
        ) { settings, _, _ in settings.trustProxy = true },
        ServerOption(
            "--connections-per-address", "N", env: "BASKET_CONNECTIONS_PER_ADDRESS",
            "default 256 (0: no limit; --trust-proxy sets 0, since every connection then comes from the proxy)"
        ) { settings, name, value in settings.connectionsPerAddress = Int(try number(name, value)) },
        ServerOption(
            "--metrics-listen", "HOST:PORT", env: "BASKET_METRICS_LISTEN",
            "serve /metrics there only, not on the public port"
        ) { settings, name, value in
            let (host, port) = try address(name, value)
            settings.metricsHost = host
            settings.metricsPort = port
        },
        ServerOption(
            "--public-metrics", env: "BASKET_PUBLIC_METRICS",
            """
            serve /metrics on the public port too (by default it is served only with
            --metrics-listen: it tells how many accounts and lists the server holds)
            """
        ) { settings, _, _ in settings.publicMetrics = true },
        ServerOption(
            "--require-encryption", env: "BASKET_REQUIRE_ENCRYPTION",
            """
            make new lists encrypted end to end only: a client asking for a plain one is refused
            (encryption_required); lists that exist keep what they are
            """
        ) { settings, _, _ in settings.requireEncryption = true },
        quota("--max-lists", "BASKET_MAX_LISTS", "default 200: lists one account may make or join") {
            $0.maxLists = Int(min($1, 1e9))
        },
        quota("--max-members", "BASKET_MAX_MEMBERS", "default 50: members one list may have") {
            $0.maxMembers = Int(min($1, 1e9))
        },
        quota("--max-items", "BASKET_MAX_ITEMS", "default 20000: items one list may hold (removed ones too)") {
            $0.maxItems = Int64(min($1, 1e15))
        },
        quota("--max-list-mb", "BASKET_MAX_LIST_MB", "default 64: MiB of stored operations one list may hold") {
            $0.maxListMB = min($1, 1e9)
        },
        quota("--max-watches", "BASKET_MAX_WATCHES", "default 64: long-polls one account may have parked at once") {
            $0.maxWatches = Int(min($1, 1e9))
        },
        quota(
            "--sign-ins-per-address", "BASKET_SIGN_INS_PER_ADDRESS",
            "default 20: failed sign-ins, signups and unknown invite codes one client address may have in a minute"
        ) { $0.signInsPerAddress = Int(min($1, 1e6)) },
        quota(
            "--max-connections", "BASKET_MAX_CONNECTIONS",
            "default 20000: open connections at once (parked long-polls included; the open-file limit must allow them)"
        ) { $0.maxConnections = Int(min($1, 1e7)) },
        ServerOption(
            "--password-iterations", "N", env: "BASKET_PASSWORD_ITERATIONS",
            """
            default 600000 (PBKDF2-SHA256, at least 1000; lower only for tests: it is what a stolen
            store costs to crack)
            """
        ) { settings, name, value in
            let n = try number(name, value)
            guard n >= 1_000 && n <= 10_000_000 else { throw UsageError(message: "\(name) is 1000…10000000") }
            settings.passwordIterations = Int(n)
        },
        ServerOption(
            "--frozen-clock", "MS", env: "BASKET_FROZEN_CLOCK_MS",
            """
            for replaying conflict scenarios only: the server's wall clock reads this Unix time in
            milliseconds and stands still (clock checks and token ages use it)
            """
        ) { settings, name, value in
            let ms = try number(name, value)
            guard ms < 281_474_976_710_656 else { throw UsageError(message: "\(name) is at most 2^48 - 1") }
            settings.frozenClock = UInt64(ms)
        },
        ServerOption(
            "--web", "DIR", env: "BASKET_WEB",
            """
            the web client to serve at / (default: Client/web of this checkout, found from the
            current folder or the executable); BASKET_WEB=none serves the API only
            """
        ) { settings, _, value in settings.web = value },
        ServerOption("--no-web", nil, "serve the API only") { settings, _, _ in settings.web = "none" },
        ServerOption(
            "--push-contact", "URL", env: "BASKET_PUSH_CONTACT",
            """
            how push services reach this server's operator (mailto: or https:), sent with every Web
            Push message (VAPID's subject; default mailto:postmaster@localhost)
            """
        ) { settings, name, value in
            guard value.hasPrefix("mailto:") || value.hasPrefix("https://"), value.utf8.count <= 200 else {
                throw UsageError(message: "\(name) takes a mailto: or https:// URL")
            }
            settings.push.subject = value
        },
        ServerOption(
            "--push-allow-endpoint", "URL-PREFIX", env: "BASKET_PUSH_ALLOW_ENDPOINT",
            """
            for tests: push subscriptions whose endpoint begins with this may be http and on a
            private address (by default only https endpoints on public addresses are posted to);
            may be given more than once
            """
        ) { settings, name, value in
            guard value.hasPrefix("http://") || value.hasPrefix("https://"), URL(string: value)?.host?.isEmpty == false
            else { throw UsageError(message: "\(name) takes the beginning of a URL, like http://127.0.0.1:9000/push/") }
            settings.push.allowedEndpointPrefixes.append(value)
        },
        ServerOption(
            "--push-interval", "SECONDS", env: "BASKET_PUSH_INTERVAL",
            "default 60: the shortest time between two push messages about one list (what comes between is told together)"
        ) { settings, name, value in
            let seconds = try number(name, value)
            guard seconds >= 1 && seconds <= 86_400 else { throw UsageError(message: "\(name) is 1…86400") }
            settings.push.intervalSeconds = seconds
        },
        ServerOption("--no-push", env: "BASKET_NO_PUSH", "send no Web Push messages and take no subscriptions") {
            settings, _, _ in settings.push.enabled = false
        },
        ServerOption("--quiet", env: "BASKET_QUIET", "no access log") { settings, _, _ in settings.quiet = true },
        ServerOption("--uses", "N", for: SignupInvite.self, "how many accounts the code makes (default 1)") {
            settings, name, value in
            let n = try number(name, value)
            guard n >= 1 && n <= 10_000 else { throw UsageError(message: "--uses is 1…10000") }
            settings.inviteUses = Int(n)
        },
        ServerOption("--expires-days", "N", for: SignupInvite.self, "how long the code works (default 7)") {
            settings, name, value in
            let n = try number(name, value)
            guard n > 0 && n <= 365 else { throw UsageError(message: "--expires-days is more than 0, at most 365") }
            settings.inviteDays = n
        },
    ]

    /// A limit of at least 1.
    static func quota(
        _ flag: String, _ environment: String, _ help: String, set: @escaping @Sendable (inout Settings, Double) -> Void
    ) -> ServerOption {
        ServerOption(flag, "N", env: environment, help) { settings, name, value in
            let n = try number(name, value)
            guard n >= 1 else { throw UsageError(message: "\(name) is at least 1") }
            set(&settings, n)
        }
    }

    /// A number of at least 0.
    static func number(_ name: String, _ value: String) throws -> Double {
        guard let n = Double(value), n >= 0 else { throw UsageError(message: "\(name) takes a number, not '\(value)'") }
        return n
    }

    /// `HOST:PORT`, IPv6 hosts in brackets.
    static func address(_ name: String, _ value: String) throws -> (String, Int) {
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw UsageError(message: "\(name) takes HOST:PORT, like 127.0.0.1:8080 or [::1]:8080") }
        var host = String(value[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// The options' part of `--help`: flag, value and variable on a line, the help below it.
    static func helpText(for command: (any ServerSubcommand.Type)?) -> String {
        all.filter { $0.command.map(ObjectIdentifier.init) == command.map(ObjectIdentifier.init) }.map { option in
            let left = "  " + option.flag + (option.value.map { " " + $0 } ?? "")
            let variable = option.environment.map { option.value == nil ? "\($0)=1" : $0 } ?? ""
            let words = option.help.split(whereSeparator: \.isWhitespace)
            var lines = [variable.isEmpty ? left : pad(left, 32) + variable]
            var line = "      "
            for word in words {
                if line.count + word.count > 96 && line.count > 6 {
                    lines.append(line)
                    line = "      "
                }
                line += (line.count > 6 ? " " : "") + word
            }
            lines.append(line)
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `text` and spaces to `width` columns, or two spaces past it.
    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(2, width - text.count))
    }

    /// The settings the environment and then the arguments give.
    static func parse(_ arguments: [String], environment: [String: String]) throws -> Settings {
        var settings = Settings()
        for option in all {
            guard let variable = option.environment, let value = environment[variable], !value.isEmpty else { continue }
            if option.value == nil {
                if value == "1" { try option.apply(&settings, variable, value) }
            } else if option.flag == "--web" && value == "none" {
                settings.web = "none"
            } else {
                try option.apply(&settings, variable, value)
            }
        }
        var given: [ServerOption] = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if let command = ServerSubcommands.all.first(where: { $0.name == arg }) {
                guard settings.command == nil else { throw UsageError(message: "one command at a time") }
                settings.command = command
                if let what = command.argument {
                    guard i < arguments.count else { throw UsageError(message: "\(arg) needs a \(what)") }
                    settings.argument = arguments[i]
                    i += 1
                }
                continue
            }
            guard let option = all.first(where: { $0.flag == arg }) else {
                throw UsageError(message: "unknown argument '\(arg)'")
            }
            var value = "1"
            if option.value != nil {
                guard i < arguments.count else { throw UsageError(message: "\(arg) needs a value") }
                value = arguments[i]
                i += 1
            }
            try option.apply(&settings, arg, value)
            given.append(option)
        }
        for option in given {
            if let owner = option.command, settings.command.map(ObjectIdentifier.init) != ObjectIdentifier(owner) {
                throw UsageError(message: "\(option.flag) belongs to '\(owner.name)'")
            }
        }
        return settings
    }
}
