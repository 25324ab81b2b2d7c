import BasketCore
import BasketReplica
import BasketSeal
import Foundation
import PrivateFiles
import Synchronization

/// Reaching the server: remote, sync (and --watch), status, and what every write command and
/// `basket ls` ask of the server before they end.
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
        let autoSync = context.arguments.value(.autoSync)
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
            return try context.console.json(
                Output.Remote(server: config.server, account: config.account, autoSync: config.autoSync ?? true))
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

    /// How long a write command waits for the server before it leaves its changes in the outbox.
    static let sendSeconds = 2.0

    /// After a write command: with a server, signed in and auto-sync on (and no `--no-sync`),
    /// sends every list's waiting changes, for about 2 s at most. What is not sent is said on
    /// stderr; the command still succeeds (its changes are saved here).
    static func sendAfterWrite(_ context: Context) {
        guard !context.arguments.has(.noSync), let config = try? context.loadConfig(), config.server != nil,
            config.token != nil, config.autoSync != false, let replica = try? context.replica(),
            let pending = try? replica.outbox.count(), pending > 0, let engine = try? engine(context)
        else { return }
        let waiting = (try? replica.outbox.lists()) ?? []
        let outcome = (try? runBlocking { await engine.sendPending(within: sendSeconds) }) ?? SendOutcome()
        // An encrypted list this send registered leaves its keys for the account's other devices
        // (sealed to its key pair), as a sync does: a phone signing in next opens it.
        let encrypted = waiting.filter { replica.isEncrypted($0) }
        if outcome.waiting == 0, !encrypted.isEmpty, let pair = Envelopes.keyPair(replica),
            let (transport, _) = try? context.transport()
        {
            let keyring = context.keyring
            try? runBlocking {
                try await Envelopes.deliver(
                    encrypted, account: config.account ?? "", pair: pair, replica: replica, keyring: keyring,
                    transport: transport)
            }
        }
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
            "Saved here; \(Phrases.changes(outcome.waiting)) waiting for the server (\(why)).")
    }

    static func engine(_ context: Context) throws -> SyncEngine {
        let (transport, _) = try context.transport()
        return engine(context, replica: try context.replica(), transport: transport)
    }

    /// An engine for `replica` through `transport` that brings encrypted lists' keys up to the
    /// server's (a member's rotation, or one this device makes after a member left).
    static func engine(_ context: Context, replica: Replica, transport: HTTPSyncTransport) -> SyncEngine {
        SyncEngine(
            replica: replica, transport: transport,
            keyRenewal: EnvelopeRenewal(replica: replica, keyring: context.keyring, transport: transport))
    }

    static func sync(_ context: Context) throws {
        if context.arguments.has(.watch) && context.arguments.has(.discardRefused) {
            throw UsageError(
                message: "--watch and --discard-refused do not go together: run 'basket sync --discard-refused' first",
                usage: "basket sync [--watch | --discard-refused]")
        }
        let engine = try engine(context)
        if context.arguments.has(.watch) { return try watch(context, engine) }
        try context.replica().release()  // an explicit sync sends what --no-sync kept
        // Texts add-only keys put in the lists' inboxes: filed as items first, then sent with the rest.
        let filed = InboxCommands.fileAll(context)
        // What waits, as a person counts changes (an added item is one, not its three writes).
        let outbox = try context.replica().outbox
        let waitingBefore = Dictionary(
            try context.replica().lists().map { ($0.id, (try? outbox.changes(in: $0.id)) ?? 0) }
        ) { a, _ in a }
        // Encrypted lists' keys to and from the account's other devices (sealed to its key pair),
        // before the lists are synced: a list whose keys came in syncs with them.
        let (transport, config) = try context.transport()
        let replica = try context.replica()
        let keyring = context.keyring
        let account = config.account ?? ""
        let reports = try runBlocking {
            let memberships = try await transport.lists()
            _ = try await Envelopes.exchange(
                memberships, account: account, replica: replica, keyring: keyring, transport: transport)
            let reports = try await engine.syncAll(memberships)
            // Lists registered by this sync leave their keys for the account's other devices too.
            if let pair = Envelopes.keyPair(replica) {
                try await Envelopes.deliver(
                    reports.map(\.list), account: account, pair: pair, replica: replica, keyring: keyring,
                    transport: transport)
            }
            return reports
        }
        let lists = Dictionary(try context.replica().lists().map { ($0.id, $0.title) }) { a, _ in a }
        // Changes the server will not take (a viewer's, a former member's): dropped on request,
        // after the sync has learnt every list's role, so each copy ends as the server has it.
        var discarded: [ListID: [PendingOperation]] = [:]
        if context.arguments.has(.discardRefused) {
            let replica = try context.replica()
            for state in try replica.syncStates() where state.role == .viewer || state.noLongerMember {
                let pending = try replica.outbox.operations(in: state.list)
                let described = Self.describe(pending, in: state.list, replica: replica)
                let dropped = try replica.discardPending(in: state.list)
                guard !dropped.isEmpty else { continue }
                discarded[state.list] = dropped
                if !context.json {
                    context.console.print(
                        "Dropped \(Phrases.changes(Set(dropped.map(\.operation.item)).count)) to"
                            + " \(lists[state.list] ?? state.list.description) that the server refused:")
                    for line in described { context.console.print("  \(line)") }
                }
            }
        }
        // Changes refused and still here make the sync a failure for a script (exit 1): they are
        // not on the server, whatever the lines above say.
        let refusedLeft = reports.contains {
            $0.refusedPending - (discarded[$0.list]?.count ?? 0) > 0 || $0.failure != nil
        }
        if context.json {
            try context.console.json(
                Output.Synced(
                    lists: reports.map {
                        let dropped = discarded[$0.list]?.count ?? 0
                        return Output.SyncedList(
                            list: $0.list.description, title: lists[$0.list] ?? "", pushed: $0.pushed,
                            pulled: $0.pulled,
                            epochChanged: $0.epochChanged, restamped: $0.restamped, reclaimed: $0.reclaimed,
                            refusedPending: max(0, $0.refusedPending - dropped), noLongerMember: $0.noLongerMember,
                            unsent: max(0, $0.unsent - dropped), discarded: dropped, fromSnapshot: $0.fromSnapshot,
                            converted: $0.converted,
                            error: $0.failure.map { Printable.escaped($0.description) })
                    }))
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
                        ? ", with \(Phrases.changes(unsent)) that \(unsent == 1 ? "was" : "were") not sent"
                            + " ('basket status' lists them;"
                            + " 'basket sync --discard-refused' drops them)" : "")
                    + "; 'basket list rm \(title)' removes it, a new invite shares it again.")
        }
        for report in reports where report.keysMissing {
            context.console.error(
                "An encrypted list of your account has no keys on this device yet: join it with its invite code,"
                    + " or sync a device that has them (it leaves them for your account)")
        }
        for report in reports where report.unopened > 0 {
            context.console.error(
                "\(Phrases.changes(report.unopened)) to \(lists[report.list] ?? report.list.description)"
                    + " did not open with this device's keys and \(report.unopened == 1 ? "was" : "were") left out"
                    + " (sealed with a key it lacks, or changed on the way)")
        }
        for report in reports where report.failure != nil {
            let title = lists[report.list] ?? report.list.description
            // The server's words are escaped (SyncError bounds and escapes them already).
            context.console.error(
                "Not synced \(title): \(report.failure!)"
                    + (report.unsent > 0
                        ? "; \(Phrases.changes((try? context.replica().outbox.changes(in: report.list)) ?? report.unsent)) wait here"
                        : "")
                    + ". The other lists were synced.")
        }
        for report in reports where !report.noLongerMember && report.failure == nil && !report.keysMissing {
            // Counted as a person counts them: changes sent (items and the list's own fields), and
            // items another device changed; the operations are in --json (pushed, pulled).
            let left = (try? context.replica().outbox.changes(in: report.list)) ?? 0
            let sent = report.pushed == 0 ? 0 : max(1, (waitingBefore[report.list] ?? 0) - left)
            var line =
                "Synced \(lists[report.list] ?? report.list.description): sent \(Phrases.changes(sent)),"
                + " received \(Phrases.changes(report.changedItems))"
            if report.epochChanged {
                line += "; the server had lost data (restored from a backup): sent everything again"
            }
            if report.converted {
                line += "; an owner encrypted it end to end: this device took its keys"
            }
            if report.fromSnapshot {
                line += " (from the list's snapshot: its history before it is not on this device)"
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
                    "\(Phrases.changes(changes)) to this list were not sent: you can only view it. They stay here:"
                        + " 'basket status' lists them, 'basket sync --discard-refused' drops them.")
            }
        }
        if reports.isEmpty { context.console.print("Nothing to sync.") }
        for line in filed { context.console.print(line) }
        // This device's writes another member's later ones replaced: said once, quietly.
        for line in NewsLines.lost(context, within: refreshSeconds) { context.console.print(line) }
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
        // With --json, standard output carries JSON lines only: the greeting goes to standard error.
        if context.json {
            context.console.error("Watching \(list.title) (Ctrl-C to stop)")
        } else {
            context.console.print("Watching \(list.title) (Ctrl-C to stop)")
        }
        context.console.flush()
        let config = try context.loadConfig()
        let sends = config.autoSync != false && !context.arguments.has(.noSync)
        let account = config.account
        let wake = DispatchSemaphore(value: 0)
        // What the connection does, said once per change: a problem, and that it is over.
        let problems = Mutex<(lines: [String], troubled: Bool)>(([], false))
        let listID = list.id
        let hold = LiveSync.Hold { (try? replica.isHeld(listID)) ?? false }
        // Texts an add-only key put in the list's inbox: filed by this watch (it syncs).
        let inboxWaiting = Mutex(false)
        let live = LiveSync(engine: engine, list: list.id, sends: sends, hold: hold) { event in
            switch event {
            case .received(let report):
                if report.inboxWaiting > 0 { inboxWaiting.withLock { $0 = true } }
                wake.signal()
            case .status(let status):
                switch status {
                case .offline, .failed:
                    problems.withLock {
                        $0.lines.append("Sync: \(Phrases.status(status))")
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
        var outside = OutsideWrites(replica)
        // Who is shopping, as heard before the watch: only news is printed.
        var told = Set<String>()
        _ = ShoppingCommands.news(try replica.shoppingNews(of: list.id), me: account, told: &told)
        while true {
            // Woken by what the server relays, or, ten times a second, to look for what other
            // processes on this device wrote (sent at once, and printed as any other change).
            if wake.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                guard outside.happened() else { continue }
                live.changed()
            }
            for line in problems.withLock({ p in
                defer { p.lines = [] }; return p.lines
            }) { context.console.error(line) }
            let after = Dictionary(try replica.items(in: list.id, filter: .all).map { ($0.id, $0) }) { a, _ in a }
            for (id, item) in after.sorted(by: { $0.value.name < $1.value.name }) where before[id] != item {
                // Added and removed again between two looks: nothing a person would see changed.
                if item.isDeleted && before[id]?.isDeleted ?? true { continue }
                let change: String
                if let old = before[id], !old.isDeleted, item.isDeleted {
                    change = "- \(item.name) (removed)"
                } else if before[id] == nil || before[id]!.isDeleted {
                    change = "+ \(item.name)"
                } else {
                    change = ItemCommands.line(for: item)
                }
                if context.json {
                    let kind = change.hasPrefix("+ ") ? "added" : change.hasPrefix("- ") ? "removed" : "changed"
                    try context.console.json(Output.Watched(change: kind, item: item))
                } else {
                    context.console.print(change)
                }
            }
            if sends,
                inboxWaiting.withLock({ waiting in
                    defer { waiting = false }; return waiting
                })
            {
                for line in InboxCommands.fileAll(context) {
                    if context.json {
                        try context.console.json(Output.WatchedFiled(filed: line))
                    } else {
                        context.console.print(line)
                    }
                }
                live.changed()
            }
            for line in NewsLines.lost(context, within: refreshSeconds) {
                if context.json {
                    try context.console.json(Output.WatchedLost(lost: line))
                } else {
                    context.console.print(line)
                }
            }
            for line in ShoppingCommands.news(try replica.shoppingNews(of: list.id), me: account, told: &told) {
                if context.json {
                    try context.console.json(Output.WatchedShopping(shopping: line))
                } else {
                    context.console.print(line)
                }
            }
            context.console.flush()
            before = after
        }
    }

    static func status(_ context: Context) throws {
        let config = try context.loadConfig()
        let replica = try context.replica()
        // Who is shopping for the current list, asked when the server answers in time.
        if let current = try? context.list(create: false) {
            _ = ShoppingCommands.refresh(context, current.id, within: refreshSeconds)
        }
        let pending = try replica.outbox.count()
        let offset = try replica.outbox.clockOffset()
        let states = Dictionary(try replica.syncStates().map { ($0.list, $0) }) { a, _ in a }
        let lists = try replica.lists()
        if context.json {
            return try context.console.json(
                Output.Status(
                    server: config.server, account: config.account, pending: pending,
                    changes: try replica.outbox.changes(), clockOffsetMilliseconds: offset,
                    lists: try lists.map { list in
                        let state = states[list.id]
                        let pending = try replica.outbox.operations(in: list.id)
                        let refuses = state.map { $0.role == .viewer || $0.noLongerMember } ?? false
                        return Output.ListStatus(
                            id: list.id.description, title: list.title, synced: state?.isRegistered ?? false,
                            lastSync: state?.lastSync.map(ItemCommands.isoTime), cursor: state?.cursor ?? 0,
                            pending: pending.count,
                            changes: try replica.outbox.changes(in: list.id), role: state?.role,
                            noLongerMember: state?.noLongerMember ?? false,
                            refused: refuses ? Self.describe(pending, in: list.id, replica: replica) : [])
                    }))
        }
        context.console.print(
            "Server:  \(config.server ?? "none (offline only)")\(config.account.map { ", signed in as \($0)" } ?? "")")
        let changes = try replica.outbox.changes()
        context.console.print("Pending: \(Phrases.changes(changes)) not yet sent")
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
            // A list left or taken away, or one only viewed, says so: its copy here is read-only.
            let standing =
                state?.noLongerMember == true
                ? " (no longer shared with you: read-only here)"
                : state?.role == .viewer ? " (you can only view it)" : ""
            context.console.print(
                "  \(list.title)\(standing): last sync \(when)\(sentLater), \(Phrases.changes(waiting)) waiting"
            )
            for line in ShoppingCommands.stored(context, list.id) { context.console.print("    \(line)") }
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
                "\(list.title): \(Phrases.changes(Set(pending.map(\.operation.item)).count)) the server will not take (\(why)):"
            )
            for line in Self.describe(pending, in: list.id, replica: replica) { context.console.print("  \(line)") }
        }
        if refused {
            context.console.print(
                "'basket sync --discard-refused' drops them and puts those lists back to the server's state.")
        }
    }
}
