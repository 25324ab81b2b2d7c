import BasketCore
import BasketReplica
import Foundation
import PrivateFiles
import Synchronization

/// The CLI's remote settings, in `config.json` next to the replica (mode 0600: it holds the token).
struct RemoteConfig: Codable {
    var server: String?
    var account: String?
    var token: String?
    /// Whether write commands send their changes before they exit (nil: on).
    var autoSync: Bool?
}

extension Context {
    var configPath: String {
        ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("config.json")
    }

    func loadConfig() throws -> RemoteConfig {
        guard let data = FileManager.default.contents(atPath: configPath) else { return RemoteConfig() }
        do {
            return try JSONDecoder().decode(RemoteConfig.self, from: data)
        } catch {
            throw CommandError(message: "\(configPath) is not a valid config: \(error)", code: "invalid_config")
        }
    }

    /// Writes the config to a new 0600 file and renames it over the old one: a crash or a full
    /// disk leaves the old config whole, never a half-written token.
    func saveConfig(_ config: RemoteConfig) throws {
        let directory = (configPath as NSString).deletingLastPathComponent
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data = try encoder.encode(config)
        do {
            try PrivateFile.makeDirectory(directory)
            try PrivateFile.replace(configPath, with: Array(data))
        } catch {
            throw CommandError(message: "cannot write \(configPath): \(error)", code: "io")
        }
    }

    /// The transport for the configured server, signed in or not; `answerTimeout` shorter than
    /// ``answerTimeout()`` for what must not keep a person waiting (a completion, `ls`'s pull).
    func transport(requireToken: Bool = true, answerTimeout short: Double? = nil) throws -> (
        HTTPSyncTransport, RemoteConfig
    ) {
        let config = try loadConfig()
        guard let server = config.server, let url = URL(string: server) else {
            throw CommandError(message: "no server configured: 'basket remote set URL' first", code: "no_server")
        }
        if requireToken && config.token == nil {
            throw CommandError(
                message: "not signed in: 'basket login NAME' (or 'basket signup NAME') first", code: "not_signed_in")
        }
        return (
            HTTPSyncTransport(baseURL: url, token: config.token, answerTimeout: try short ?? answerTimeout()), config
        )
    }

    /// How long a command waits for the server's answer to one request: 15 s, or
    /// `$BASKET_TIMEOUT` seconds (1 to 600). A hung server costs a command that long, then
    /// the command says so; what it wrote stays here for the next sync.
    func answerTimeout() throws -> Double {
        guard let raw = environment["BASKET_TIMEOUT"], !raw.isEmpty else { return 15 }
        guard let seconds = Int(raw), (1...600).contains(seconds) else {
            throw CommandError(message: "BASKET_TIMEOUT must be a whole number of seconds from 1 to 600", code: "usage")
        }
        return Double(seconds)
    }

    /// The password: the first line of stdin with --password-stdin, else $BASKET_PASSWORD, else a
    /// prompt (`confirming`: twice, as a new password is, and both must be the same).
    func password(confirming: Bool = false) throws -> String {
        if arguments.has("--password-stdin") {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            let text = String(decoding: data, as: UTF8.self)
            return String(text.split(whereSeparator: \.isNewline).first ?? "")
        }
        if let password = environment["BASKET_PASSWORD"], !password.isEmpty { return password }
        guard isatty(0) == 1, let entered = getpass("Password: ") else {
            throw CommandError(message: "no password: use --password-stdin or $BASKET_PASSWORD", code: "no_password")
        }
        let password = String(cString: entered)
        if confirming {
            guard let again = getpass("The same password again: "), String(cString: again) == password else {
                throw CommandError(message: "the two passwords differ; nothing was created", code: "password_mismatch")
            }
        }
        return password
    }
}

enum SyncCommands {
    /// Whether `host` is this machine (plain http to it never crosses a network).
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    static let remoteUsage = "basket remote [set [URL] [--auto-sync on|off]]"

    static func remote(_ context: Context) throws {
        let args = context.arguments.positionals
        var config = try context.loadConfig()
        let autoSync = context.arguments.value("--auto-sync")
        if args.first == "set" {
            guard args.count <= 2, args.count == 2 || autoSync != nil else {
                throw UsageError(message: "give the server's URL, like http://127.0.0.1:8080", usage: remoteUsage)
            }
            if let autoSync {
                guard autoSync == "on" || autoSync == "off" else {
                    throw UsageError(message: "--auto-sync is on or off", usage: remoteUsage)
                }
                config.autoSync = autoSync == "on"
            }
            var url: URL?
            if args.count == 2 {
                guard let given = URL(string: args[1]), ["http", "https"].contains(given.scheme ?? ""),
                    given.host != nil
                else {
                    // "localhost:8080" or "basket.example.org": the scheme is what is missing.
                    let bare = args[1]
                    if !bare.contains("://"), !bare.isEmpty, bare.utf8.count <= 2_048,
                        let guess = URL(
                            string: (Self.isLoopback(bare.split(separator: ":").first.map(String.init) ?? "")
                                ? "http://" : "https://") + bare),
                        guess.host != nil
                    {
                        throw UsageError(
                            message:
                                "a server's URL starts with http:// or https://: did you mean '\(guess.absoluteString)'?",
                            usage: remoteUsage)
                    }
                    throw UsageError(message: "give the server's URL, like http://127.0.0.1:8080", usage: remoteUsage)
                }
                if config.server != args[1] {
                    config.token = nil  // a token belongs to its server
                    config.account = nil
                }
                config.server = args[1]
                url = given
            }
            try context.saveConfig(config)
            if let url { context.console.print("Server set to \(url.absoluteString)") }
            if autoSync != nil {
                context.console.print(
                    config.autoSync == false
                        ? "Auto-sync off: changes stay here until 'basket sync'"
                        : "Auto-sync on: each change is sent as it is made")
            }
            if let url, url.scheme == "http", let host = url.host, !Self.isLoopback(host) {
                context.console.error(
                    "Warning: \(host) is reached over plain http: your password and token travel in clear."
                        + " Use https:// (docs/deploy.md puts the server behind TLS).")
            }
            return
        }
        guard args.isEmpty, autoSync == nil else {
            throw UsageError(message: "unknown remote command '\(args.first ?? "--auto-sync")'", usage: remoteUsage)
        }
        if context.json {
            struct Output: Encodable {
                var server: String?
                var account: String?
                var autoSync: Bool
            }
            return try context.console.json(
                Output(server: config.server, account: config.account, autoSync: config.autoSync ?? true))
        }
        context.console.print(
            config.server.map { "Server: \($0)" + (config.account.map { " (signed in as \($0))" } ?? "") }
                ?? "No server configured.")
        if config.server != nil {
            context.console.print(
                "Auto-sync: \(config.autoSync == false ? "off (changes wait for 'basket sync')" : "on")")
        }
    }

    /// The setting that holds when a list's changes last reached the server without a pull
    /// (a write command's send), in Unix milliseconds.
    static func lastSentSetting(_ list: ListID) -> String { "last_sent." + list.description }

    /// How old a list's last pull may be before `basket ls` pulls again.
    static let freshSeconds: UInt64 = 5
    /// How long `basket ls` waits for that pull before it shows the list as it has it.
    static let refreshSeconds = 2.0

    /// What `basket ls` knows of how current its copy of a list is.
    enum Freshness {
        /// Pulled just now, or a few seconds ago; or a list on this device only.
        case current
        /// Not pulled now: the last pull (nil: never) and why not.
        case stale(lastSync: UInt64?, why: String)
    }

    /// Before a list is shown: pulls it when the last pull is older than ``freshSeconds`` and
    /// the server answers within ``refreshSeconds`` (sending what waits too). Nothing is asked
    /// with --no-sync, auto-sync off, no server or no sign-in, or for a list on this device only.
    static func refresh(_ context: Context, _ list: ListID) -> Freshness {
        guard let replica = try? context.replica(), let state = try? replica.syncState(of: list),
            state.isRegistered, !state.noLongerMember
        else { return .current }
        let now = HybridClock.wallClockMilliseconds()
        if let last = state.lastSync, now >= last, now - last < freshSeconds * 1_000 { return .current }
        let config = try? context.loadConfig()
        let notAsked =
            context.arguments.has("--no-sync")
            ? "--no-sync"
            : config?.server == nil
                ? "no server"
                : config?.token == nil
                    ? "signed out" : config?.autoSync == false ? "auto-sync is off; 'basket sync' pulls" : nil
        if let notAsked { return .stale(lastSync: state.lastSync, why: notAsked) }
        guard let (transport, _) = try? context.transport(answerTimeout: refreshSeconds) else {
            return .stale(lastSync: state.lastSync, why: "no server")
        }
        let engine = SyncEngine(replica: replica, transport: transport)
        switch runBlocking(within: refreshSeconds, { try await engine.sync(list) }) {
        case .some(.success): return .current
        case .some(.failure(let error)):
            if case SyncError.unreachable(let why) = error { return .stale(lastSync: state.lastSync, why: why) }
            return .stale(lastSync: state.lastSync, why: "\(error)")
        case nil:
            return .stale(
                lastSync: state.lastSync, why: "the server did not answer within \(Int(refreshSeconds)) s")
        }
    }

    /// "12 min ago", "3 h ago", "2 days ago": how long ago a time was, as people say it.
    static func ago(_ milliseconds: UInt64, now: UInt64 = HybridClock.wallClockMilliseconds()) -> String {
        let seconds = now > milliseconds ? (now - milliseconds) / 1_000 : 0
        switch seconds {
        case ..<60: return "\(seconds) s ago"
        case ..<3_600: return "\(seconds / 60) min ago"
        case ..<172_800: return "\(seconds / 3_600) h ago"
        default: return "\(seconds / 86_400) days ago"
        }
    }

    /// How long a write command waits for the server before it leaves its changes in the outbox.
    static let sendSeconds = 2.0

    /// After a write command: with a server, signed in and auto-sync on (and no `--no-sync`),
    /// sends every list's waiting changes, for about 2 s at most. What is not sent is said on
    /// stderr; the command still succeeds (its changes are saved here).
    static func sendAfterWrite(_ context: Context) {
        guard !context.arguments.has("--no-sync"), let config = try? context.loadConfig(), config.server != nil,
            config.token != nil, config.autoSync != false, let replica = try? context.replica(),
            let pending = try? replica.outbox.count(), pending > 0, let engine = try? engine(context)
        else { return }
        let waiting = (try? replica.outbox.lists()) ?? []
        let outcome = (try? runBlocking { await engine.sendPending(within: sendSeconds) }) ?? SendOutcome()
        guard outcome.waiting > 0 else {
            try? replica.release()  // what was kept with --no-sync went with it
            // 'basket status' says when each list last went to the server, a pull or not.
            let now = String(HybridClock.wallClockMilliseconds())
            for list in waiting { try? replica.setSetting(lastSentSetting(list), now) }
            return
        }
        let why =
            outcome.timedOut
            ? "the server did not answer within \(Int(sendSeconds)) s"
            : outcome.failure ?? "the server did not take them"
        context.console.error(
            "Saved here; \(LiveSync.Status.changes(outcome.waiting)) waiting for the server (\(why)).")
    }

    static func account(_ context: Context, signUp: Bool) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(
                message: "name the account", usage: "basket \(signUp ? "signup" : "login") NAME [--password-stdin]")
        }
        let name = context.arguments.positionals[0]
        let (transport, config) = try context.transport(requireToken: false)
        let password = try context.password(confirming: signUp)
        let device = context.arguments.value("--device") ?? Self.deviceName()
        let invite = context.arguments.value("--invite")
        let token = try runBlocking {
            if signUp { try await transport.signUp(name: name, password: password, invite: invite) }
            return try await transport.login(name: name, password: password, device: device)
        }
        var updated = config
        updated.account = name.lowercased()
        updated.token = token
        try context.saveConfig(updated)
        context.console.print(
            signUp ? "Created account \(name.lowercased()) and signed in" : "Signed in as \(name.lowercased())")
        guard !signUp else { return }
        // The account's lists come along at once: 'basket lists' on a new device shows them.
        do {
            let engine = try engine(context)
            let (signedIn, _) = try context.transport()
            let fetched = try runBlocking {
                var titles: [ListID] = []
                for list in try await signedIn.lists() {
                    _ = try await engine.adopt(list.id, role: list.role)
                    titles.append(list.id)
                }
                return titles
            }
            let lists = try context.replica().lists()
            let names = fetched.compactMap { id in lists.first { $0.id == id }?.title }
            if !names.isEmpty {
                context.console.print(
                    "Fetched \(names.count) list\(names.count == 1 ? "" : "s"): "
                        + names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", …" : ""))
            }
        } catch {
            context.console.error("Your lists were not fetched yet (\(error)); 'basket sync' fetches them.")
        }
    }

    /// This machine's name, as the devices list shows a new sign-in by default.
    static func deviceName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return "basket on \(host.isEmpty ? "this machine" : String(host.prefix(40)))"
    }

    static func logout(_ context: Context) throws {
        let (transport, config) = try context.transport()
        var everywhere = 0
        if context.arguments.has("--everywhere") {
            // Every device of the account: a failure here must be seen, not swallowed.
            try context.confirm("Sign out every device of \(config.account ?? "this account"), this one included?")
            everywhere = try runBlocking { try await transport.logoutEverywhere() }
        } else {
            try? runBlocking { try await transport.logout() }
        }
        var updated = config
        updated.token = nil
        updated.account = nil
        try context.saveConfig(updated)
        context.console.print(
            context.arguments.has("--everywhere")
                ? "Signed out everywhere (\(everywhere) device\(everywhere == 1 ? "" : "s"))" : "Signed out")
    }

    static func engine(_ context: Context) throws -> SyncEngine {
        let (transport, _) = try context.transport()
        return SyncEngine(replica: try context.replica(), transport: transport)
    }

    static func sync(_ context: Context) throws {
        if context.arguments.has("--watch") && context.arguments.has("--discard-refused") {
            throw UsageError(
                message: "--watch and --discard-refused do not go together: run 'basket sync --discard-refused' first",
                usage: "basket sync [--watch | --discard-refused]")
        }
        let engine = try engine(context)
        if context.arguments.has("--watch") { return try watch(context, engine) }
        try context.replica().release()  // an explicit sync sends what --no-sync kept
        let reports = try runBlocking { try await engine.syncAll() }
        let lists = Dictionary(try context.replica().lists().map { ($0.id, $0.title) }) { a, _ in a }
        // Changes the server will not take (a viewer's, a former member's): dropped on request,
        // after the sync has learnt every list's role, so each copy ends as the server has it.
        var discarded: [ListID: [PendingOperation]] = [:]
        if context.arguments.has("--discard-refused") {
            let replica = try context.replica()
            for state in try replica.syncStates() where state.role == .viewer || state.noLongerMember {
                let pending = try replica.outbox.operations(in: state.list)
                let described = Self.describe(pending, in: state.list, replica: replica)
                let dropped = try replica.discardPending(in: state.list)
                guard !dropped.isEmpty else { continue }
                discarded[state.list] = dropped
                if !context.json {
                    context.console.print(
                        "Dropped \(LiveSync.Status.changes(Set(dropped.map(\.operation.item)).count)) to"
                            + " \(lists[state.list] ?? state.list.description) that the server refused:")
                    for line in described { context.console.print("  \(line)") }
                }
            }
        }
        // Changes refused and still here make the sync a failure for a script (exit 1): they are
        // not on the server, whatever the lines above say.
        let refusedLeft = reports.contains { $0.refusedPending - (discarded[$0.list]?.count ?? 0) > 0 }
        if context.json {
            struct Row: Encodable {
                var list: String
                var title: String
                var pushed: Int
                var pulled: Int
                var epochChanged: Bool
                var restamped: Int
                var reclaimed: Int
                var refusedPending: Int
                var noLongerMember: Bool
                var unsent: Int
                var discarded: Int
            }
            try context.console.json(
                reports.map {
                    let dropped = discarded[$0.list]?.count ?? 0
                    return Row(
                        list: $0.list.description, title: lists[$0.list] ?? "", pushed: $0.pushed, pulled: $0.pulled,
                        epochChanged: $0.epochChanged, restamped: $0.restamped, reclaimed: $0.reclaimed,
                        refusedPending: max(0, $0.refusedPending - dropped), noLongerMember: $0.noLongerMember,
                        unsent: max(0, $0.unsent - dropped), discarded: dropped)
                })
            if refusedLeft { throw ExitStatus(code: 1) }
            return
        }
        for report in reports where report.noLongerMember {
            let title = lists[report.list] ?? report.list.description
            // Counted as a person counts them: by item (the report counts writes).
            let unsent =
                discarded[report.list] == nil ? (try? context.replica().outbox.changes(in: report.list)) ?? 0 : 0
            context.console.error(
                "You are no longer a member of \(title) on the server (its owner removed you or deleted the list, or you"
                    + " left it). It stays on this device, read-only"
                    + (unsent > 0
                        ? ", with \(LiveSync.Status.changes(unsent)) that \(unsent == 1 ? "was" : "were") not sent"
                            + " ('basket status' lists them;"
                            + " 'basket sync --discard-refused' drops them)" : "")
                    + "; 'basket list rm \(title)' removes it, a new invite shares it again.")
        }
        for report in reports where !report.noLongerMember {
            var line =
                "Synced \(lists[report.list] ?? report.list.description): sent \(report.pushed), received \(report.pulled)"
            if report.epochChanged {
                line += "; the server had lost data (restored from a backup): sent everything again"
            }
            context.console.print(line)
            if report.restamped > 0 {
                context.console.print(
                    "This device's clock was off by \(report.clockOffset / 1000) s; corrected it and re-stamped \(report.restamped) writes"
                )
            }
            if report.reclaimed > 0 {
                context.console.print(
                    "The server held another value under the name of \(report.reclaimed) of this device's changes (another"
                        + " member sent it first as this device); stamped them anew and sent them again, so yours stand"
                )
            }
            if report.refusedPending > 0 && discarded[report.list] == nil {
                let changes = (try? context.replica().outbox.changes(in: report.list)) ?? report.refusedPending
                context.console.print(
                    "\(LiveSync.Status.changes(changes)) to this list were not sent: you can only view it. They stay here:"
                        + " 'basket status' lists them, 'basket sync --discard-refused' drops them.")
            }
        }
        if reports.isEmpty { context.console.print("Nothing to sync.") }
        if refusedLeft { throw ExitStatus(code: 1) }
    }

    /// Changes waiting in the outbox as a person reads them: one line per item, at most 50.
    static func describe(_ pending: [PendingOperation], in list: ListID, replica: Replica) -> [String] {
        describe(pending.map(\.operation), replica: replica)
    }

    /// Writes as a person reads them: one line per item ("Milk: checked, quantity '2'"), at most 50.
    static func describe(_ operations: [Op], replica: Replica) -> [String] {
        var order: [ItemID] = []
        var writes: [ItemID: [Op]] = [:]
        for op in operations {
            if writes[op.item] == nil { order.append(op.item) }
            writes[op.item, default: []].append(op)
        }
        var lines = order.prefix(50).map { item -> String in
            let ops = writes[item] ?? []
            let last = Dictionary(ops.map { ($0.field, $0.value) }) { _, later in later }
            if item == .list { return "the list's title: \(Printable.escaped(last[.title]?.textValue ?? ""))" }
            let name =
                last[.name]?.textValue ?? ops.first.flatMap { try? replica.item(item, in: $0.list) }?.name ?? "an item"
            var parts: [String] = []
            if last[.deleted] == .bool(true) {
                parts.append("removed")
            } else if last[.deleted] == .bool(false) {
                parts.append(last[.name] != nil ? "added" : "brought back")
            }
            if let checked = last[.checked]?.boolValue, !(checked == false && last[.deleted] == .bool(false)) {
                parts.append(checked ? "checked" : "unchecked")
            }
            for field in [Field.quantity, .note, .category] {
                guard let value = last[field] else { continue }
                parts.append("\(field.rawValue) " + (value.textValue.map { "'\(Printable.escaped($0))'" } ?? "cleared"))
            }
            if parts.isEmpty { parts.append("renamed") }
            return "\(Printable.escaped(name)): \(parts.joined(separator: ", "))"
        }
        if order.count > 50 { lines.append("… and \(order.count - 50) more items") }
        return lines
    }

    /// `sync --watch`: stays connected and prints every change as it arrives; sends what this or
    /// another process writes to the list within a second (unless auto-sync is off). Ends with Ctrl-C.
    static func watch(_ context: Context, _ engine: SyncEngine) throws {
        let replica = try context.replica()
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list to watch", code: "no_such_list")
        }
        _ = try runBlocking { try await engine.sync(list.id) }
        context.console.print("Watching \(list.title) (Ctrl-C to stop)")
        context.console.flush()
        let sends = try context.loadConfig().autoSync != false && !context.arguments.has("--no-sync")
        let wake = DispatchSemaphore(value: 0)
        // What the connection does, said once per change: a problem, and that it is over.
        let problems = Mutex<(lines: [String], troubled: Bool)>(([], false))
        let listID = list.id
        let hold = LiveSync.Hold { (try? replica.isHeld(listID)) ?? false }
        let live = LiveSync(engine: engine, list: list.id, sends: sends, hold: hold) { event in
            switch event {
            case .received: wake.signal()
            case .status(let status):
                switch status {
                case .offline, .failed:
                    problems.withLock {
                        $0.lines.append("Sync: \(status)")
                        $0.troubled = true
                    }
                    wake.signal()
                case .synced:
                    let back = problems.withLock { p -> Bool in
                        guard p.troubled else { return false }
                        p.troubled = false
                        p.lines.append("Sync: connected again · synced")
                        return true
                    }
                    if back { wake.signal() }
                default: break
                }
            }
        }
        live.start()
        defer { live.stop() }
        var before = Dictionary(try replica.items(in: list.id, filter: .all).map { ($0.id, $0) }) { a, _ in a }
        while true {
            wake.wait()
            for line in problems.withLock({ p in
                defer { p.lines = [] }; return p.lines
            }) { context.console.error(line) }
            let after = Dictionary(try replica.items(in: list.id, filter: .all).map { ($0.id, $0) }) { a, _ in a }
            for (id, item) in after.sorted(by: { $0.value.name < $1.value.name }) where before[id] != item {
                let change: String
                if let old = before[id], !old.isDeleted, item.isDeleted {
                    change = "- \(item.name) (removed)"
                } else if before[id] == nil || before[id]!.isDeleted {
                    change = "+ \(item.name)"
                } else {
                    change = ItemCommands.line(for: item)
                }
                if context.json {
                    try context.console.json(ItemJSON(item))
                } else {
                    context.console.print(change)
                }
            }
            context.console.flush()
            before = after
        }
    }

    static let shareUsage = "basket share [--role editor|viewer|owner] [--uses N] [--expires 2d|12h|30m]"

    /// `2d`, `12h`, `30m` or a number of seconds, as seconds.
    static func duration(_ text: String) -> Int? {
        let units: [Character: Int] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        if let unit = text.last, let factor = units[unit], let n = Int(text.dropLast()), n > 0 { return n * factor }
        return Int(text).flatMap { $0 > 0 ? $0 : nil }
    }

    static func share(_ context: Context) throws {
        guard let role = Role(rawValue: context.arguments.value("--role") ?? Role.editor.rawValue) else {
            throw UsageError(message: "--role is editor, viewer or owner", usage: shareUsage)
        }
        var uses = 1
        if let raw = context.arguments.value("--uses") {
            guard let n = Int(raw), (1...100).contains(n) else {
                throw UsageError(message: "--uses is a number from 1 to 100", usage: shareUsage)
            }
            uses = n
        }
        var expiresIn: Int?
        if let raw = context.arguments.value("--expires") {
            guard let seconds = duration(raw), (60...30 * 86_400).contains(seconds) else {
                throw UsageError(message: "--expires is a time from 1m to 30d, like 2d, 12h or 30m", usage: shareUsage)
            }
            expiresIn = seconds
        }
        let list = try context.requireList()
        // What this device knows already is said without asking the server.
        let state = try context.replica().syncState(of: list.id)
        if state.noLongerMember {
            throw CommandError(
                message: "\(list.title) is no longer shared with you on the server: there is nothing to invite to",
                code: "no_longer_member")
        }
        if state.role == .viewer {
            throw CommandError(
                message: "you can only view \(list.title): viewers cannot invite (an owner can make you an editor)",
                code: "forbidden")
        }
        if role == .owner, let known = state.role, known != .owner {
            throw CommandError(
                message: "only an owner of \(list.title) can invite an owner (you are an \(known.rawValue))",
                code: "forbidden")
        }
        let engine = try engine(context)
        let (transport, _) = try context.transport()
        let listID = list.id
        let (count, seconds) = (uses, expiresIn)
        // The title goes with the invite, so whoever is invited sees which list before joining.
        let title = try? ItemName.clean(list.title, for: .title)
        let invite = try runBlocking {
            _ = try await engine.sync(listID)
            return try await transport.invite(to: listID, role: role, uses: count, expiresIn: seconds, title: title)
        }
        let code = invite.code ?? ""
        if context.json {
            struct Output: Encodable {
                var code: String
                var id: String
                var role: Role
                var list: String
                var usesLeft: Int
                var expiresAt: Int64
            }
            return try context.console.json(
                Output(
                    code: code, id: invite.id, role: role, list: list.id.description, usesLeft: invite.usesLeft,
                    expiresAt: invite.expiresAt))
        }
        let times = invite.usesLeft == 1 ? "once" : "\(invite.usesLeft) times"
        context.console.print("Invite code for \(list.title) (\(role.rawValue)): \(code)")
        context.console.print(
            "Works \(times), until \(Self.date(invite.expiresAt)). On the other device: basket join \(code)")
        context.console.print("See or withdraw it with 'basket invites'.")
    }

    /// A Unix-milliseconds time as the user reads it (UTC, to the minute).
    static func date(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static func join(_ context: Context) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "give the invite code", usage: "basket join CODE")
        }
        let code = context.arguments.positionals[0].uppercased()
        let engine = try engine(context)
        let (transport, _) = try context.transport()
        let replica = try context.replica()
        let joined = try runBlocking {
            let remote = try await transport.join(code: code)
            _ = try await engine.adopt(remote.id, role: remote.role)
            return remote
        }
        try replica.setSetting(Context.currentListSetting, joined.id.description)
        let title = try replica.lists().first { $0.id == joined.id }?.title ?? joined.id.description
        if context.json {
            struct Output: Encodable {
                var list: String
                var title: String
                var role: Role
            }
            return try context.console.json(Output(list: joined.id.description, title: title, role: joined.role))
        }
        context.console.print("Joined \(title) as \(joined.role.rawValue) (now the current list)")
    }

    static func status(_ context: Context) throws {
        let config = try context.loadConfig()
        let replica = try context.replica()
        let pending = try replica.outbox.count()
        let offset = try replica.outbox.clockOffset()
        let states = Dictionary(try replica.syncStates().map { ($0.list, $0) }) { a, _ in a }
        let lists = try replica.lists()
        if context.json {
            struct ListStatus: Encodable {
                var id: String
                var title: String
                var synced: Bool
                var lastSync: UInt64?
                var cursor: Int64
                /// Writes not yet sent (operations).
                var pending: Int
                /// The same, as a person counts them: items and actions.
                var changes: Int
                var role: Role?
                var noLongerMember: Bool
                /// Changes the server will not take (a viewer's, a former member's), as a person reads them.
                var refused: [String]
            }
            struct Output: Encodable {
                var server: String?
                var account: String?
                var pending: Int
                var changes: Int
                var clockOffsetMilliseconds: Int64
                var lists: [ListStatus]
            }
            return try context.console.json(
                Output(
                    server: config.server, account: config.account, pending: pending,
                    changes: try replica.outbox.changes(), clockOffsetMilliseconds: offset,
                    lists: try lists.map { list in
                        let state = states[list.id]
                        let pending = try replica.outbox.operations(in: list.id)
                        let refuses = state.map { $0.role == .viewer || $0.noLongerMember } ?? false
                        return ListStatus(
                            id: list.id.description, title: list.title, synced: state?.isRegistered ?? false,
                            lastSync: state?.lastSync, cursor: state?.cursor ?? 0, pending: pending.count,
                            changes: try replica.outbox.changes(in: list.id), role: state?.role,
                            noLongerMember: state?.noLongerMember ?? false,
                            refused: refuses ? Self.describe(pending, in: list.id, replica: replica) : [])
                    }))
        }
        context.console.print(
            "Server:  \(config.server ?? "none (offline only)")\(config.account.map { ", signed in as \($0)" } ?? "")")
        let changes = try replica.outbox.changes()
        context.console.print("Pending: \(LiveSync.Status.changes(changes)) not yet sent")
        context.console.print(
            "Clock:   "
                + (config.server == nil
                    ? "no server to compare with"
                    : offset == 0
                        ? "in step with the server" : "corrected by \(offset) ms from the server's time"))
        for list in lists {
            let state = states[list.id]
            let when =
                state?.lastSync.map { ItemCommands.localTime(HybridTimestamp(milliseconds: $0, counter: 0)) }
                ?? "never"
            let waiting = try replica.outbox.changes(in: list.id)
            // A write command's send reaches the server without a pull: said apart.
            let sent = (try? replica.setting(lastSentSetting(list.id))).flatMap { $0.flatMap(UInt64.init) }
            let sentLater =
                sent.map { sent in state?.lastSync.map { sent > $0 } ?? true } == true
                ? ", changes sent \(ItemCommands.localTime(HybridTimestamp(milliseconds: sent!, counter: 0)))" : ""
            context.console.print(
                "  \(list.title): last sync \(when)\(sentLater), \(LiveSync.Status.changes(waiting)) waiting")
        }
        // Changes the server will not take: what they were, and the way out.
        var refused = false
        for list in lists {
            guard let state = states[list.id], state.role == .viewer || state.noLongerMember else { continue }
            let pending = try replica.outbox.operations(in: list.id)
            guard !pending.isEmpty else { continue }
            refused = true
            let why = state.noLongerMember ? "it is no longer shared with you" : "you can only view it"
            context.console.print(
                "\(list.title): \(LiveSync.Status.changes(Set(pending.map(\.operation.item)).count)) the server will not take (\(why)):"
            )
            for line in Self.describe(pending, in: list.id, replica: replica) { context.console.print("  \(line)") }
        }
        if refused {
            context.console.print(
                "'basket sync --discard-refused' drops them and puts those lists back to the server's state.")
        }
    }
}
