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
    /// The line the item was last added with, when it said more than the name; nil when none.
    public var typed: String?
    /// The shops it is marked for, as stored (``ShopMarks``); nil when bought anywhere.
    public var shops: String?
    /// Its aisle in each shop where one was taught, as stored (``ShopPlaces``); nil when none.
    public var places: String?
    /// When it stopped being a usual, in milliseconds as decimal text; nil when it never did.
    public var dismissed: String?

    /// An item with these values.
    public init(
        id: ItemID, name: String, isChecked: Bool = false, isDeleted: Bool = false, quantity: String? = nil,
        note: String? = nil, category: String? = nil, typed: String? = nil, shops: String? = nil,
        places: String? = nil, dismissed: String? = nil
    ) {
        self.id = id
        self.name = name
        self.isChecked = isChecked
        self.isDeleted = isDeleted
        self.quantity = quantity
        self.note = note
        self.category = category
        self.typed = typed
        self.shops = shops
        self.places = places
        self.dismissed = dismissed
    }

    /// An item whose fields are `values` (a field missing holds its ``Field/initialValue``; an
    /// item without a name has the name "").
    public init(id: ItemID, values: (Field) -> Value?) {
        self.init(id: id, name: "")
        for field in Field.itemFields { self[field] = values(field) ?? field.initialValue }
    }

    /// The item's identity key (``ItemKey/normalize(_:)`` of its name).
    public var key: String { ItemKey.normalize(name) }

    /// The value of one of the item's fields, as its register holds it: the one place that maps a
    /// ``Field`` to a property, so that code walking ``Field/itemFields`` (a rename's copy, `set`,
    /// the replica's columns, the JSON output) handles a new field once it is added here. A list
    /// field reads as null; writing one, or a value of the wrong kind, changes nothing.
    public subscript(field: Field) -> Value {
        get {
            switch field {
            case .name: .text(name)
            case .checked: .bool(isChecked)
            case .deleted: .bool(isDeleted)
            case .quantity: quantity.map(Value.text) ?? .null
            case .note: note.map(Value.text) ?? .null
            case .category: category.map(Value.text) ?? .null
            case .typed: typed.map(Value.text) ?? .null
            case .shops: shops.map(Value.text) ?? .null
            case .places: places.map(Value.text) ?? .null
            case .dismissed: dismissed.map(Value.text) ?? .null
            case .title, .aisles, .archived, .language, .shop, .shopRemoved, .order, .pinned, .learned: .null
            }
        }
        set {
            switch field {
            case .name: name = newValue.textValue ?? ""
            case .checked: isChecked = newValue.boolValue ?? false
            case .deleted: isDeleted = newValue.boolValue ?? false
            case .quantity: quantity = newValue.textValue
            case .note: note = newValue.textValue
            case .category: category = newValue.textValue
            case .typed: typed = newValue.textValue
            case .shops: shops = newValue.textValue
            case .places: places = newValue.textValue
            case .dismissed: dismissed = newValue.textValue
            case .title, .aisles, .archived, .language, .shop, .shopRemoved, .order, .pinned, .learned: break
            }
        }
    }
}

/// An item in JSON (the CLI's `--json`, the conformance vectors): `id` as hex and every field of
/// ``Field/itemFields`` named as the field, null rather than left out; decoding needs them all.
extension Item: Codable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        static let id = Key(stringValue: "id")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(id.description, forKey: .id)
        for field in Field.itemFields { try c.encode(self[field], forKey: Key(stringValue: field.rawValue)) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        guard let id = ItemID(hex: try c.decode(String.self, forKey: .id)) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "not an item id")
        }
        var values: [Field: Value] = [:]
        for field in Field.itemFields {
            let key = Key(stringValue: field.rawValue)
            guard c.contains(key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: c.codingPath, debugDescription: "no \(field)"))
            }
            if try c.decodeNil(forKey: key) {
                values[field] = .null
            } else if field.kind == .flag {
                values[field] = .bool(try c.decode(Bool.self, forKey: key))
            } else {
                values[field] = .text(try c.decode(String.self, forKey: key))
            }
        }
        self.init(id: id) { values[$0] }
    }
}
