import BasketCore
import BasketReplica
import Foundation

/// `basket shopping`: "I'm going shopping" for the current list, "done", and who else is; the
/// lines `ls`, `status` and `sync --watch` show (``lines(_:me:now:)``).
enum ShoppingCommands {
    static let usage = "basket shopping [start [--at SHOP] | done]"

    static func shopping(_ context: Context) throws {
        let args = context.arguments.positionals
        let (trip, learned) = try walk(context)
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        let state = try replica.syncState(of: list.id)
        // A list on this device only: the trip is this device's, nobody is told.
        if trip != nil || learned != nil, !state.isRegistered || state.noLongerMember {
            if context.json {
                return try context.console.json(Output.Shopping(list: list.id.description, shopping: []))
            }
            if args.first == "start", let trip { context.console.print(tripLine(trip, list: list)) }
            if args.first == "done" {
                context.console.print(learnedLine(learned, list: list, now: try context.wallClock()()))
            }
            return
        }
        _ = try SharingCommands.sharedList(context)
        let (transport, config) = try context.transport()
        let answer: Wire.Shopping
        do {
            answer = try tell(context, transport, list, account: config.account)
        } catch let error as SyncError where trip != nil {
            // In a shop without a signal: the trip is this device's all the same.
            if context.json {
                return try context.console.json(Output.Shopping(list: list.id.description, shopping: []))
            }
            let now = try context.wallClock()()
            context.console.print(
                args.first == "start" ? tripLine(trip!, list: list) : learnedLine(learned, list: list, now: now))
            context.console.print("The others could not be told (\(error)); 'basket shopping' again tells them.")
            return
        }
        try show(context, answer, list, account: config.account, trip: trip, learned: learned)
    }

    /// Tells the server what `shopping` says (or asks it who is shopping), and returns its answer.
    static func tell(_ context: Context, _ transport: HTTPSyncTransport, _ list: ListInfo, account: String?) throws
        -> Wire.Shopping
    {
        let args = context.arguments.positionals
        let replica = try context.replica()
        let listID = list.id
        let answer: Wire.Shopping
        switch args.first {
        case nil:
            answer = try runBlocking { try await transport.shopping(of: listID) }
        case "start" where args.count == 1:
            let shop = context.arguments.value(.shop)
            if let shop, shop.utf8.count > Wire.ShoppingStart.maxShopBytes || shop.isEmpty {
                throw UsageError(message: "a shop's name is 1 to 100 bytes", usage: usage)
            }
            answer = try runBlocking { try await transport.startShopping(listID, at: shop) }
        case "done" where args.count == 1:
            // What this device checked off since its shopping began (as the server last said).
            let mine = try replica.shoppingNews(of: listID).flatMap { news in
                news.statuses.first { $0.who == account && $0.ended == nil }.map { (news, $0) }
            }
            let since = mine.map { news, status in
                UInt64(max(0, status.since - (Int64(news.serverTime) - Int64(news.receivedAt))))
            }
            let bought = try since.map { try replica.checkedByThisDevice(in: listID, since: $0) } ?? 0
            answer = try runBlocking { try await transport.stopShopping(listID, bought: bought) }
        default:
            throw UsageError(
                message: args.first.map { "unknown or incomplete shopping command '\($0)'" } ?? "", usage: usage)
        }
        return answer
    }

    /// Keeps and shows what the server answered, with the trip begun or ended.
    static func show(
        _ context: Context, _ answer: Wire.Shopping, _ list: ListInfo, account: String?, trip: Shop?, learned: Shop??
    ) throws {
        let args = context.arguments.positionals
        let replica = try context.replica()
        let listID = list.id
        try replica.saveShopping(answer.shopping, of: listID, serverTime: answer.serverTime)
        let news = try replica.shoppingNews(of: listID)
        if context.json, let news {
            let time = { (ms: Int64) in ItemCommands.isoTime(UInt64(max(0, local(ms, news)))) }
            return try context.console.json(
                Output.Shopping(
                    list: listID.description,
                    shopping: answer.shopping.map {
                        Output.Shopping.Status(
                            who: $0.who, shop: $0.shop, since: time($0.since), until: time($0.until),
                            ended: $0.ended.map(time), bought: $0.bought)
                    }))
        }
        let now = HybridClock.wallClockMilliseconds()
        switch args.first {
        case "start":
            let until = news?.shopping(at: now).first { $0.who == account }
            context.console.print(
                "You're shopping for \(list.title)\(until?.shop.map { " at \($0)" } ?? ""): the others see it"
                    + (until.map { " until \(clock($0.until, news!))" } ?? "")
                    + ". 'basket shopping done' when you're done.")
            if let trip { context.console.print(tripLine(trip, list: list)) }
        case "done":
            let mine = news?.done(at: now).first { $0.who == account }
            context.console.print(
                "Done shopping for \(list.title): "
                    + (mine.map { "you bought \(Phrases.items($0.bought ?? 0)); the others are told." }
                        ?? "you were not shopping for it."))
            if trip != nil { context.console.print(learnedLine(learned, list: list, now: try context.wallClock()())) }
        default:
            let told = news.map { Self.lines($0, me: account, now: now) } ?? []
            context.console.print(told.isEmpty ? "Nobody is shopping for \(list.title)." : told.joined(separator: "\n"))
        }
    }

    /// The trip part of `shopping start --at SHOP` and `shopping done`, on this device whether or
    /// not the list is shared: a trip begun at one of the list's shops, or the one ended (with
    /// the shop whose order it taught, nil when it taught nothing).
    static func walk(_ context: Context) throws -> (started: Shop?, ended: Shop??) {
        let args = context.arguments.positionals
        guard args.count == 1, let list = try context.list(create: false) else { return (nil, nil) }
        let replica = try context.replica()
        switch args[0] {
        case "start":
            guard let name = context.arguments.value(.shop) else { return (nil, nil) }
            let state = try replica.syncState(of: list.id)
            let shop: Shop
            do {
                shop = try replica.shop(named: name, in: list.id)
            } catch ReplicaError.noSuchShop where state.isRegistered {
                // A shared list tells the others any shop's name; only the list's shops learn.
                return (nil, nil)
            }
            _ = try replica.startTrip(at: shop.id, in: list.id)
            return (shop, nil)
        case "done":
            guard let trip = try replica.trip(of: list.id) else { return (nil, nil) }
            let shop = try replica.shops(in: list.id).first { $0.id == trip.shop }
            return (shop, .some(try replica.finishTrip(in: list.id)))
        default: return (nil, nil)
        }
    }

    /// "Walking Lidl: its aisle order; what you check off teaches it."
    static func tripLine(_ shop: Shop, list: ListInfo) -> String {
        "Walking \(Printable.escaped(shop.name)): 'basket ls' shows \(list.title) in its aisle order; the order you"
            + " check items off in teaches it."
    }

    /// What a trip taught: "Lidl's order: learned from 3 trips, …", or why nothing.
    static func learnedLine(_ learned: Shop??, list: ListInfo, now: UInt64) -> String {
        guard case .some(.some(let shop)) = learned else {
            return "The trip taught no order: items from two aisles or more must be checked off on it."
        }
        return
            "\(Printable.escaped(shop.name))'s aisle order, \(ShopCommands.learnedNote(shop, now: now) ?? "learned"): "
            + shop.aisles(listAisles: list.aisles).map { Printable.escaped($0) }.joined(separator: ", ")
    }

    /// "Olga is shopping at Lidl (since 17:05)", "Olga bought 12 items (17:40)": who is shopping
    /// and who finished within the hour, others before this account ("You are shopping …").
    static func lines(_ news: ShoppingNews, me: String?, now: UInt64) -> [String] {
        let shopping = news.shopping(at: now).map { status in
            (status.who == me ? "You are" : "\(status.who) is") + " shopping"
                + (status.shop.map { " at \($0)" } ?? "") + " (since \(clock(status.since, news)))"
        }
        let done = news.done(at: now).map { status in
            (status.who == me ? "You" : status.who) + " bought \(Phrases.items(status.bought ?? 0))"
                + (status.shop.map { " at \($0)" } ?? "") + " (\(clock(status.ended ?? status.since, news)))"
        }
        return shopping + done
    }

    /// The lines of ``lines(_:me:now:)`` for `list` as this device last heard, for `ls` and `status`.
    static func stored(_ context: Context, _ list: ListID) -> [String] {
        guard let news = try? context.replica().shoppingNews(of: list) else { return [] }
        return lines(news, me: (try? context.loadConfig())?.account, now: HybridClock.wallClockMilliseconds())
    }

    /// What `sync --watch` prints when it hears of shopping: a line for each status it had not
    /// told yet ("olga is shopping at Lidl", "olga bought 12 items"), given the keys told before.
    static func news(_ news: ShoppingNews?, me: String?, told: inout Set<String>) -> [String] {
        guard let news else { return [] }
        let now = HybridClock.wallClockMilliseconds()
        var lines: [String] = []
        for status in news.shopping(at: now) + news.done(at: now) where status.who != me {
            let key = "\(status.who) \(status.since) \(status.ended ?? 0)"
            guard told.insert(key).inserted else { continue }
            lines.append(
                status.ended == nil
                    ? "\(status.who) is shopping" + (status.shop.map { " at \($0)" } ?? "")
                    : "\(status.who) bought \(Phrases.items(status.bought ?? 0))")
        }
        return lines
    }

    /// A server time by this device's clock.
    static func local(_ serverMilliseconds: Int64, _ news: ShoppingNews) -> Int64 {
        serverMilliseconds - (Int64(news.serverTime) - Int64(news.receivedAt))
    }

    /// A server time as this device's clock reads it, hours and minutes.
    static func clock(_ serverMilliseconds: Int64, _ news: ShoppingNews) -> String {
        let local = local(serverMilliseconds, news)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(local) / 1000))
    }

    /// Asks the server who is shopping for `list` within `seconds`, and keeps the answer; false
    /// when it could not (no server, signed out, no answer in time).
    static func refresh(_ context: Context, _ list: ListID, within seconds: Double) -> Bool {
        guard !context.arguments.has(.noSync), let replica = try? context.replica(),
            let state = try? replica.syncState(of: list), state.isRegistered, !state.noLongerMember,
            (try? context.loadConfig())?.autoSync != false
        else { return false }
        // Heard a moment ago (a command just before this one): that is current enough.
        let now = HybridClock.wallClockMilliseconds()
        if let news = try? replica.shoppingNews(of: list), now >= news.receivedAt, now - news.receivedAt < 5_000 {
            return true
        }
        guard let (transport, _) = try? context.transport(answerTimeout: seconds) else { return false }
        guard
            case .some(.success(let answer)) = runBlocking(within: seconds, { try await transport.shopping(of: list) })
        else { return false }
        return (try? replica.saveShopping(answer.shopping, of: list, serverTime: answer.serverTime)) != nil
    }
}
