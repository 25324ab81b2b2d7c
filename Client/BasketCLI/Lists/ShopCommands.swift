import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// `basket shops`, `basket aisles --shop`, `basket usuals`, and what `ls`, `set`, `add --due` and
/// `shopping` do with shops: the list walked in a shop's order, marks, taught aisles, trips.
enum ShopCommands {
    static let shopsUsage = "basket shops [add NAME | rename SHOP NEW-NAME | rm SHOP]"
    static let shopAislesUsage = "basket aisles --shop SHOP [set \"A, B, C\" | clear | pin AISLE… | unpin AISLE…]"
    static let usualsUsage = "basket usuals [dismiss ITEM… | back ITEM…]"

    // MARK: basket shops

    static func shops(_ context: Context) throws {
        let args = context.arguments.positionals
        guard let list = try context.list(create: args.first == "add") else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        switch args.first {
        case nil:
            let shops = try replica.shops(in: list.id)
            if context.json {
                return try context.console.json(
                    Output.Shops(shops: shops.map { Output.ShopJSON($0, listAisles: list.aisles) }))
            }
            if shops.isEmpty {
                context.console.print("No shops for \(list.title): 'basket shops add Lidl' adds one.")
                return
            }
            context.console.print("Shops of \(list.title):")
            let now = try context.wallClock()()
            for shop in shops {
                context.console.print(
                    "  \(Printable.escaped(shop.name))" + (learnedNote(shop, now: now).map { "  (\($0))" } ?? ""))
            }
        case "add" where args.count >= 2:
            let shop = try shopNamed(list) { try replica.addShop(args.dropFirst().joined(separator: " "), to: list.id) }
            if context.json { return try context.console.json(Output.ShopJSON(shop, listAisles: list.aisles)) }
            context.console.print("Added the shop \(Printable.escaped(shop.name)) to \(list.title)")
        case "rename" where args.count == 3:
            let shop = try replica.shop(named: args[1], in: list.id)
            try shopNamed(list) { try replica.renameShop(shop.id, to: args[2], in: list.id) }
            context.console.print("Renamed the shop \(Printable.escaped(shop.name)) to \(Printable.escaped(args[2]))")
        case "rm" where args.count >= 2:
            let shop = try replica.shop(named: args.dropFirst().joined(separator: " "), in: list.id)
            try replica.removeShop(shop.id, in: list.id)
            context.console.print(
                "Removed the shop \(Printable.escaped(shop.name)); items marked for it alone are bought anywhere")
        default:
            throw UsageError(
                message: args.first.map { "unknown or incomplete shops command '\($0)'" } ?? "", usage: shopsUsage)
        }
    }

    /// Runs a write that names a shop, saying its refusals as a shop's: "a shop's name cannot be
    /// empty", "'Lidl' is already a shop of Family".
    static func shopNamed<T>(_ list: ListInfo, _ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch ReplicaError.nameTaken(let existing) {
            throw CommandError(
                message: "'\(Printable.escaped(existing))' is already a shop of \(list.title)", code: "name_taken")
        } catch ReplicaError.invalidName(let problem) {
            throw CommandError(
                message: problem == .empty ? "a shop's name cannot be empty" : "a shop's name: \(problem)",
                code: "invalid_name")
        }
    }

    // MARK: basket aisles --shop

    static func aisles(_ context: Context, shopName: String) throws {
        let args = context.arguments.positionals
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        let shop = try replica.shop(named: shopName, in: list.id)
        let names = EntryParser.split(args.dropFirst().joined(separator: " "))
        switch args.first {
        case nil: break
        case "set" where !names.isEmpty: try replica.setShopOrder(names, of: shop.id, in: list.id)
        case "clear" where args.count == 1: try replica.setShopOrder([], of: shop.id, in: list.id)
        case "pin" where !names.isEmpty:
            try replica.setPinned(Array(Set(shop.pinned + names)).sorted(), of: shop.id, in: list.id)
        case "unpin" where !names.isEmpty:
            let keys = Set(names.map(ItemKey.normalize))
            try replica.setPinned(
                shop.pinned.filter { !keys.contains(ItemKey.normalize($0)) }, of: shop.id, in: list.id)
        default:
            throw UsageError(
                message: "aisles --shop takes 'set' with the aisles, 'clear', 'pin' or 'unpin'", usage: shopAislesUsage)
        }
        let now = try context.wallClock()()
        let current = try replica.shops(in: list.id).first { $0.id == shop.id } ?? shop
        let aisles = current.aisles(listAisles: list.aisles)
        if context.json { return try context.console.json(Output.ShopJSON(current, listAisles: list.aisles)) }
        let pins = Set(current.pinned.map(ItemKey.normalize))
        context.console.print(
            aisles.isEmpty
                ? "No aisle order for \(Printable.escaped(current.name)): 'basket aisles --shop \(Printable.escaped(current.name)) set \"produce, dairy\"' sets one."
                : "Aisles of \(Printable.escaped(current.name)): "
                    + aisles.map { Printable.escaped($0) + (pins.contains(ItemKey.normalize($0)) ? " (pinned)" : "") }
                    .joined(separator: ", "))
        context.console.print(
            learnedNote(current, now: now).map { "Learned from \($0.dropFirst("learned from ".count))." }
                ?? "Not learned yet: a trip ('basket shopping start --at \(Printable.escaped(current.name))') teaches it."
        )
    }

    /// "learned from 3 trips, last Saturday"; nil before the first trip.
    static func learnedNote(_ shop: Shop, now: UInt64) -> String? {
        guard let learned = shop.learned, learned.trips > 0 else { return nil }
        return "learned from \(learned.trips) trip\(learned.trips == 1 ? "" : "s"), last \(day(learned.last, now: now))"
    }

    // MARK: A day in words

    /// A moment as a day near `now`: "today", "yesterday", "Tuesday" (this week), "Nov 12".
    static func day(_ ms: Int64, now: UInt64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let today = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(now) / 1000))
        let days = calendar.dateComponents([.day], from: today, to: calendar.startOfDay(for: date)).day ?? 0
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        switch days {
        case 0: return "today"
        case -1: return "yesterday"
        case 1: return "tomorrow"
        case -6 ... -2, 2...6:
            formatter.dateFormat = "EEEE"
            return formatter.string(from: date)
        default:
            formatter.dateFormat = "MMM d"
            return formatter.string(from: date)
        }
    }

    /// "milk — every 6 days, due since Tuesday", "bread — every week, due Thursday".
    static func describe(_ usual: Usual, now: UInt64) -> String {
        let due =
            usual.isDue(at: now)
            ? (usual.pattern.due > Int64(now) - 86_400_000 && day(usual.pattern.due, now: now) == "today"
                ? "due today" : "due since \(day(usual.pattern.due, now: now))")
            : "due \(day(usual.pattern.due, now: now))"
        return "\(Printable.escaped(usual.item.name)) — \(Phrases.every(usual.pattern.interval)), \(due)"
            + (usual.isOnList ? " (on the list)" : "")
    }

    // MARK: basket usuals

    static func usuals(_ context: Context) throws {
        let args = context.arguments.positionals
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        switch args.first {
        case nil:
            let now = try context.wallClock()()
            let usuals = try replica.usuals(in: list.id)
            if context.json {
                return try context.console.json(
                    Output.Usuals(
                        list: list.id.description,
                        usuals: usuals.map { usual in
                            Output.Usuals.Entry(
                                id: usual.item.id.description, name: usual.item.name,
                                purchases: usual.pattern.purchases,
                                intervalDays: Double(usual.pattern.interval) / 86_400_000,
                                last: ItemCommands.isoTime(UInt64(usual.pattern.last)),
                                due: ItemCommands.isoTime(UInt64(max(0, usual.pattern.due))),
                                isDue: usual.isDue(at: now), onList: usual.isOnList)
                        }))
            }
            if usuals.isEmpty {
                context.console.print(
                    "No usuals on \(list.title) yet: an item checked off on three trips becomes one.")
                return
            }
            context.console.print("Usuals of \(list.title) (due first):")
            for usual in usuals { context.console.print("  " + describe(usual, now: now)) }
        case "dismiss", "back":
            guard args.count >= 2 else {
                throw UsageError(message: "name the items", usage: usualsUsage)
            }
            let back = args[0] == "back"
            var ids: [ItemID] = []
            var names: [String] = []
            for name in EntryParser.split(args.dropFirst().joined(separator: " ")) {
                let (_, item) = try ItemCommands.resolveItem(context, name: name, includeRemoved: true)
                ids.append(item.id)
                names.append(item.name)
            }
            try replica.dismissUsuals(ids, in: list.id, back: back)
            context.console.print(
                back
                    ? "\(names.map { Printable.escaped($0) }.joined(separator: ", ")): usuals again, from every purchase"
                    : "\(names.map { Printable.escaped($0) }.joined(separator: ", ")): not usuals anymore (bought three times more, they are again)"
            )
        default:
            throw UsageError(message: "unknown usuals command '\(args[0])'", usage: usualsUsage)
        }
    }

    /// `basket add --due`: every due usual not on the list, added.
    static func addDue(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty, context.arguments.value(.from) == nil else {
            throw UsageError(message: "--due adds the due usuals: name no item with it", usage: "basket add --due")
        }
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        let now = try context.wallClock()()
        let due = try replica.usuals(in: list.id).filter { $0.isDue(at: now) && !$0.isOnList }
        let results = due.isEmpty ? [] : try replica.add(due.map { Replica.NewItem(name: $0.item.name) }, to: list.id)
        if context.json {
            return try context.console.json(
                Output.AddedItems(
                    list: list.id.description,
                    added: results.map {
                        Output.Added(item: $0.item, outcome: $0.outcome.rawValue, quantityChanged: $0.quantityChanged)
                    }))
        }
        context.console.print(
            due.isEmpty
                ? "No usual is due that is not on \(list.title) ('basket usuals' lists them)."
                : "Added the due usuals: " + due.map { describe($0, now: now) }.joined(separator: "; "))
    }

    // MARK: At a shop

    /// The shop the list is walked at: `--at-shop`, else this device's trip; nil for neither.
    static func currentShop(_ context: Context, _ list: ListID) throws -> Shop? {
        let replica = try context.replica()
        if let name = context.arguments.value(.atShop) { return try replica.shop(named: name, in: list) }
        guard let trip = try replica.trip(of: list) else { return nil }
        return try replica.shops(in: list).first { $0.id == trip.shop }
    }

    /// What `items` show at `shop`: those marked for other shops left out (unless `allShops`),
    /// each item's category its aisle there; and how many were left out.
    static func view(_ items: [Item], at shop: Shop, shops: [Shop], allShops: Bool) -> (items: [Item], hidden: Int) {
        let live = Set(shops.map(\.id))
        var shown: [Item] = []
        var hidden = 0
        for var item in items {
            if !allShops, !ShopMarks.isShown(marks: ShopMarks.parse(item.shops), at: shop.id, shops: live) {
                hidden += 1
                continue
            }
            item.category = shop.aisle(of: item)
            shown.append(item)
        }
        return (shown, hidden)
    }

    /// `basket set ITEM --shop A,B` and `--aisle AISLE`: marks and a taught aisle.
    static func setShops(_ context: Context, list: ListInfo, item: Item) throws -> Item {
        let replica = try context.replica()
        var updated = item
        if let names = context.arguments.value(.forShop) {
            let shops = try EntryParser.split(names).map { try replica.shop(named: $0, in: list.id).id }
            updated = try replica.markItems([item.id], for: shops, in: list.id)[0]
        }
        if let aisle = context.arguments.value(.aisle) {
            guard let shop = try currentShop(context, list.id) else {
                throw UsageError(
                    message:
                        "--aisle says where an item is at a shop: start a trip ('basket shopping start --at SHOP') or add --at-shop SHOP",
                    usage: "basket set ITEM --aisle AISLE [--at-shop SHOP]")
            }
            let trimmed = aisle.trimmingCharacters(in: .whitespaces)
            updated = try replica.teachAisle(trimmed.isEmpty ? nil : trimmed, of: item.id, at: shop.id, in: list.id)
        }
        return updated
    }
}
