public import BasketCore
import SQLite

/// A list as it stood at a moment of its history (``Replica/snapshot(of:at:)``).
public struct ListSnapshot: Hashable, Sendable {
    /// The moment (Unix milliseconds): every write made at or before it is in.
    public var time: UInt64
    /// The list's title then (nil when it had none yet).
    public var title: String?
    /// Its items then, removed ones left out, in display order.
    public var items: [Item]
    /// False when the server had dropped superseded writes before this replica received them
    /// (compaction): an older value may be missing, and the list then may have looked otherwise.
    public var isHistoryComplete: Bool
}

/// What one device did to one item (or the list) in one step: the writes of one replica to one
/// item within one millisecond (``Replica/changes(in:since:)``).
public struct ListChange: Hashable, Sendable {
    /// What a write did, in words a person uses.
    public enum Kind: String, Hashable, Sendable {
        /// The item was added (its first name).
        case added
        /// A removed item was added again.
        case addedBack = "added back"
        /// The item was removed.
        case removed
        /// The item got another name.
        case renamed
        /// Checked (bought).
        case checked
        /// Unchecked.
        case unchecked
        /// Quantity, note or category set (or cleared: the value is nil).
        case quantity, note, category
        /// The list's title, aisle order, archive state or aisles' language.
        case title, aisles, archived, unarchived, language
        /// The item marked for some shops (or for none), taught an aisle at a shop, no longer a
        /// usual (or one again).
        case shops, place, dismissed, undismissed
        /// A shop added or renamed, removed, its order set by hand, pinned aisles, a trip taught.
        case shop, shopRemoved, shopOrder, pinned, learned
    }

    /// One write of the change: its register, its value, the value it replaced (nil: none
    /// before it) and whether it is still what the register shows.
    public struct Write: Hashable, Sendable {
        /// The write itself.
        public var operation: Op
        /// What it did.
        public var kind: Kind
        /// The value the register had before it, in the order of writes (nil: none).
        public var previous: Value?
        /// Whether the register still shows it (a later write did not replace it).
        public var isWinner: Bool
    }

    /// The item (`ItemID.list` for the list's own fields).
    public var item: ItemID
    /// The item's name as the list shows it now (its last name when removed), nil for the list.
    public var name: String?
    /// Who made it.
    public var replica: ReplicaID
    /// When: the timestamp of its first write.
    public var timestamp: HybridTimestamp
    /// Its writes, those a person would name (an add's "not removed" of an item never removed is
    /// left out; see ``kinds`` for the change in words).
    public var writes: [Write]

    /// What the change did, in order: "added", or "checked", or "renamed", "quantity"….
    public var kinds: [Kind] {
        let all = writes.map(\.kind)
        // An add (or an add back) also writes an unchecked state and the catalogue's category:
        // both are part of the add. A quantity or a note given with it is not.
        for add in [Kind.added, .addedBack] where all.contains(add) {
            return [add] + all.filter { $0 == .quantity || $0 == .note }
        }
        return all
    }
}

/// The list's past, from the history every replica keeps: what it looked like at a moment, and
/// what changed since one. Both see the writes this replica holds, by when they were made (their
/// hybrid timestamps), within what compaction kept.
extension Replica {
    /// The list as it stood at `time` (Unix milliseconds): every write this replica holds that was
    /// made at or before it, merged by the usual rules. A write made offline before `time` that
    /// arrived later is in it (this replica knows it now).
    public func snapshot(of list: ListID, at time: UInt64) throws -> ListSnapshot {
        let (rows, complete) = try histories(of: list)
        var title: String?
        var items: [Item] = []
        for (id, entries) in rows {
            var winners: [Field: Register] = [:]
            for entry in entries where entry.register.version.timestamp.milliseconds <= time {
                winners[entry.field] = winners[entry.field].map { $0.merging(entry.register) } ?? entry.register
            }
            if id == .list {
                title = winners[.title]?.value.textValue
                continue
            }
            guard winners[.name] != nil, winners[.deleted]?.value != .bool(true) else { continue }
            items.append(Item(id: id) { winners[$0]?.value })
        }
        return ListSnapshot(time: time, title: title, items: items.sortedForDisplay(), isHistoryComplete: complete)
    }

    /// What changed in the list after `time` (Unix milliseconds), oldest first: each device's
    /// writes to one item in one step, with what they replaced and whether they still show.
    /// Bounded by the history this replica holds (see ``ListSnapshot/isHistoryComplete``).
    public func changes(in list: ListID, since time: UInt64) throws -> (changes: [ListChange], isHistoryComplete: Bool)
    {
        let (rows, complete) = try histories(of: list)
        var changes: [ListChange] = []
        for (id, entries) in rows {
            let ordered = entries.sorted { $0.register.version < $1.register.version }
            var current: [Field: Register] = [:]
            var final: [Field: Register] = [:]
            for entry in ordered {
                final[entry.field] = final[entry.field].map { $0.merging(entry.register) } ?? entry.register
            }
            let name = final[.name]?.value.textValue ?? final[.shop]?.value.textValue
            for entry in ordered {
                let previous = current[entry.field]
                current[entry.field] = previous.map { $0.merging(entry.register) } ?? entry.register
                let version = entry.register.version
                guard version.timestamp.milliseconds > time,
                    let kind = Self.kind(entry.field, entry.register.value, previous: previous?.value)
                else { continue }
                let write = ListChange.Write(
                    operation: Op(
                        list: list, item: id, field: entry.field, value: entry.register.value, version: version),
                    kind: kind, previous: previous?.value, isWinner: final[entry.field] == entry.register)
                if let last = changes.last, last.item == id, last.replica == version.replica,
                    last.timestamp.milliseconds == version.timestamp.milliseconds
                {
                    changes[changes.count - 1].writes.append(write)
                } else {
                    changes.append(
                        ListChange(
                            item: id, name: id == .list ? nil : name, replica: version.replica,
                            timestamp: version.timestamp, writes: [write]))
                }
            }
        }
        changes.sort { ($0.timestamp, $0.replica.rawValue, $0.item) < ($1.timestamp, $1.replica.rawValue, $1.item) }
        return (changes, complete)
    }

    /// What a write did, from its field, its value and the value before it; nil for a write a
    /// person would not name (an add's "not removed" on an item never removed, the line it was
    /// typed as).
    static func kind(_ field: Field, _ value: Value, previous: Value?) -> ListChange.Kind? {
        switch field {
        case .name: return previous == nil ? .added : previous == value ? nil : .renamed
        case .deleted:
            if value == .bool(true) { return .removed }
            return previous == .bool(true) ? .addedBack : nil
        case .checked:
            if value == .bool(true) { return .checked }
            return previous == .bool(true) ? .unchecked : nil
        case .quantity: return .quantity
        case .note: return .note
        case .category: return .category
        case .title: return .title
        case .aisles: return .aisles
        case .archived: return value == .bool(true) ? .archived : .unarchived
        case .language: return .language
        // The line an add was typed as is part of the add, not a change of its own.
        case .typed: return nil
        case .shops: return .shops
        case .places: return .place
        case .dismissed: return value == .null ? .undismissed : .dismissed
        case .shop: return previous == value ? nil : .shop
        case .shopRemoved:
            if value == .bool(true) { return .shopRemoved }
            return previous == .bool(true) ? .shop : nil
        case .order: return .shopOrder
        case .pinned: return .pinned
        case .learned: return .learned
        }
    }

    /// Every row's history of `list` (the list's own row as `ItemID.list`), and
    /// whether the history is complete.
    func histories(of list: ListID) throws -> (rows: [(ItemID, [Records.Entry])], complete: Bool) {
        let complete = !(try syncState(of: list).historyIncomplete)
        let rows = try locked { db -> [(ItemID, [UInt8])] in
            guard let no = try listNo(list, db) else { throw ReplicaError.noSuchList(list.description) }
            return try db.query("SELECT id, history FROM items WHERE list = ?", .integer(no)) { row in
                (ItemID(raw: ID128(row.blob128(0))), row.blob(1))
            }
        }
        return (try rows.map { ($0.0, try Records.decode($0.1)) }, complete)
    }
}
