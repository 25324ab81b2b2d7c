public import BasketCore

extension ReferenceModel.List {
    /// The list as a replica shows it: its title and its items, removed ones left out.
    public init(
        title: String?, shown items: [BasketCore.Item], aisles: [String] = [],
        shops: [ItemID: ReferenceModel.Shop] = [:]
    ) {
        var byID: [ItemID: ReferenceModel.Item] = [:]
        for item in items where !item.isDeleted {
            byID[item.id] = ReferenceModel.Item(
                id: item.id, name: item.name, checked: item.isChecked, quantity: item.quantity, note: item.note,
                category: item.category, shops: item.shops, places: item.places, dismissed: item.dismissed)
        }
        self.init(title: title, items: byID, aisles: aisles, shops: shops)
    }

    /// The ids (`ItemID.list` for the title and the aisles) where `self` and `other` differ, in
    /// id order.
    public func differences(from other: Self) -> [ItemID] {
        var ids = Set(items.keys).union(other.items.keys).filter { items[$0] != other.items[$0] }
        ids.formUnion(Set(shops.keys).union(other.shops.keys).filter { shops[$0] != other.shops[$0] })
        var sorted = ids.sorted()
        if (title != nil && other.title != nil && title != other.title) || aisles != other.aisles {
            sorted.insert(.list, at: 0)
        }
        return sorted
    }

    /// What the list shows for `id` (the title and aisles for `ItemID.list`), in words.
    public func describe(_ id: ItemID) -> String {
        if id == .list {
            return (title.map { "the title \"\($0)\"" } ?? "no title") + (aisles.isEmpty ? "" : ", aisles \(aisles)")
        }
        return items[id].map { "\($0)" } ?? shops[id].map { "\($0)" } ?? "no such item"
    }

    /// Whether the two lists show the same for `id`.
    func same(_ id: ItemID, as other: Self) -> Bool {
        if id == .list { return title == other.title && aisles == other.aisles }
        return items[id] == other.items[id] && shops[id] == other.shops[id]
    }
}

extension ReferenceModel {
    /// Where a replica shows something else than the model says for the operations it holds.
    public struct Disagreement: Sendable, CustomStringConvertible {
        /// The item (`ItemID.list` for the title) shown differently.
        public var item: ItemID
        /// What the replica shows for it.
        public var shown: String
        /// What the model says.
        public var expected: String
        /// The writes that show it: a smallest set that, applied to a new replica, still gives
        /// another state than the model's (when ``isSmallest``), else every write of the item.
        public var operations: [Op]
        /// Whether ``operations`` was shrunk: applied afresh, every write of the item agreed with
        /// the model, so the disagreement depends on the order the writes arrived in.
        public var isSmallest: Bool

        public var description: String {
            var names: [ItemID: String] = [:]
            for op in operations where op.field == .name { names[op.item] = op.value.textValue }
            var lines = [
                "the replica shows \(shown) where the model says \(expected);",
                isSmallest
                    ? "the smallest set of writes that shows it (applied to a new replica):"
                    : "applied to a new replica in one batch the writes agree: they disagreed in the order they arrived:",
            ]
            for op in operations.sorted(by: {
                ($0.field, $0.version.timestamp.rawValue) < ($1.field, $1.version.timestamp.rawValue)
            }) {
                let target = op.item == .list ? "list" : names[op.item].map { "\"\($0)\"" } ?? "item \(op.item)"
                lines.append(
                    "  \(target).\(op.field.rawValue) = \(op.value) at \(op.version.timestamp) by replica \(op.version.replica)"
                )
            }
            return lines.joined(separator: "\n")
        }
    }

    /// The first place where `shown` (a replica holding `operations`) differs from the model,
    /// explained by the smallest set of those operations that still makes a new replica differ:
    /// `replay` applies a set of operations to a new replica and returns what it shows. Nil when
    /// they agree.
    public static func disagreement(
        in list: ListID, shown: List, operations: [Op], replay: ([Op]) throws -> List
    ) rethrows -> Disagreement? {
        let expected = Self.list(list, from: operations)
        guard let id = shown.differences(from: expected).first else { return nil }
        func differs(_ ops: [Op]) throws -> Bool {
            let model = Self.list(list, from: ops)
            let replica = try replay(ops)
            return !model.same(id, as: replica)
        }
        var writes = operations.filter { $0.item == id }
        let isSmallest = try differs(writes)
        if isSmallest {
            // One write at a time, until none can go: every write left is needed.
            var removed = true
            while removed {
                removed = false
                for index in writes.indices.reversed() where writes.count > 1 {
                    var candidate = writes
                    candidate.remove(at: index)
                    if try differs(candidate) {
                        writes = candidate
                        removed = true
                    }
                }
            }
        }
        return Disagreement(
            item: id, shown: shown.describe(id), expected: expected.describe(id), operations: writes,
            isSmallest: isSmallest)
    }
}

extension ReferenceModel {
    /// A write that breaks the hybrid clock's promise: made by a device after it had seen
    /// `seen`, a write of the same register, and yet not beating it.
    public struct CausalityViolation: Sendable, CustomStringConvertible {
        /// The later write.
        public var write: Op
        /// The write its device had seen before making it.
        public var seen: Op

        public var description: String {
            "causality broken: a device wrote \(write.field.rawValue) = \(write.value) at \(write.version.timestamp) "
                + "after it had seen \(seen.field.rawValue) = \(seen.value) at \(seen.version.timestamp) "
                + "(replica \(seen.version.replica)), and its write does not beat it"
        }
    }

    /// The first write in `now` (a device's operations after it made an edit) that is not in
    /// `seen` (its operations before) and does not beat a write of `seen` to the same register.
    public static func causalityViolation(seen: [Op], now: [Op]) -> CausalityViolation? {
        let before = Set(seen)
        var earlierWrites: [Key: [Op]] = [:]
        for op in seen { earlierWrites[Key(item: op.item, field: op.field), default: []].append(op) }
        for op in now where !before.contains(op) {
            for earlier in earlierWrites[Key(item: op.item, field: op.field)] ?? [] where !wins(op, over: earlier) {
                return CausalityViolation(write: op, seen: earlier)
            }
        }
        return nil
    }
}
