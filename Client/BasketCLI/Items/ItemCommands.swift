import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// The items of a list: add, check, uncheck, toggle, rm, clear, rename, set, ls, undo (search
/// and history in the files beside this one).
enum ItemCommands {
    static func add(_ context: Context) throws {
        if context.arguments.has(.due) { return try ShopCommands.addDue(context) }
        var names: [String] = []
        if let source = context.arguments.value(.from) {
            guard context.arguments.positionals.isEmpty else {
                throw UsageError(
                    message: "give names as arguments or with --from, not both", usage: "basket add --from FILE|-")
            }
            let data = try context.readInput(source)
            guard let text = String(validating: data, as: UTF8.self) else {
                throw CommandError(
                    message: "\(source == "-" ? "stdin" : source) is not valid UTF-8; nothing was added",
                    code: "invalid_name")
            }
            // "\r\n" is one Character in Swift; isNewline covers it, "\n" and "\r".
            names = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).map(String.init)
                .filter { !$0.allSatisfy(\.isWhitespace) }
        } else if context.arguments.positionals == ["-"] {
            // `basket add -`: a recipe or a chat message on stdin, one item per line, each parsed.
            guard let text = String(validating: try context.readInput("-"), as: UTF8.self) else {
                throw CommandError(message: "stdin is not valid UTF-8; nothing was added", code: "invalid_name")
            }
            names = EntryParser.pieces(text)
        } else {
            let joined = context.arguments.positionals.joined(separator: " ")
            guard !joined.isEmpty else {
                throw UsageError(message: "name at least one item", usage: "basket add NAME[, NAME…]")
            }
            // Commas, semicolons and newlines separate items; empty pieces are skipped ("milk, bread,"
            // adds two items); no piece at all is refused below.
            names = EntryParser.split(joined)
        }
        guard !names.isEmpty else {
            throw CommandError(message: "\(ItemName.Problem.empty); nothing was added", code: "invalid_name")
        }
        let given = try context.arguments.value(.category).map { given in
            let trimmed = given.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else {
                throw UsageError(message: "--category needs a name", usage: "basket add NAME[, NAME…] [--category C]")
            }
            return trimmed
        }
        // A note for every item ("for: lasagne"), after any typed with it.
        let note = context.arguments.value(.addNote).map { $0.trimmingCharacters(in: .whitespaces) }
            .flatMap { $0.isEmpty ? nil : $0 }
        let list = try context.requireList()
        let replica = try context.replica()
        // The list, read once: its aisles, its keys and names.
        let all = try replica.items(in: list.id, filter: .all)
        // Quantities ("2 milk", "500 g flour") go to the quantity register; lines from --from stay verbatim.
        var entries: [Replica.NewItem]
        if context.arguments.value(.from) != nil {
            entries = newItems(names.map { Entry(name: $0, category: given) }, context, list, all)
        } else {
            entries = parsedItems(names, category: given, context, list, all)
        }
        if let note {
            for i in entries.indices { entries[i].note = entries[i].note.map { "\($0); \(note)" } ?? note }
        }
        // The replica checks every name, quantity and category (once, for any caller); what it
        // refuses is said of the entry it is about.
        let results: [AddResult]
        do {
            results = try replica.add(entries, to: list.id)
        } catch ReplicaError.invalidName(let problem) {
            throw CommandError(message: refused(entries, problem) + "; nothing was added", code: "invalid_name")
        }
        if context.json {
            try context.console.json(
                Output.AddedItems(
                    list: list.id.description,
                    added: results.map {
                        Output.Added(
                            item: $0.item, outcome: $0.outcome.rawValue, quantityChanged: $0.quantityChanged)
                    }))
            return
        }
        // One line per kind of outcome, as the web client says them (AddResult.phrases).
        for phrase in Phrases.added(results) { context.console.print(Printable.escaped(phrase)) }
    }

    /// What the typed `names` add to `list` (whose items are `all`): each parsed ("2 milk"), "kaese"
    /// meaning Käse when it is on the list (the German spelling without umlauts), in `category`
    /// when it names none. `add` and the filing of an inbox (InboxCommands) read text alike.
    static func parsedItems(
        _ names: [String], category given: String? = nil, _ context: Context, _ list: ListInfo, _ all: [Item]
    ) -> [Replica.NewItem] {
        let keys = Set(all.map(\.key))
        return newItems(
            EntryParser.resolvingSpellings(
                names.map { EntryParser.parse($0, existingKeys: keys) }, names: all.map(\.name)
            ).map { entry in
                var entry = entry
                entry.category = entry.category ?? given
                return entry
            }, context, list, all)
    }

    /// What `entries` add to `list` (whose items are `all`), each in its aisle: an aisle typed
    /// after it ("milk @dairy") means the list's of that name or the catalogue's ("dairy" → "Dairy
    /// & eggs"); an item without one takes the catalogue's. Aisles are the list's, named in its
    /// language whatever this device's (a name in either is looked up).
    static func newItems(_ entries: [Entry], _ context: Context, _ list: ListInfo, _ all: [Item]) -> [Replica.NewItem] {
        let known = list.aisles + all.compactMap(\.category)
        let language = context.aisleLanguage(of: list, categories: known)
        return entries.map { entry in
            Replica.NewItem(
                name: entry.name, quantity: entry.quantity,
                category: entry.category.map { Catalogue.aisle(named: $0, language: language, known: known) }
                    ?? Catalogue.grocery(entry.name, in: [language, context.language])?.aisle,
                note: entry.note, typed: entry.typed)
        }
    }

    /// Which of `entries` the replica refused, and why: "item 2: an item name cannot be empty",
    /// "category 'x…': a value can have at most 256 bytes…" (the first entry with a value refused).
    static func refused(_ entries: [Replica.NewItem], _ problem: ItemName.Problem) -> String {
        for (index, entry) in entries.enumerated() {
            let item = entries.count > 1 ? "item \(index + 1): " : ""
            if (try? ItemName.clean(entry.name)) == nil { return item + "\(problem)" }
            if let quantity = entry.quantity, (try? ItemName.clean(quantity, for: .quantity)) == nil {
                return item + "quantity '\(quantity)': \(problem)"
            }
            if let category = entry.category, (try? ItemName.clean(category, for: .category)) == nil {
                return "category '\(category)': \(problem)"
            }
        }
        return "\(problem)"
    }

    enum CheckAction { case check, uncheck, toggle }

    static func setChecked(_ context: Context, _ action: CheckAction) throws {
        let (list, items) = try resolveItems(context)
        let replica = try context.replica()
        let ids = items.map(\.id)
        let updated: [Item]
        switch action {
        case .check: updated = try replica.check(ids, in: list.id)
        case .uncheck: updated = try replica.uncheck(ids, in: list.id)
        case .toggle: updated = try replica.toggle(ids, in: list.id)
        }
        if context.json { return try context.console.json(Output.Items(items: updated)) }
        for (verb, state) in [("Checked", true), ("Unchecked", false)] {
            let names = updated.filter { $0.isChecked == state }.map(\.name)
            if !names.isEmpty { context.console.print("\(verb) " + names.joined(separator: ", ")) }
        }
    }

    static func remove(_ context: Context) throws {
        let (list, items) = try resolveItems(context)
        let removed = try context.replica().remove(items.map(\.id), in: list.id)
        if context.json { return try context.console.json(Output.Items(items: removed)) }
        context.console.print("Removed " + removed.map(\.name).joined(separator: ", "))
    }

    /// The items a command's arguments name, all found or none (then nothing is changed): the
    /// whole text when it is an item's exact name ("oat milk"); else each piece between commas
    /// ("Watchitem2, Watchitem3"), or each argument ("milk bread", "'oat milk' bread"), when
    /// each is one item's exact name; else the whole text as one search, else each piece's or
    /// argument's unique hit. Exact names come first, so two names never match four items.
    static func resolveItems(_ context: Context) throws -> (ListInfo, [Item]) {
        let arguments = context.arguments.positionals
        if arguments == ["-"] {
            // One name per line from a pipe (`basket ls --plain | fzf | basket check -`): each
            // resolved as one ITEM argument, all found or nothing changed.
            let names = try namesFromInput(context)
            guard !names.isEmpty else {
                throw UsageError(message: "no names on standard input", usage: "basket COMMAND -")
            }
            guard let list = try context.list(create: false) else {
                throw CommandError(message: "no item '\(names[0])': there are no lists yet", code: "no_such_item")
            }
            return (list, unique(try names.map { try resolveItem(context, name: $0, includeRemoved: false).1 }))
        }
        let whole = arguments.joined(separator: " ")
        guard !whole.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw UsageError(message: "name an item", usage: "basket COMMAND ITEM")
        }
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no item '\(whole)': there are no lists yet", code: "no_such_item")
        }
        let items = try context.replica().items(in: list.id, filter: .onList)
        let byKey = Dictionary(items.map { (ItemKey.normalize($0.name), $0) }) { a, _ in a }
        func exact(_ name: String) -> Item? { byKey[ItemKey.normalize(name)] }
        if let item = exact(whole) { return (list, [item]) }
        let pieces =
            whole.contains(",")
            ? whole.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : arguments
        if pieces.count > 1 {
            let exacts = pieces.compactMap(exact)
            if exacts.count == pieces.count { return (list, unique(exacts)) }
        }
        if !whole.contains(","), case .found(let item) = Search.resolve(whole, in: items) { return (list, [item]) }
        if pieces.count > 1 {
            return (list, unique(try pieces.map { try resolveItem(context, name: $0, includeRemoved: false).1 }))
        }
        return (list, [try resolveItem(context, name: whole, includeRemoved: false).1])
    }

    /// The most standard input may hold for `check -` and its kind: a list's names are a few
    /// kilobytes; more is not a list of names.
    static let inputLimit = 1 << 20

    /// The names on standard input, one per line, blank lines left out.
    static func namesFromInput(_ context: Context) throws -> [String] {
        var data = Data()
        while data.count <= inputLimit {
            let chunk = FileHandle.standardInput.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        guard data.count <= inputLimit else {
            throw UsageError(
                message: "standard input holds more than 1 MiB: not a list of names", usage: "basket COMMAND -")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "standard input is not UTF-8 text", usage: "basket COMMAND -")
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// `ls --plain`: each name on a line of its own, nothing else (a control character is
    /// escaped, as everywhere the CLI prints a name).
    static func printNames(_ context: Context, _ items: [Item]) {
        for item in items { context.console.print(Printable.escaped(item.name)) }
    }

    /// `items` without repeats, in their order.
    static func unique(_ items: [Item]) -> [Item] {
        var seen: Set<ItemID> = []
        return items.filter { seen.insert($0.id).inserted }
    }

    /// `basket clear`: the checked items leave the list in one step (`basket undo` brings them back).
    static func clear(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(message: "clear takes no argument", usage: "basket clear")
        }
        let list = try context.requireList()
        let cleared = try context.replica().removeChecked(in: list.id)
        if context.json { return try context.console.json(Output.Items(items: cleared)) }
        context.console.print(
            cleared.isEmpty
                ? "Nothing checked to clear"
                : "Cleared \(cleared.count) checked item\(cleared.count == 1 ? "" : "s"): "
                    + cleared.map { Printable.escaped($0.name) }.joined(separator: ", "))
    }

    static func rename(_ context: Context) throws {
        let positionals = context.arguments.positionals
        let itemName: String
        let newName: String
        if let to = context.arguments.value(.to) {
            itemName = positionals.joined(separator: " ")
            newName = to
        } else if positionals.count == 2 {
            itemName = positionals[0]
            newName = positionals[1]
        } else {
            throw UsageError(message: "name the item and its new name", usage: "basket rename ITEM NEW-NAME")
        }
        let (list, item) = try resolveItem(context, name: itemName, includeRemoved: false)
        let renamed = try context.replica().rename(item.id, to: newName, in: list.id)
        if context.json { return try context.console.json(renamed) }
        context.console.print("Renamed \(item.name) to \(renamed.name)")
    }

    static func set(_ context: Context) throws {
        // One option per settable field, named as the field (`--quantity`, `--note`, `--category`).
        let changes = Field.settableItemFields.compactMap { field in
            context.arguments.value(.field(field)).map { (field, $0) }
        }
        let shopping = [Option.forShop, .aisle].contains { context.arguments.value($0) != nil }
        guard !changes.isEmpty || shopping else {
            throw UsageError(
                message: "give --quantity, --note, --category, --shop or --aisle",
                usage: "basket set ITEM [--quantity Q] [--note TEXT] [--category C] [--shop SHOP,…] [--aisle AISLE]")
        }
        let (list, item) = try resolveItem(context, includeRemoved: false)
        var updated = shopping ? try ShopCommands.setShops(context, list: list, item: item) : item
        for (field, value) in changes {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            updated = try context.replica().set(field, to: trimmed.isEmpty ? nil : value, of: item.id, in: list.id)
        }
        if context.json { return try context.console.json(updated) }
        context.console.print("Updated \(updated.name)")
    }

    static func list(_ context: Context) throws {
        let args = context.arguments
        let chosen = [Option.all, .checked, .unchecked].filter(args.has).map(\.name)
        guard chosen.count <= 1 else {
            throw UsageError(
                message: "\(chosen.joined(separator: " and ")) cannot be combined",
                usage: "basket ls [--unchecked | --checked | --all]")
        }
        guard args.positionals.isEmpty else {
            throw UsageError(
                message: "unexpected argument '\(args.positionals[0])'",
                usage: "basket ls [--unchecked | --checked | --all]")
        }
        let usage =
            "basket ls [--unchecked | --checked | --all] [--flat | --plain | --format text|markdown] [--at TIME]"
        if args.has(.plain) && (context.json || args.has(.flat)) {
            throw UsageError(
                message: "--plain cannot be combined with \(context.json ? "--json" : "--flat")", usage: usage)
        }
        let format = try args.value(.format).map { name in
            guard let format = ListText.Format(rawValue: name.lowercased()) else {
                throw UsageError(message: "--format is 'text' or 'markdown', not '\(name)'", usage: usage)
            }
            let others = [Option.plain, .flat, .at, .all, .checked, .unchecked].filter(args.has).map(\.name)
            guard others.isEmpty, !context.json else {
                throw UsageError(
                    message:
                        "--format cannot be combined with \((others + (context.json ? ["--json"] : [])).joined(separator: " and "))",
                    usage: usage)
            }
            return format
        }
        let filter: ItemFilter =
            args.has(.all) ? .all : args.has(.checked) ? .checked : args.has(.unchecked) ? .unchecked : .onList
        if let time = args.value(.at) { return try listAt(context, time, filter: filter) }
        guard let list = try context.list(create: false) else {
            if args.has(.plain) { return }
            if context.json { return context.console.raw(ListingJSON.bytes(list: nil, items: [])) }
            context.console.print("No lists yet: 'basket add NAME' starts one.")
            return
        }
        // On the way to the shop: the list as the server has it, or said to be older.
        let freshness = SyncCommands.refresh(context, list.id)
        if case .current = freshness {
            _ = ShoppingCommands.refresh(context, list.id, within: SyncCommands.refreshSeconds)
        }
        let shown = (try context.replica().lists()).first { $0.id == list.id } ?? list
        var items = try context.replica().items(in: list.id, filter: filter)
        // At a shop (--at-shop, or a trip): its order, the items for other shops left out.
        let shop = try ShopCommands.currentShop(context, list.id)
        var aisles = shown.aisles
        var hidden = 0
        if let shop {
            (items, hidden) = ShopCommands.view(
                items, at: shop, shops: try context.replica().shops(in: list.id), allShops: args.has(.allShops))
            aisles = shop.aisles(listAisles: shown.aisles)
        }
        if context.json {
            return context.console.raw(ListingJSON.bytes(list: ListJSON(shown), items: items, stale: freshness.json))
        }
        if let format {
            // For a chat or a note: the text only; how old the copy is, on stderr.
            if let note = freshness.note { context.console.error(note) }
            return context.console.raw(
                Array(ListText.render(title: shown.title, items: items, aisles: aisles, format: format).utf8))
        }
        if args.has(.plain) {
            // For pipes: names only, as `check -` reads them back; how old the copy is, on stderr.
            if let note = freshness.note { context.console.error(note) }
            return printNames(context, items)
        }
        context.console.print(
            "\(shown.title) (\(shown.uncheckedCount) to buy, \(shown.itemCount - shown.uncheckedCount) checked)"
                + (shown.isArchived ? ", archived" : ""))
        if let note = freshness.note { context.console.print(note) }
        if let shop {
            context.console.print(
                "At \(Printable.escaped(shop.name)): its aisle order"
                    + (hidden > 0
                        ? "; \(Phrases.items(hidden)) for other shops hidden (--all-shops shows them)" : ""))
        }
        for line in ShoppingCommands.stored(context, list.id) { context.console.print(line) }
        // What other devices did: writes of this one they replaced (told once), and what is new
        // since the list was last shown here (then no longer new).
        for line in NewsLines.lost(context, within: SyncCommands.refreshSeconds) { context.console.print(line) }
        let news = NewsLines.news(context, list.id, items: items, within: SyncCommands.refreshSeconds)
        for line in news.lines { context.console.print(line) }
        let marked = { (item: Item, text: String) in news.marks[item.id].map { "\(text)  · \($0)" } ?? text }
        let toBuy = items.filter { !$0.isChecked && !$0.isDeleted }
        // A person at a terminal sees the catalogue's icon before a name; a pipe gets the names.
        let language = Catalogue.language(environment: context.environment)
        let icon = { (item: Item) in
            context.console.isTerminal ? Catalogue.icon(of: item.name, language: language) : nil
        }
        // Items to buy in the order of the shop's aisles, when any has a category.
        guard !args.has(.flat), toBuy.contains(where: { $0.category != nil }) else {
            for item in items { context.console.print(marked(item, line(for: item, icon: icon(item)))) }
            return
        }
        for group in AisleGroup.grouping(toBuy, aisles: aisles) {
            context.console.print(
                group.category.map { Printable.escaped($0) } ?? (shop == nil ? "(no category)" : "(unknown aisle)"))
            for item in group.items {
                context.console.print(marked(item, "  " + line(for: item, showingCategory: false, icon: icon(item))))
            }
        }
        let rest = items.filter { $0.isChecked || $0.isDeleted }
        if !rest.isEmpty {
            context.console.print("checked")
            for item in rest { context.console.print(marked(item, "  " + line(for: item, icon: icon(item)))) }
        }
    }

    /// An item's line: its box, quantity, `icon` (the catalogue's, on a terminal), name, category
    /// and note.
    static func line(for item: Item, showingCategory: Bool = true, icon: String? = nil) -> String {
        var text = item.isDeleted ? "[-] " : item.isChecked ? "[x] " : "[ ] "
        if let icon { text += "\(icon) " }
        if let quantity = item.quantity { text += "\(quantity) " }
        text += item.name
        if showingCategory, let category = item.category { text += "  #\(category)" }
        if let note = item.note { text += "  (\(note))" }
        if item.isDeleted { text += "  (removed)" }
        return text
    }

    /// The columns a value takes in `basket history` on a terminal (a longer one is wrapped in
    /// them; a pipe or a file gets it whole on one line, as --json does).
    static let historyValueColumns = 24

    /// Who wrote with a replica id: this device, a member of the list (the server says whose
    /// devices wrote with which ids, `GET /v1/lists/{id}/members`), or another device.
    struct Authors {
        let own: ReplicaID?
        let me: String?
        let byReplica: [ReplicaID: String]

        init(_ context: Context, list: ListID) {
            own = try? context.replica().replicaID
            var known: [ReplicaID: String] = [:]
            var me: String?
            // Asked of the server for two seconds at most; offline, writes are told by device.
            if (try? context.replica().syncState(of: list).isRegistered) == true,
                let (transport, config) = try? context.transport(answerTimeout: 2)
            {
                me = config.account
                let members = (try? runBlocking { try await transport.members(of: list) }) ?? []
                for member in members {
                    for hex in member.replicas ?? [] {
                        if let id = ReplicaID(hex: hex) { known[id] = member.account }
                    }
                }
            }
            self.me = me
            byReplica = known
        }

        func account(of replica: ReplicaID) -> String? {
            replica == own ? me ?? byReplica[replica] : byReplica[replica]
        }

        func describe(_ replica: ReplicaID) -> String {
            if replica == own { return "you, this device" }
            guard let account = byReplica[replica] else { return "another device (\(replica.description.prefix(8)))" }
            return account == me ? "you, another device" : account
        }
    }

    /// The item named by the command's positional arguments (or `name`).
    static func resolveItem(_ context: Context, name: String? = nil, includeRemoved: Bool) throws -> (ListInfo, Item) {
        let query = name ?? context.arguments.positionals.joined(separator: " ")
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw UsageError(message: "name an item", usage: "basket COMMAND ITEM")
        }
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no item '\(query)': there are no lists yet", code: "no_such_item")
        }
        let items = try context.replica().items(in: list.id, filter: includeRemoved ? .all : .onList)
        switch Search.resolve(query, in: items) {
        case .found(let item): return (list, item)
        case .notFound:
            throw CommandError(message: "no item '\(query)' on \(list.title)", code: "no_such_item")
        case .ambiguous(let candidates):
            let names = candidates.prefix(20).map { "  " + line(for: $0) }.joined(separator: "\n")
            throw CommandError(
                message: "'\(query)' matches \(candidates.count) items; name one exactly:\n\(names)", code: "ambiguous")
        }
    }
}

extension ItemCommands {
    /// `basket undo`: the last command of this device, reversed by new writes; again for the one before.
    static func undo(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(message: "undo takes no argument", usage: "basket undo")
        }
        let replica = try context.replica()
        guard let undone = try replica.undo() else {
            throw CommandError(message: "nothing to undo on this device", code: "nothing_to_undo")
        }
        let lines = SyncCommands.describe(undone.writes, replica: replica)
        if context.json {
            return try context.console.json(Output.Undone(list: undone.list.description, undone: lines))
        }
        let title = context.title(of: undone.list) ?? undone.list.description
        context.console.print("Undid in \(title):")
        for line in lines { context.console.print("  \(line)") }
    }
}
