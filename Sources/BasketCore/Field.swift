/// A register of a list or an item.
public enum Field: String, CaseIterable, Hashable, Comparable, Sendable {
    /// The list's title (written to ``ItemID/list``).
    case title
    /// The item's display name, with the user's casing.
    case name
    /// Bought / crossed off.
    case checked
    /// Removed from the list (an add un-deletes).
    case deleted
    /// Free text such as `2 kg`; null when unset.
    case quantity
    /// Free text; null when unset.
    case note
    /// Free text such as `Dairy`; null when unset.
    case category
    /// The list's aisle order: category names separated by commas ("produce, dairy, bakery"),
    /// in the order of the shop (written to ``ItemID/list``); null when unset.
    case aisles
    /// Whether the list is archived: kept, read-only, out of the way (written to ``ItemID/list``).
    case archived
    /// The language the list's aisles are named in ("en", "de"): every device files items under
    /// aisles in it, whatever its own (written to ``ItemID/list``, by its creator and its owners).
    case language
    /// The line an item was last added with when it said more than the name ("2 onions, chopped"),
    /// as typed: kept so that nothing typed is lost to the parser; written by an add, not set.
    case typed
    /// The shops an item is marked for: their ids (``ItemID/init(list:shopKey:)``) as hex, separated
    /// by commas; null (or no id of a shop that exists) when the item is bought anywhere.
    case shops
    /// Where the item was found in each shop, taught while shopping there ("wrong aisle?"):
    /// `SHOPID=aisle` pairs separated by semicolons; null when never taught.
    case places
    /// When the item stopped being a usual ("not anymore"): milliseconds since 1970 in decimal;
    /// purchases until then do not count towards it. Null when never dismissed (or brought back).
    case dismissed
    /// A shop's name (written to the shop's id): the shop exists once it has one.
    case shop
    /// Whether the shop was removed from the list (an add of the same name brings it back).
    case shopRemoved
    /// The shop's aisle order as set by hand: category names separated by commas; null when unset
    /// (the list's ``aisles`` then).
    case order
    /// The aisles of the shop an owner pinned: names separated by commas; each keeps its place in
    /// the hand-set ``order`` whatever the trips say. Null when none.
    case pinned
    /// What the shop's trips taught: `TRIPS LAST-MS aisle=score, aisle=score` (``ShopOrder``);
    /// null before the first trip and after the order is set by hand.
    case learned

    /// A stable small number for compact storage.
    public var code: UInt8 {
        switch self {
        case .title: 0
        case .name: 1
        case .checked: 2
        case .deleted: 3
        case .quantity: 4
        case .note: 5
        case .category: 6
        case .aisles: 7
        case .archived: 8
        case .language: 9
        case .typed: 10
        case .shops: 11
        case .places: 12
        case .dismissed: 13
        case .shop: 14
        case .shopRemoved: 15
        case .order: 16
        case .pinned: 17
        case .learned: 18
        }
    }

    /// The field with wire code `code` (docs/encoding.md); nil for an unknown one.
    public init?(code: UInt8) {
        switch code {
        case 0: self = .title
        case 1: self = .name
        case 2: self = .checked
        case 3: self = .deleted
        case 4: self = .quantity
        case 5: self = .note
        case 6: self = .category
        case 7: self = .aisles
        case 8: self = .archived
        case 9: self = .language
        case 10: self = .typed
        case 11: self = .shops
        case 12: self = .places
        case 13: self = .dismissed
        case 14: self = .shop
        case 15: self = .shopRemoved
        case 16: self = .order
        case 17: self = .pinned
        case 18: self = .learned
        default: return nil
        }
    }

    /// The most UTF-8 bytes a text value of this field may hold (``ItemName`` has the other rules).
    /// No shopping list meets them: a name of 500 characters in any script fits in 2,048 bytes.
    public var maxBytes: Int {
        switch self {
        case .title, .name, .typed: 2_048
        case .quantity, .category, .shop: 256
        case .language, .dismissed: 16
        case .shops: 1_024
        case .note, .aisles, .places, .order, .pinned, .learned: 4_096
        case .checked, .deleted, .archived, .shopRemoved: 0
        }
    }

    /// What a register belongs to.
    public enum Target: Sendable {
        /// The list (written to ``ItemID/list``).
        case list
        /// An item (written to its id, from its name's key).
        case item
        /// A shop of the list (written to its id, ``ItemID/init(list:shopKey:)``).
        case shop
    }

    /// What the field belongs to.
    public var target: Target {
        switch self {
        case .title, .aisles, .archived, .language: .list
        case .name, .checked, .deleted, .quantity, .note, .category, .typed, .shops, .places, .dismissed: .item
        case .shop, .shopRemoved, .order, .pinned, .learned: .shop
        }
    }

    /// Whether the field belongs to the list rather than to an item or a shop.
    public var isListField: Bool { target == .list }

    /// Whether the field belongs to a shop.
    public var isShopField: Bool { target == .shop }

    /// What a field's register holds (``Op/validate()`` checks a value against it).
    public enum Kind: Sendable {
        /// A boolean, false until written.
        case flag
        /// Text that is always there once written (an item's name, a list's title).
        case text
        /// Text or null (cleared).
        case optionalText
    }

    /// What the field's register holds.
    public var kind: Kind {
        switch self {
        case .checked, .deleted, .archived, .shopRemoved: .flag
        case .title, .name, .shop: .text
        case .quantity, .note, .category, .aisles, .language, .typed, .shops, .places, .dismissed, .order, .pinned,
            .learned:
            .optionalText
        }
    }

    /// Whether a person sets the field (`basket set`, the phone's item sheet) rather than the app
    /// on its own (an add writes ``typed``).
    public var isSettable: Bool {
        switch self {
        case .quantity, .note, .category: true
        case .title, .name, .checked, .deleted, .aisles, .archived, .language, .typed, .shops, .places, .dismissed,
            .shop, .shopRemoved, .order, .pinned, .learned:
            false
        }
    }

    /// An item's fields, in wire order: the one list that a rename copies, a `set`, an undo and
    /// time travel walk, the replica's `items` columns are named after, and the clients' JSON and
    /// conformance vectors list. A new field joins it by joining the switches above.
    public static let itemFields: [Field] = allCases.filter { $0.target == .item }

    /// A shop's fields, in wire order.
    public static let shopFields: [Field] = allCases.filter { $0.target == .shop }

    /// The item fields a person sets to a text or clears (`basket set`, the phone's item sheet).
    public static let settableItemFields: [Field] = itemFields.filter { $0.kind == .optionalText && $0.isSettable }

    /// The value a field holds before any write: false for a flag, null for text.
    public var initialValue: Value { kind == .flag ? .bool(false) : .null }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.code < rhs.code }
}

/// The value of a register. In JSON (`Item`'s, the CLI's `--json`): null, a boolean or a string.
public enum Value: Hashable, Sendable, CustomStringConvertible, Encodable {
    /// No value: an optional field cleared.
    case null
    /// The value of `checked` and `deleted`.
    case bool(Bool)
    /// The value of `name` and the optional text fields.
    case text(String)

    /// The value when it is a boolean (`checked`, `deleted`); nil otherwise.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value when it is text (`name`, `title`, `quantity`, `note`, `category`); nil otherwise.
    public var textValue: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let flag): try c.encode(flag)
        case .text(let text): try c.encode(text)
        }
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .text(let s): "\"\(s)\""
        }
    }

    /// A total order used only to break the tie between two different values written with the
    /// same version (which a correct replica never does); it keeps merge deterministic anyway.
    static func tieBreak(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return false
        case (.null, _): return true
        case (_, .null): return false
        case (.bool(let x), .bool(let y)): return !x && y
        case (.bool, .text): return true
        case (.text, .bool): return false
        case (.text(let x), .text(let y)): return Array(x.utf8).lexicographicallyPrecedes(y.utf8)
        }
    }
}
