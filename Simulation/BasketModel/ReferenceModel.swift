public import BasketCore

/// Basket's merge rules stated a second time, from docs/conflicts.md and docs/encoding.md alone,
/// to check the real code against: given every operation of a list, what every device must show.
/// It shares no merge code with BasketCore (`Register`, `Version`'s order, `Value`'s tie-break) or
/// BasketReplica: it uses only the operations' data. A replica that is wrong the same way on every
/// device converges, and only a comparison with this model shows it.
///
/// The rules, as docs/conflicts.md gives them:
/// - every field of an item (`name`, `checked`, `deleted`, `quantity`, `note`, `category`) and of
///   the list (`title`, `aisles`, `archived`) is its own register;
/// - of two writes to one register, the one with the later hybrid timestamp wins; equal
///   timestamps are ordered by the replica id (the larger wins); the same timestamp and replica
///   with two values (only a forged or re-stamped write makes that) are ordered by value: no
///   value, then false, then true, then texts by their UTF-8 bytes;
/// - an item is shown when its `name` is set and it is not deleted; `checked` is false until
///   written;
/// - a shop is the registers of an id holding a `shop` name; `shopRemoved` is false until written;
///   its `order` and `pinned` are aisle names separated by ", ", like the list's `aisles`.
public enum ReferenceModel {
    /// An item as the model says every device shows it.
    public struct Item: Hashable, Sendable, CustomStringConvertible {
        /// The item's id.
        public var id: ItemID
        /// Its name.
        public var name: String
        /// Whether it is checked.
        public var checked: Bool
        /// Its quantity, note and category, nil when unset or cleared.
        public var quantity: String?
        /// Its note.
        public var note: String?
        /// Its category.
        public var category: String?
        /// The shops it is marked for, its aisles at shops, when it stopped being a usual: each as
        /// its register holds it.
        public var shops: String?
        /// Its aisle at each shop, as stored.
        public var places: String?
        /// When it was dismissed as a usual, as stored.
        public var dismissed: String?

        /// An item with these values.
        public init(
            id: ItemID, name: String, checked: Bool, quantity: String? = nil, note: String? = nil,
            category: String? = nil, shops: String? = nil, places: String? = nil, dismissed: String? = nil
        ) {
            self.id = id
            self.name = name
            self.checked = checked
            self.quantity = quantity
            self.note = note
            self.category = category
            self.shops = shops
            self.places = places
            self.dismissed = dismissed
        }

        /// The item in one line, for messages.
        public var description: String {
            "\(checked ? "[x]" : "[ ]") \(name)" + (quantity.map { " (\($0))" } ?? "")
                + (note.map { " note: \($0)" } ?? "")
                + (category.map { " #\($0)" } ?? "") + (shops.map { " shops: \($0)" } ?? "")
                + (places.map { " places: \($0)" } ?? "") + (dismissed.map { " dismissed: \($0)" } ?? "")
        }
    }

    /// A shop as the model says every device shows it.
    public struct Shop: Hashable, Sendable, CustomStringConvertible {
        /// Its name.
        public var name: String
        /// Whether it was removed.
        public var removed: Bool
        /// Its hand-set aisle order, the pinned aisles (names, in order) and what trips taught
        /// (as stored).
        public var order: [String]
        /// The aisles pinned.
        public var pinned: [String]
        /// The learned order as stored.
        public var learned: String?

        /// A shop with these values.
        public init(name: String, removed: Bool, order: [String], pinned: [String], learned: String?) {
            self.name = name
            self.removed = removed
            self.order = order
            self.pinned = pinned
            self.learned = learned
        }

        /// The shop in one line, for messages.
        public var description: String {
            "shop \(name)" + (removed ? " (removed)" : "") + (order.isEmpty ? "" : " order: \(order)")
                + (pinned.isEmpty ? "" : " pinned: \(pinned)") + (learned.map { " learned: \($0)" } ?? "")
        }
    }

    /// A list as the model says every device shows it.
    public struct List: Hashable, Sendable {
        /// The title, nil when never written.
        public var title: String?
        /// The items shown (named, not deleted), by id.
        public var items: [ItemID: Item]
        /// The list's aisle order (names).
        public var aisles: [String]
        /// Its shops (removed ones too), by id.
        public var shops: [ItemID: Shop]

        /// A list with this title, these items, aisles and shops.
        public init(title: String?, items: [ItemID: Item], aisles: [String] = [], shops: [ItemID: Shop] = [:]) {
            self.title = title
            self.items = items
            self.aisles = aisles
            self.shops = shops
        }
    }

    /// Aisle names as a register holds them: separated by commas, spaces around them dropped.
    static func names(_ value: Value?) -> [String] {
        guard let text = text(value) else { return [] }
        return text.split(separator: ",").map { $0.split(separator: " ").joined(separator: " ") }.filter { !$0.isEmpty }
    }

    /// The state every device must show once it holds `operations` (any order, duplicates
    /// allowed), for the list `list`.
    public static func list(_ list: ListID, from operations: some Sequence<Op>) -> List {
        var winners: [Key: Op] = [:]
        for op in operations where op.list == list {
            let key = Key(item: op.item, field: op.field)
            if let current = winners[key], !wins(op, over: current) { continue }
            winners[key] = op
        }
        var title: String?
        var aisles: [String] = []
        var fields: [ItemID: [Field: Value]] = [:]
        for (key, op) in winners {
            if key.item == .list {
                if key.field == .title, case .text(let text) = op.value { title = text }
                if key.field == .aisles { aisles = names(op.value) }
            } else {
                fields[key.item, default: [:]][key.field] = op.value
            }
        }
        var items: [ItemID: Item] = [:]
        var shops: [ItemID: Shop] = [:]
        for (id, values) in fields {
            if case .text(let name)? = values[.shop] {
                shops[id] = Shop(
                    name: name, removed: values[.shopRemoved] == .bool(true), order: names(values[.order]),
                    pinned: names(values[.pinned]), learned: text(values[.learned]))
            }
            guard case .text(let name)? = values[.name], values[.deleted] != .bool(true) else { continue }
            items[id] = Item(
                id: id, name: name, checked: values[.checked] == .bool(true), quantity: text(values[.quantity]),
                note: text(values[.note]), category: text(values[.category]), shops: text(values[.shops]),
                places: text(values[.places]), dismissed: text(values[.dismissed]))
        }
        return List(title: title, items: items, aisles: aisles, shops: shops)
    }

    /// Whether the write `a` beats the write `b` of the same register.
    public static func wins(_ a: Op, over b: Op) -> Bool {
        let (at, bt) = (a.version.timestamp.rawValue, b.version.timestamp.rawValue)
        if at != bt { return at > bt }
        let (ar, br) = (a.version.replica.rawValue, b.version.replica.rawValue)
        if ar != br { return ar > br }
        return rank(a.value) > rank(b.value) || (rank(a.value) == rank(b.value) && textAfter(a.value, b.value))
    }

    /// A register: an item's (or the list's) field.
    struct Key: Hashable {
        var item: ItemID
        var field: Field
    }

    /// No value, false, true, text: the order of values of one timestamp and replica.
    static func rank(_ value: Value) -> Int {
        switch value {
        case .null: 0
        case .bool(false): 1
        case .bool(true): 2
        case .text: 3
        }
    }

    /// Whether `a`'s text comes after `b`'s by UTF-8 bytes (both texts).
    static func textAfter(_ a: Value, _ b: Value) -> Bool {
        guard case .text(let x) = a, case .text(let y) = b else { return false }
        let (xs, ys) = (Array(x.utf8), Array(y.utf8))
        for (p, q) in zip(xs, ys) where p != q { return p > q }
        return xs.count > ys.count
    }

    static func text(_ value: Value?) -> String? {
        if case .text(let text)? = value { return text }
        return nil
    }
}
