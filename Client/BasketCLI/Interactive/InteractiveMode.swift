import BasketCore
import BasketReplica
import BasketSearch
import Foundation
import Synchronization

/// `basket` with no arguments on a terminal: results follow every keystroke.
final class InteractiveMode {
    let context: Context
    let replica: Replica
    var list: ListInfo
    let color: Bool
    /// The catalogue's language (from LC_ALL, LC_MESSAGES or LANG).
    let language: String
    var state = InteractiveState()
    var index: SearchIndex
    var session: SearchSession
    /// Removed items with their add times, read once per reload.
    var history: [(item: Item, times: [UInt64])] = []
    /// Set by the sync watcher when another device changed the list.
    let remoteChanged = ChangeFlag()
    /// Set when the sync status changed (the status line is drawn again).
    let statusChanged = ChangeFlag()
    /// Keeps the list in sync while the screen is open (nil without a server).
    var live: LiveSync?
    /// The keys of every item of the list, removed ones included (what entry parsing needs),
    /// folded once per reload when first asked for, rather than once per keystroke.
    var keys: Set<String> {
        if let cachedKeys { return cachedKeys }
        let folded = Set(names.map(ItemKey.normalize))
        cachedKeys = folded
        return folded
    }
    private var cachedKeys: Set<String>?
    /// The list's shops, and the one it is walked at (a trip); nil: none.
    var shops: [Shop] = []
    var shop: Shop?
    /// The names of every item of the list, removed ones included (for German spellings).
    var names: [String] = []
    /// The index with what typing needs, built on another thread after each reload (the screen
    /// answers at once with one that visits every entry: the same answers, found more slowly).
    let typingIndex = IndexSlot()

    init(context: Context) throws {
        self.context = context
        replica = try context.replica()
        list = try context.requireList()
        color = context.environment["NO_COLOR"] == nil && context.environment["TERM"] != "dumb"
        language = Catalogue.language(environment: context.environment)
        // Built by the first reload (run() calls it): building it here too cost a start twice.
        index = SearchIndex(items: [])
        session = SearchSession(index: index)
    }

    func reload() throws {
        if let fresh = try replica.lists().first(where: { $0.id == list.id }) { list = fresh }
        shops = try replica.shops(in: list.id)
        shop = try ShopCommands.currentShop(context, list.id)
        let now = try context.wallClock()()
        state.due = try replica.usuals(in: list.id).filter { $0.isDue(at: now) && !$0.isOnList }.map(\.item)
        // One read of every item with its add times (removed ones too: entry parsing, "had it
        // before").
        let added = try replica.addTimes(in: list.id)
        let all = added.map(\.item).sortedForDisplay()
        cachedKeys = nil
        names = all.map(\.name)
        let quick = SearchIndex(
            items: all.filter { !$0.isDeleted }, lastUsed: ItemCommands.lastAdded(added), forTyping: false)
        index = quick
        session = SearchSession(index: quick)
        let generation = typingIndex.next()
        let slot = typingIndex
        DispatchQueue.global().async { slot.offer(quick.forTyping(), generation: generation) }
        history = added.filter { $0.item.isDeleted }
        refresh()
    }

    func refresh() {
        state.headings = [:]
        if EntryParser.split(state.query).count > 1 {
            // Several items typed at once ("tea, coffee"): the one row is adding them all.
            state.result = SearchResult(query: state.query, offer: state.query, matches: [])
            state.suggestions = []
            state.catalogue = []
            state.offers = []
            state.clampSelection()
            return
        }
        state.result = session.search(
            state.scope == .all ? state.query : state.query + " " + state.scope.token, limit: 200)
        if state.query.trimmingCharacters(in: .whitespaces).isEmpty { groupByAisle() }
        state.suggestions = Suggestions.rank(
            history, now: HybridClock.wallClockMilliseconds(), query: state.query, limit: state.query.isEmpty ? 5 : 3)
        // The catalogue is offered whatever the list matches: a weak match never hides it (Offers).
        state.catalogue = Catalogue.suggestionMatches(
            state.query, language: language,
            excluding: keys.union(state.suggestions.map(\.key)).union([ItemKey.normalize(state.query)]), limit: 3)
        // A scope shows its part of the list only: items had before, from its aisle; none of the
        // catalogue's.
        switch state.scope {
        case .all: break
        case .toBuy, .checked:
            state.suggestions = []
            state.catalogue = []
        case .category(let name):
            let aisle = ItemKey.normalize(name)
            state.suggestions = state.suggestions.filter { $0.category.map(ItemKey.normalize) == aisle }
            state.catalogue = []
        }
        state.offers = rankedOffers()
        state.clampSelection()
    }

    /// Beside the offer to add what was typed: the closest item, items had before and the
    /// catalogue's names, in the order both clients give them (``Offers/ranked(meant:due:before:catalogue:limit:)``).
    func rankedOffers() -> [Offers.Offer] {
        guard state.offerFirst else { return [] }
        let meant = state.result.didYouMean == nil ? nil : state.result.matches.first
        let tiers = Dictionary(
            SearchIndex(items: state.suggestions, forTyping: false).search(Query(state.query)).matches.map {
                ($0.item.id, $0)
            }
        ) { a, _ in a }
        let before = state.suggestions.compactMap { tiers[$0.id] }.filter { Offers.isCloseEnough($0.tier) }
        return Offers.ranked(
            meant: meant, due: Offers.due(state.due, query: state.query), before: before, catalogue: state.catalogue)
    }

    func run() throws {
        startSyncing()
        Terminal.enterRawMode()
        defer { Terminal.restore() }
        try reload()
        draw()
        var outside = OutsideWrites(replica)
        while true {
            let bytes = Terminal.readBytes()
            if outside.happened() {
                // Another process wrote to this device's copy: shown now, and sent now.
                live?.changed()
                try reload()
                state.message = "Updated by another basket on this device"
                draw()
            } else if remoteChanged.take() {
                try reload()
                state.message =
                    (try? replica.syncState(of: list.id).role) == .viewer
                    ? "You can only view this list now (an owner changed your role)" : "Updated from another device"
                draw()
            } else if statusChanged.take() {
                draw()
            }
            takeTypingIndex()
            guard !bytes.isEmpty else { continue }
            for key in Key.decode(bytes) {
                if try !handle(key) {
                    leave()
                    // Ctrl-C ends it as an interrupted program does (128 + SIGINT), Esc as it should.
                    if key == .interrupt { throw ExitStatus(code: 130) }
                    return
                }
            }
            draw()
        }
    }

    /// Searches with the index built for typing, once it is there.
    func takeTypingIndex() {
        guard let built = typingIndex.take() else { return }
        index = built
        session = SearchSession(index: built)
    }

    /// How long leaving waits for the server to take what is still waiting.
    static let leaveSeconds = 5.0

    /// On the way out: sends what is still waiting, for 5 s at most, saying so on screen.
    func leave() {
        guard let live, live.sends, live.status.pending > 0 || (try? replica.outbox.count(in: list.id)) ?? 0 > 0
        else {
            self.live?.stop()
            return
        }
        state.message = "Sending your changes…"
        draw()
        let waiting = (try? runBlocking { await live.flush(within: Self.leaveSeconds) }) ?? 0
        live.stop()
        if waiting > 0 {
            Terminal.restore()
            context.console.error(
                "Saved here; \(Phrases.changes(waiting)) waiting for the server (sent at the next sync).")
        }
    }

    /// Applies one key; false ends the session.
    func handle(_ key: Key) throws -> Bool {
        state.message = ""
        switch key {
        case .interrupt, .escape: return false
        case .character(let c):
            state.query += c
            state.selection = 0
            refresh()
        case .backspace:
            if !state.query.isEmpty { state.query.removeLast() }
            state.selection = 0
            refresh()
        case .clear:
            state.query = ""
            state.selection = 0
            refresh()
        case .up:
            state.selection = max(0, state.selection - 1)
        case .down:
            state.selection = min(max(0, state.rowCount - 1), state.selection + 1)
        case .tab:
            if let completed = state.completion() {
                state.query = completed
                refresh()
            }
        case .enter:
            do {
                try act()
            } catch let refusal as ReplicaError {
                // A list this account may only view (or that is gone, or archived): said, nothing changed.
                switch refusal {
                case .readOnly, .noLongerMember, .archived: state.message = "Not changed: \(refusal)"
                default: throw refusal
                }
            }
        case .scope:
            let all = scopes()
            let at = all.firstIndex(of: state.scope) ?? 0
            state.scope = all[(at + 1) % all.count]
            state.selection = 0
            state.message = "Showing \(state.scope.label)"
            refresh()
        case .undo:
            do {
                if let undone = try replica.undo(in: list.id) {
                    live?.changed()
                    state.message =
                        "Undid: " + SyncCommands.describe(undone.writes, replica: replica).joined(separator: "; ")
                } else {
                    state.message = "Nothing to undo"
                }
            } catch ReplicaError.cannotUndo(let why) {
                state.message = "Cannot undo: \(why)"
            }
            try reload()
        }
        return true
    }

    /// Enter: toggle the selected item, or take the offer; on the "did you mean?" row, add the
    /// item meant (it comes back, or is already on the list), as the web client's button does.
    func act() throws {
        switch state.row(state.selection) {
        case .match(let match) where state.offerFirst && state.isMeant(match):
            let added = try replica.add([match.item.name], to: list.id)
            live?.changed()
            state.message = Phrases.added(added).joined(separator: "; ")
            state.query = ""
            state.selection = 0
            try reload()
        case .match(let match):
            if match.isExact && !match.item.isChecked && state.selection == 0 && !state.query.isEmpty {
                state.message = "\(match.item.name) is already on the list"
                return
            }
            let updated = try replica.toggle(match.item.id, in: list.id)
            live?.changed()
            state.message = updated.isChecked ? "Checked \(updated.name)" : "Unchecked \(updated.name)"
            try reload()
        case .suggestion(let item):
            try add(item.name, message: "again")
        case .catalogue(let name):
            try add(name, message: nil)
        case .due(let name):
            try add(name, message: "(due)")
        case .offer(let offer):
            // Commas, semicolons and newlines separate items, quantities are parsed: as `basket add`.
            let entries = try entries(offer)
            guard !entries.isEmpty else { return }
            let all = try replica.items(in: list.id, filter: .all)
            let added = try replica.add(ItemCommands.newItems(entries, context, list, all), to: list.id)
            live?.changed()
            state.message = Phrases.added(added).joined(separator: "; ")
            state.query = ""
            state.selection = 0
            try reload()
        case nil:
            return
        }
    }

    /// Adds a suggested name and clears the query.
    func add(_ name: String, message: String?) throws {
        let all = try replica.items(in: list.id, filter: .all)
        let added = try replica.add(ItemCommands.newItems([Entry(name: name)], context, list, all), to: list.id)
        live?.changed()
        state.message = "Added \(added.first?.item.name ?? name)" + (message.map { " " + $0 } ?? "")
        state.query = ""
        state.selection = 0
        try reload()
    }

    /// The list as a shop walk: items to buy by aisle (with a heading per aisle, when any item
    /// has a category), then the checked ones.
    func groupByAisle() {
        let matches = state.result.matches
        let toBuy = matches.filter { !$0.item.isChecked }
        guard toBuy.contains(where: { $0.item.category != nil }) else { return }
        let byID = Dictionary(toBuy.map { ($0.item.id, $0) }) { first, _ in first }
        var ordered: [SearchMatch] = []
        // On a trip to a shop: its order, each item in its aisle there, the items marked for other
        // shops left out.
        var items = toBuy.map(\.item)
        var aisles = list.aisles
        if let shop {
            items = ShopCommands.view(items, at: shop, shops: shops, allShops: false).items
            aisles = shop.aisles(listAisles: list.aisles)
        }
        for group in AisleGroup.grouping(items, aisles: aisles) {
            state.headings[ordered.count] = group.category ?? (shop == nil ? "(no category)" : "(unknown aisle)")
            ordered += group.items.compactMap { byID[$0.id] }
        }
        let checked = matches.filter(\.item.isChecked)
        if !checked.isEmpty { state.headings[ordered.count] = "checked" }
        state.result.matches = ordered + checked
    }

    /// The scopes Ctrl-S goes through: all, to buy, checked, then each category of the list.
    func scopes() -> [InteractiveState.Scope] {
        let items = (try? replica.items(in: list.id)) ?? []
        let categories = AisleGroup.grouping(items, aisles: list.aisles).compactMap(\.category)
        return [.all, .toBuy, .checked] + categories.map { .category($0) }
    }

    func draw() {
        let (columns, rows) = Terminal.size()
        var lines: [String] = []
        lines.append(bold(header(columns)))
        let scope = "scope: \(state.scope.label) (^S)"
        let scopeWidth = DisplayWidth.columns(of: scope)
        if columns - 2 > scopeWidth + 10 {
            let query = DisplayWidth.truncateHead(state.query, to: columns - 2 - scopeWidth - 2)
            let gap = columns - 2 - DisplayWidth.columns(of: query) - scopeWidth
            lines.append("> " + query + String(repeating: " ", count: max(1, gap)) + scope)
        } else {
            lines.append("> " + DisplayWidth.truncateHead(state.query, to: columns - 2))
        }
        let available = max(1, rows - 4)
        // Display rows: headings (not selectable) before the matches they head.
        var display: [(text: String, row: Int?)] = []
        var matchIndex = 0
        for (i, row) in state.rows.enumerated() {
            switch row {
            case .match(let match):
                if let heading = state.headings[matchIndex] { display.append((heading, nil)) }
                let line = ItemCommands.line(for: match.item, showingCategory: state.headings.isEmpty)
                // Among the offers, the closest item: what the person may have meant.
                display.append((state.offerFirst && state.isMeant(match) ? line + "  (did you mean?)" : line, i))
                matchIndex += 1
            case .suggestion(let item): display.append(("\u{21BA} \(item.name)  (had it before)", i))
            case .offer(let offer): display.append((createRow(offer), i))
            case .catalogue(let name): display.append(("+ \(name)  (suggested)", i))
            case .due(let name): display.append(("+ \(name)  (due)", i))
            }
        }
        let selected = display.firstIndex { $0.row == state.selection } ?? 0
        // When not everything fits, the last line says how many rows are below the fold.
        let room = display.count > available ? max(1, available - 1) : available
        let start = max(0, min(selected - room + 1, display.count - room))
        let below = display.count - start - room
        for entry in display.dropFirst(start).prefix(room) {
            guard let row = entry.row else {
                lines.append(bold(truncate(entry.text, columns)))
                continue
            }
            let line = truncate(entry.text, columns - 2)
            if row == state.selection {
                lines.append(color ? "\u{1B}[7m> \(line)\u{1B}[0m" : "> \(line)")
            } else {
                lines.append("  \(line)")
            }
        }
        if below > 0 { lines.append("  ↓ \(below) more") }
        if display.isEmpty { lines.append("  (nothing on the list yet: type a name and press Enter)") }
        while lines.count < rows - 1 { lines.append("") }
        lines.append(bottomLine(columns))
        var screen = "\u{1B}[H\u{1B}[2J"
        screen += lines.prefix(rows).joined(separator: "\r\n")
        Terminal.write(screen)
    }

    /// The first line: the list's title and the keys; a long title is cut, never "Esc quit".
    func header(_ columns: Int) -> String {
        let helps = [
            "Search or add items (↑↓ move, Enter toggle/add, Tab complete, Esc quit)",
            "Search or add items (Enter toggle/add, Tab complete, Esc quit)", "Search or add items (Esc quit)",
            "(Esc quit)",
        ]
        let title = Printable.escaped(list.title)
        for help in helps {
            let room = columns - DisplayWidth.columns(of: help) - 3
            if room >= min(12, DisplayWidth.columns(of: title)) {
                return truncate(title, room) + " — " + help
            }
        }
        return truncate(title, columns)
    }

    func bold(_ text: String) -> String { color ? "\u{1B}[1m\(text)\u{1B}[0m" : text }

    func truncate(_ text: String, _ width: Int) -> String { DisplayWidth.truncate(text, to: width) }

    /// What Enter on the create row adds: each piece of `text` with its quantity (a German spelling
    /// without umlauts taken as the item it spells).
    func entries(_ text: String) throws -> [Entry] {
        EntryParser.resolvingSpellings(EntryParser.parseAll(text, existingKeys: keys), names: names)
    }

    /// The create row: how many items Enter adds, and which ("+ Add 2 items: ‹Tea›, ‹Coffee› (2)").
    func createRow(_ offer: String) -> String {
        let entries = (try? entries(offer)) ?? []
        let named = entries.map { "\u{2039}\($0.name)\u{203A}" + ($0.quantity.map { " (\($0))" } ?? "") }
        if entries.count > 1 { return "+ Add \(entries.count) items: " + named.joined(separator: ", ") }
        return "+ Add " + (named.first ?? "\u{2039}\(offer)\u{203A}")
    }

    /// The last line: the message on the left, where the list stands with the server on the right.
    func bottomLine(_ columns: Int) -> String {
        let status = syncLine
        let statusWidth = DisplayWidth.columns(of: status)
        guard statusWidth + 2 < columns else { return truncate(state.message, columns) }
        let message = truncate(state.message, columns - statusWidth - 2)
        let gap = columns - DisplayWidth.columns(of: message) - statusWidth
        return message + String(repeating: " ", count: max(1, gap)) + status
    }

    /// The sync status as the status line shows it.
    var syncLine: String {
        guard let live else { return "this device only" }
        return Phrases.status(live.status)
    }

    /// With a server configured: keeps the list in sync in the background (each change sent
    /// within a second; other devices' changes flag a reload), unless auto-sync is off.
    func startSyncing() {
        guard let (transport, config) = try? context.transport() else { return }
        let engine = SyncCommands.engine(context, replica: replica, transport: transport)
        let (remote, status) = (remoteChanged, statusChanged)
        let sends = config.autoSync != false && !context.arguments.has(.noSync)
        let (replica, listID) = (replica, list.id)
        let hold = LiveSync.Hold { (try? replica.isHeld(listID)) ?? false }
        let live = LiveSync(engine: engine, list: list.id, sends: sends, hold: hold) { event in
            switch event {
            case .received(let report): if report.changedItems > 0 || report.roleChanged { remote.raise() }
            case .status: status.raise()
            }
        }
        self.live = live
        live.start()
    }
}

/// The index a background build hands to the screen: only the build of the last reload counts.
final class IndexSlot: Sendable {
    private let state = Mutex<(generation: Int, index: SearchIndex?)>((0, nil))

    /// A new build begins: earlier ones are no longer wanted. Returns its generation.
    func next() -> Int {
        state.withLock { state in
            state.generation += 1
            state.index = nil
            return state.generation
        }
    }

    /// A build of `generation` is done (dropped when a later one began).
    func offer(_ index: SearchIndex, generation: Int) {
        state.withLock { state in
            if state.generation == generation { state.index = index }
        }
    }

    /// The finished index, once.
    func take() -> SearchIndex? {
        state.withLock { state in
            defer { state.index = nil }
            return state.index
        }
    }
}

/// A flag one thread raises and another takes down.
final class ChangeFlag: Sendable {
    private let value = Mutex(false)

    func raise() { value.withLock { $0 = true } }

    /// Whether it was raised since the last call.
    func take() -> Bool {
        value.withLock { raised in
            defer { raised = false }
            return raised
        }
    }
}
