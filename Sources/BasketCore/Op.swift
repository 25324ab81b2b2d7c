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
        default: return nil
        }
    }

    /// The most UTF-8 bytes a text value of this field may hold (``ItemName`` has the other rules).
    /// No shopping list meets them: a name of 500 characters in any script fits in 2,048 bytes.
    public var maxBytes: Int {
        switch self {
        case .title, .name: 2_048
        case .quantity, .category: 256
        case .note, .aisles: 4_096
        case .checked, .deleted, .archived: 0
        }
    }

    /// Whether the field belongs to the list rather than to an item.
    public var isListField: Bool { self == .title || self == .aisles || self == .archived }

    /// Item fields that a rename to another key copies to the new item.
    public static let itemFields: [Field] = [.name, .checked, .deleted, .quantity, .note, .category]

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.code < rhs.code }
}

/// The value of a register.
public enum Value: Hashable, Sendable, CustomStringConvertible {
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

/// An operation ("op", as in an op log): one write to one register, `(list, item, field,
/// value, timestamp, replica)`. Not `Operation`, which Foundation has.
///
/// Applying the same operation twice, or a set of operations in any order, gives the same state.
public struct Op: Hashable, Sendable, CustomStringConvertible {
    /// The list written to.
    public var list: ListID
    /// The item written to; ``ItemID/list`` for list fields.
    public var item: ItemID
    /// The register written.
    public var field: Field
    /// The value written (``Value/null`` clears an optional field).
    public var value: Value
    /// When and by whom: decides which write a register keeps.
    public var version: Version

    /// An operation writing `value` to `field` of `item` in `list`, at `version`.
    public init(list: ListID, item: ItemID, field: Field, value: Value, version: Version) {
        self.list = list
        self.item = item
        self.field = field
        self.value = value
        self.version = version
    }

    /// The version's timestamp.
    public var timestamp: HybridTimestamp { version.timestamp }
    /// The replica that made the write.
    public var replica: ReplicaID { version.replica }

    /// What identifies an operation: pushing or applying it twice is a no-op.
    public struct Identity: Hashable, Sendable {
        /// The item written to.
        public var item: ItemID
        /// The register written.
        public var field: Field
        /// The write's version.
        public var version: Version
    }

    /// The operation's identity: two operations with the same one are the same write.
    public var identity: Identity { Identity(item: item, field: field, version: version) }

    /// Why an operation is refused (``validate()``).
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// A list-level field on an item, or an item field on the list.
        case wrongTarget(Field)
        /// A value of the wrong kind for the field (text for `checked`, …).
        case wrongType(Field, Value)
        /// A name that breaks a rule of ``ItemName``.
        case invalidName(ItemName.Problem)
        /// A quantity, note or category that breaks a rule of ``ItemName``.
        case invalidText(Field, ItemName.Problem)
        /// The replica id 0, which no device has.
        case zeroReplica

        public var description: String {
            switch self {
            case .wrongTarget(let field):
                return field.isListField
                    ? "field \(field.rawValue) belongs to the list, not to an item"
                    : "field \(field.rawValue) belongs to an item, not to the list"
            case .wrongType(let field, let value): return "field \(field.rawValue) cannot hold \(value)"
            case .invalidName(let problem): return "invalid name: \(problem)"
            case .invalidText(let field, let problem): return "invalid \(field.rawValue): \(problem)"
            case .zeroReplica: return "replica id 0 is reserved"
            }
        }
    }

    /// Checks that the field fits the target and the value fits the field.
    public func validate() throws(Problem) {
        if field.isListField != (item == .list) { throw .wrongTarget(field) }
        if version.replica.rawValue == 0 { throw .zeroReplica }
        switch (field, value) {
        case (.checked, .bool), (.deleted, .bool), (.archived, .bool), (.aisles, .null): return
        case (.name, .text(let name)), (.title, .text(let name)):
            do throws(ItemName.Problem) {
                try ItemName.check(name, for: field)
            } catch {
                throw .invalidName(error)
            }
        case (.quantity, .null), (.note, .null), (.category, .null): return
        case (.quantity, .text(let text)), (.note, .text(let text)), (.category, .text(let text)),
            (.aisles, .text(let text)):
            do throws(ItemName.Problem) {
                try ItemName.check(text, for: field)
            } catch {
                throw .invalidText(field, error)
            }
        default: throw .wrongType(field, value)
        }
    }

    public var description: String { "\(list)/\(item).\(field.rawValue) = \(value) @ \(version)" }
}

/// A last-writer-wins register: the value written with the greatest ``Version``.
public struct Register: Hashable, Sendable {
    /// The winning value.
    public var value: Value
    /// The version of the write that set it.
    public var version: Version

    /// A register holding `value`, written at `version`.
    public init(value: Value, version: Version) {
        self.value = value
        self.version = version
    }

    /// Whether a write `(value, version)` beats this register's current one.
    public func isBeaten(by version: Version, value: Value) -> Bool {
        #if DEBUG
            if PlantedRule.plants(.firstWriterWins), version != self.version { return version < self.version }
            if PlantedRule.plants(.lowerReplicaWinsTies), version.timestamp == self.version.timestamp,
                version.replica != self.version.replica
            {
                return version.replica.rawValue < self.version.replica.rawValue
            }
        #endif
        if version != self.version { return version > self.version }
        return Value.tieBreak(self.value, value)
    }

    /// Keeps the later write; returns whether the register changed.
    @discardableResult
    public mutating func merge(_ other: Register) -> Bool {
        guard isBeaten(by: other.version, value: other.value) else { return false }
        self = other
        return true
    }

    /// The later of the two writes.
    public func merging(_ other: Register) -> Register {
        var copy = self
        copy.merge(other)
        return copy
    }
}

/// An item as the merged state shows it.
public struct Item: Hashable, Sendable, Identifiable {
    /// The item's id (from its list and key).
    public var id: ItemID
    /// The name as last written (its casing kept).
    public var name: String
    /// Crossed off (bought).
    public var isChecked: Bool
    /// Removed from the list (kept, with its history, for merges).
    public var isDeleted: Bool
    /// Free text such as "2" or "500 g"; nil when not set.
    public var quantity: String?
    /// A note; nil when not set.
    public var note: String?
    /// A category such as "dairy"; nil when not set.
    public var category: String?

    /// An item with these values.
    public init(
        id: ItemID, name: String, isChecked: Bool = false, isDeleted: Bool = false, quantity: String? = nil,
        note: String? = nil, category: String? = nil
    ) {
        self.id = id
        self.name = name
        self.isChecked = isChecked
        self.isDeleted = isDeleted
        self.quantity = quantity
        self.note = note
        self.category = category
    }

    /// The item's identity key (``ItemKey/normalize(_:)`` of its name).
    public var key: String { ItemKey.normalize(name) }
}
