import BasketCore
import BasketReplica
import Foundation

/// `basket ls --at TIME` and `basket changes --since TIME`: the list's past, from the history
/// this device keeps (Replica.snapshot(of:at:) and Replica.changes(in:since:)).
extension ItemCommands {
    static let timeUsage = "TIME: -90s, -30m, -2h, -3d, -1w, now, 2026-12-04, 2026-12-04 18:30[:05], 18:30, or ISO 8601"

    /// `basket ls --at TIME`: the list as it stood then.
    static func listAt(_ context: Context, _ text: String, filter: ItemFilter) throws {
        let now = try context.wallClock()()
        let time = try parseTime(text, now: now)
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no lists yet: nothing to show at \(text)", code: "no_such_list")
        }
        // The past as the server knows it: what other members wrote is pulled first when it can be.
        let freshness = SyncCommands.refresh(context, list.id)
        let snapshot = try context.replica().snapshot(of: list.id, at: time)
        let items = snapshot.items.filter { item in
            switch filter {
            case .checked: item.isChecked
            case .unchecked: !item.isChecked
            case .onList, .all: true
            }
        }
        if context.arguments.has(.plain) {
            if let note = freshness.note { context.console.error(note) }
            return printNames(context, items)
        }
        if context.json {
            return try context.console.json(
                Output.ListAt(
                    list: list.id.description, title: snapshot.title, at: isoTime(time),
                    historyComplete: snapshot.isHistoryComplete, items: items,
                    stale: freshness.json))
        }
        let toBuy = snapshot.items.filter { !$0.isChecked }.count
        context.console.print(
            "\(snapshot.title ?? list.title) as of \(localMoment(time, now: now)) "
                + "(\(toBuy) to buy, \(snapshot.items.count - toBuy) checked)")
        if let note = freshness.note { context.console.print(note) }
        if !snapshot.isHistoryComplete { context.console.print(incompleteNote) }
        if items.isEmpty { context.console.print(snapshot.items.isEmpty ? "(empty then)" : "(none of these then)") }
        for item in items { context.console.print(line(for: item)) }
    }

    static let incompleteNote =
        "(history incomplete: the server had dropped superseded writes before this device received them;"
        + " older values may be missing)"

    /// `basket changes --since TIME`: what changed after it, who did it and how.
    static func changes(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(
                message: "unexpected argument '\(context.arguments.positionals[0])'",
                usage: "basket changes --since TIME")
        }
        guard let text = context.arguments.value(.since) else {
            throw UsageError(
                message: "say since when: --since TIME (\(timeUsage))", usage: "basket changes --since TIME")
        }
        let now = try context.wallClock()()
        let time = try parseTime(text, now: now)
        let list = try context.requireList()
        let replica = try context.replica()
        let freshness = SyncCommands.refresh(context, list.id)
        let (changes, complete) = try replica.changes(in: list.id, since: time)
        let authors = Authors(context, list: list.id)
        if context.json {
            return try context.console.json(
                Output.Changes(
                    list: list.id.description, since: isoTime(time), historyComplete: complete,
                    changes: changes.map { change in
                        Output.Change(
                            time: isoTime(change.timestamp), item: change.item.description, name: change.name,
                            replica: change.replica.description, by: authors.account(of: change.replica),
                            what: change.kinds.map(\.rawValue),
                            writes: change.writes.map { write in
                                Output.Change.Write(
                                    field: write.operation.field.rawValue, value: write.operation.value.textValue,
                                    boolValue: write.operation.value.boolValue, previous: write.previous?.textValue,
                                    previousBool: write.previous?.boolValue, won: write.isWinner)
                            })
                    }, stale: freshness.json))
        }
        context.console.print(
            changes.isEmpty
                ? "No changes to \(list.title) since \(localMoment(time, now: now))"
                : "Changes to \(list.title) since \(localMoment(time, now: now)):")
        if let note = freshness.note { context.console.print(note) }
        if !complete { context.console.print(incompleteNote) }
        for change in changes {
            context.console.print(
                "  \(localTime(change.timestamp))  \(authors.describe(change.replica)): \(describe(change))")
        }
    }

    /// A change in words: "checked Milk", "renamed Milk to Oat milk", "set the quantity of Milk to 2".
    static func describe(_ change: ListChange) -> String {
        let name = Printable.escaped(change.name ?? "?")
        func text(_ value: Value?) -> String { value?.textValue.map { "\"\(Printable.escaped($0))\"" } ?? "nothing" }
        let parts = change.kinds.map { kind -> String in
            let write = change.writes.first { $0.kind == kind }
            let lost = write.map { $0.isWinner ? "" : " (since replaced)" } ?? ""
            switch kind {
            case .added: return "added \(name)"
            case .addedBack: return "added \(name) back"
            case .removed: return "removed \(name)"
            case .renamed: return "renamed \(text(write?.previous)) to \(text(write?.operation.value))" + lost
            case .checked: return "checked \(name)" + lost
            case .unchecked: return "unchecked \(name)" + lost
            case .quantity, .note, .category:
                let value = write?.operation.value
                return value == .null
                    ? "cleared the \(kind.rawValue) of \(name)" + lost
                    : "set the \(kind.rawValue) of \(name) to \(text(value))" + lost
            case .title: return "renamed the list to \(text(write?.operation.value))" + lost
            case .aisles: return "set the aisle order to \(text(write?.operation.value))" + lost
            case .archived: return "archived the list"
            case .unarchived: return "brought the list back from the archive"
            case .language: return "named the aisles in \(text(write?.operation.value))" + lost
            case .shops:
                return write?.operation.value == .null
                    ? "let \(name) be bought anywhere" + lost : "marked \(name) for some shops" + lost
            case .place:
                let places = ShopPlaces.parse(write?.operation.value.textValue).values.sorted()
                return "put \(name) in " + (places.isEmpty ? "no taught aisle" : places.joined(separator: ", ")) + lost
            case .dismissed: return "no longer counts \(name) as a usual" + lost
            case .undismissed: return "made \(name) a usual again" + lost
            case .shop: return "added the shop \(name)" + lost
            case .shopRemoved: return "removed the shop \(name)" + lost
            case .shopOrder: return "set the aisle order of \(name) to \(text(write?.operation.value))" + lost
            case .pinned: return "pinned \(text(write?.operation.value)) at \(name)" + lost
            case .learned: return "walked \(name): its order learned from the trip" + lost
            }
        }
        return parts.joined(separator: ", ")
    }

    /// A moment (Unix ms) from `text`: relative to `now` (-90s, -30m, -2h, -3d, -1w, now), a date
    /// or a local time of today (2026-12-04, 2026-12-04 18:30[:05], 18:30), or ISO 8601 with a zone.
    static func parseTime(_ text: String, now: UInt64) throws -> UInt64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let bad = UsageError(message: "'\(Printable.escaped(trimmed))' is not a time; \(timeUsage)", usage: timeUsage)
        if trimmed == "now" { return now }
        if trimmed.hasPrefix("-"), let unit = trimmed.last, let amount = UInt64(trimmed.dropFirst().dropLast()) {
            let scale: UInt64
            switch unit {
            case "s": scale = 1_000
            case "m": scale = 60_000
            case "h": scale = 3_600_000
            case "d": scale = 86_400_000
            case "w": scale = 7 * 86_400_000
            default: throw bad
            }
            let (back, overflow) = amount.multipliedReportingOverflow(by: scale)
            guard !overflow else { throw bad }
            return now > back ? now - back : 0
        }
        let iso = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
        ] {
            iso.formatOptions = options
            if let date = iso.date(from: trimmed) { return milliseconds(date) }
        }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = TimeZone.current
        for format in [
            "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss.SSS",
            "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd",
        ] {
            local.dateFormat = format
            if let date = local.date(from: trimmed) { return milliseconds(date) }
        }
        for format in ["HH:mm:ss", "HH:mm"] {
            local.dateFormat = format
            guard let clock = local.date(from: trimmed) else { continue }
            // That time of the day `now` falls on, in the local zone, when it has passed; else
            // the day before ('--since 18:30' at 09:00 is yesterday evening, not tonight). The
            // commands print the date they took.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone.current
            let parts = calendar.dateComponents([.hour, .minute, .second], from: clock)
            let today = Date(timeIntervalSince1970: Double(now) / 1000)
            if let date = calendar.date(
                bySettingHour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0, of: today)
            {
                guard date > today, let before = calendar.date(byAdding: .day, value: -1, to: date) else {
                    return milliseconds(date)
                }
                return milliseconds(before)
            }
        }
        throw bad
    }

    static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(max(0, min((date.timeIntervalSince1970 * 1000).rounded(), Double(HybridTimestamp.maxMilliseconds))))
    }

    /// A time for --json from Unix milliseconds.
    static func isoTime(_ milliseconds: UInt64) -> String {
        isoTime(HybridTimestamp(milliseconds: milliseconds, counter: 0))
    }

    /// A moment as the time-travel headings say it: "today, 2026-12-06 08:00:00", "yesterday,
    /// 2026-12-05 18:30:00", or the date and time alone further back (a time of day typed alone
    /// may mean either day: the heading says which was taken).
    static func localMoment(_ milliseconds: UInt64, now: UInt64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let today = Date(timeIntervalSince1970: Double(now) / 1000)
        let text = localTime(milliseconds)
        if calendar.isDate(date, inSameDayAs: today) { return "today, " + text }
        if let yesterday = calendar.date(byAdding: .day, value: -1, to: today),
            calendar.isDate(date, inSameDayAs: yesterday)
        {
            return "yesterday, " + text
        }
        return text
    }

    /// A local time from Unix milliseconds.
    static func localTime(_ milliseconds: UInt64) -> String {
        localTime(HybridTimestamp(milliseconds: milliseconds, counter: 0))
    }
}
