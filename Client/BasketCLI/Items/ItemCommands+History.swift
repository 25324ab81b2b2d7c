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
                    item: item, historyComplete: complete, renamedFrom: renamedFrom?.name,
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
        // On a terminal a long value is wrapped in its column; elsewhere (a pipe, a file) it is
        // given whole on one line, the columns widened to the longest.
        let wraps = context.console.isTerminal
        let valueColumns =
            wraps
            ? historyValueColumns
            : entries.map { DisplayWidth.columns(of: $0.operation.value.description) }.reduce(historyValueColumns, max)
        var currentField: Field?
        for entry in entries {
            let op = entry.operation
            if op.field != currentField {
                context.console.print("  \(op.field.rawValue):")
                currentField = op.field
            }
            let mark = entry.isWinner ? "*" : " "
            let lines =
                wraps ? DisplayWidth.wrap(op.value.description, to: valueColumns) : [op.value.description]
            let value = lines[0]
            let pad = String(repeating: " ", count: max(0, valueColumns - DisplayWidth.columns(of: value)))
            context.console.print(
                "   \(mark) \(value)\(pad)  \(localTime(op.timestamp))  \(authors.describe(op.replica))"
                    + (entry.isWinner ? "" : "  (\(why(entry.reason)))"))
            for more in lines.dropFirst() { context.console.print("     \(more)") }
        }
    }

    /// The fields a rename to another key writes on the new item, in the order it writes them
    /// (`Replica.rename(_:to:in:)`, and `rename` in the web client's replica.js); the old
    /// item's removal follows, all stamped by one reading of one replica's clock.
    static let renameRun: [Field] = Field.itemFields

    /// The item this one was renamed from, and the one it was renamed to. A rename to another
    /// key is one step of one replica: the new item's writes, one per item field (``renameRun``),
    /// and the old item's removal at the versions that follow each other on that replica's clock. The
    /// link is that run of versions, never how close in time two writes were: a removal a moment
    /// later is another step with a version of its own.
    static func renames(of item: Item, entries: [HistoryEntry], in list: ListID, replica: Replica) throws -> (
        from: Item?, to: Item?
    ) {
        let ops = entries.map(\.operation)
        // The version of the removal that ended each rename into this item (latest first).
        let intoThis = ops.filter { $0.field == .name }.compactMap { renameEnd(startingAt: $0, in: ops) }
            .sorted(by: >)
        // This item's removals: each may end a rename out of it.
        let removals = Set(
            ops.filter { $0.field == .deleted && $0.value == .bool(true) }.map(\.version))
        guard !intoThis.isEmpty || !removals.isEmpty else { return (nil, nil) }
        var from: (item: Item, version: Version)?
        var to: (item: Item, version: Version)?
        for other in try replica.items(in: list, filter: .all) where other.id != item.id {
            let history = try replica.history(of: other.id, in: list).map(\.operation)
            if let removed = history.first(where: {
                $0.field == .deleted && $0.value == .bool(true) && intoThis.contains($0.version)
            }), from.map({ $0.version < removed.version }) ?? true {
                from = (other, removed.version)
            }
            for name in history where name.field == .name {
                if let end = renameEnd(startingAt: name, in: history), removals.contains(end),
                    to.map({ $0.version < end }) ?? true
                {
                    to = (other, end)
                }
            }
        }
        return (from?.item, to?.item)
    }

    /// When `name` opens a rename's run on its item (``renameRun`` at consecutive versions of
    /// its replica in `ops`), the version the old item's removal then has; nil otherwise.
    static func renameEnd(startingAt name: Op, in ops: [Op]) -> Version? {
        let versions = Set(ops.map { FieldVersion(field: $0.field, version: $0.version) })
        var clock = HybridClock(last: name.timestamp)
        for field in renameRun.dropFirst() {
            // The tick after the last one, as one reading of the wall clock stamps a step.
            let next = Version(timestamp: clock.now(wallMilliseconds: 0), replica: name.replica)
            guard versions.contains(FieldVersion(field: field, version: next)) else { return nil }
        }
        return Version(timestamp: clock.now(wallMilliseconds: 0), replica: name.replica)
    }

    private struct FieldVersion: Hashable {
        var field: Field
        var version: Version
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
