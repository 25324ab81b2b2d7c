import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// `basket history`: every write an item received, who made it and whether it won.
extension ItemCommands {
    static func history(_ context: Context) throws {
        let (list, item) = try resolveItem(context, includeRemoved: true)
        let replica = try context.replica()
        let entries = try replica.history(of: item.id, in: list.id)
        // The server dropped superseded writes (compaction) before this device pulled them.
        let complete = !(try replica.syncState(of: list.id).historyIncomplete)
        let authors = Authors(context, list: list.id)
        let (renamedFrom, renamedTo) = try renames(of: item, entries: entries, in: list.id, replica: replica)
        if context.json {
            let rows = entries.map { entry in
                Output.HistoryEntry(
                    field: entry.operation.field.rawValue, value: entry.operation.value.textValue,
                    boolValue: entry.operation.value.boolValue, timestamp: entry.operation.timestamp.description,
                    time: isoTime(entry.operation.timestamp), replica: entry.operation.replica.description,
                    by: authors.account(of: entry.operation.replica), winner: entry.isWinner, reason: entry.reason)
            }
            return try context.console.json(
                Output.History(
                    item: ItemJSON(item), historyComplete: complete, renamedFrom: renamedFrom?.name,
                    renamedTo: renamedTo?.name, history: rows))
        }
        context.console.print("\(item.name)  (item \(item.id))")
        if let renamedFrom {
            context.console.print(
                "  Renamed from \(renamedFrom.name) ('basket history \(shellQuoted(renamedFrom.name))')")
        }
        if let renamedTo {
            context.console.print("  Renamed to \(renamedTo.name) ('basket history \(shellQuoted(renamedTo.name))')")
        }
        // Why a write lost names the winner's replica: said as who it is.
        let writers = Set(entries.map(\.operation.replica))
        func why(_ reason: String) -> String {
            writers.reduce(reason) { $0.replacingOccurrences(of: "replica \($1)", with: authors.describe($1)) }
        }
        if !complete {
            context.console.print(
                "  (incomplete: the server had dropped superseded writes before this device received them)")
        }
        var currentField: Field?
        for entry in entries {
            let op = entry.operation
            if op.field != currentField {
                context.console.print("  \(op.field.rawValue):")
                currentField = op.field
            }
            let mark = entry.isWinner ? "*" : " "
            let value = DisplayWidth.truncate(op.value.description, to: historyValueColumns)
            let pad = String(repeating: " ", count: max(0, historyValueColumns - DisplayWidth.columns(of: value)))
            context.console.print(
                "   \(mark) \(value)\(pad)  \(localTime(op.timestamp))  \(authors.describe(op.replica))"
                    + (entry.isWinner ? "" : "  (\(why(entry.reason)))"))
        }
    }

    /// The item this one was renamed from, and the one it was renamed to: a rename to another
    /// key writes the new item's name and removes the old one in one step of one device, within
    /// the same second; the writes carry no link, so it is found by that step.
    static func renames(of item: Item, entries: [HistoryEntry], in list: ListID, replica: Replica) throws -> (
        from: Item?, to: Item?
    ) {
        let firstName = entries.filter { $0.operation.field == .name }.map(\.operation).min { $0.version < $1.version }
        let removals = entries.filter { $0.operation.field == .deleted && $0.operation.value == .bool(true) }
            .map(\.operation)
        guard firstName != nil || !removals.isEmpty else { return (nil, nil) }
        func close(_ a: Op, _ b: Op) -> Bool {
            a.replica == b.replica && b.timestamp.milliseconds >= a.timestamp.milliseconds
                && b.timestamp.milliseconds - a.timestamp.milliseconds < 1_000 && a.timestamp < b.timestamp
        }
        var from: Item?
        var to: Item?
        for other in try replica.items(in: list, filter: .all) where other.id != item.id {
            let history = try replica.history(of: other.id, in: list).map(\.operation)
            if from == nil, let firstName, other.isDeleted,
                history.contains(where: { $0.field == .deleted && $0.value == .bool(true) && close(firstName, $0) }),
                let otherFirst = history.filter({ $0.field == .name }).min(by: { $0.version < $1.version }),
                otherFirst.timestamp < firstName.timestamp
            {
                from = other
            }
            if to == nil, let otherFirst = history.filter({ $0.field == .name }).min(by: { $0.version < $1.version }),
                removals.contains(where: { close(otherFirst, $0) })
            {
                to = other
            }
            if from != nil && to != nil { break }
        }
        return (from, to)
    }

    /// A time as people read it: the local date and time ($TZ), to the second.
    static func localTime(_ t: HybridTimestamp) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000))
    }

    /// A time for --json: ISO 8601 in UTC, to the millisecond.
    static func isoTime(_ t: HybridTimestamp) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000))
    }
}
