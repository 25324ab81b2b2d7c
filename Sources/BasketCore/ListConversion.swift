/// The ids a plain list's operations take when an owner encrypts it (docs/encryption.md,
/// "Converting a plain list"). An encrypted list's item ids are keyed, so every device that holds
/// the list as plain moves its operations, sent and unsent, to the new ids the same way, and an
/// item added by name after the conversion lands on the converted one. conversion.js is its
/// twin; the seal vectors hold them together.
///
/// What each new id is derived from (with the list's id key, ``keys(of:)``):
/// - an item: the key of its name (``ItemKey/normalize(_:)`` of the newest name written to it), so
///   "Milk" added later by name is the same item; an item no name of which is among the
///   operations keeps its old id's hex as its key (it is still one item, found by no name);
/// - a shop: its old id's hex (a shop keeps its id through renames, and two shops may share a
///   name's key with a number, so the name cannot say which it was);
/// - the list's own registers keep ``ItemID/list``.
///
/// The shop ids inside an item's `shops` and `places` values move with their shops. Versions,
/// fields and every other value stay as they were, so two devices converting the same write make
/// the same operation.
public enum ListConversion {
    /// What the new ids of `operations` are derived from: each item's key, and each shop's
    /// (its old id's hex), shops named only inside `shops` and `places` values included.
    public static func keys(of operations: [Op]) -> (items: [ItemID: String], shops: [ItemID: String]) {
        var names: [ItemID: (version: Version, key: String)] = [:]
        var items: [ItemID: String] = [:]
        var shops: [ItemID: String] = [:]
        for op in operations {
            switch op.field.target {
            case .list: continue
            case .shop: shops[op.item] = op.item.description
            case .item:
                items[op.item] = op.item.description
                if op.field == .name, case .text(let name) = op.value,
                    names[op.item].map({ $0.version < op.version }) ?? true
                {
                    names[op.item] = (op.version, ItemKey.normalize(name))
                }
                for shop in shopsNamed(in: op) { shops[shop] = shop.description }
            }
        }
        for (item, name) in names where !name.key.isEmpty { items[item] = name.key }
        return (items, shops)
    }

    /// `operations` moved to the new ids: `items` and `shops` map each old id (every one
    /// ``keys(of:)`` named) to its new one; an id missing from them stays as it is.
    public static func rekey(_ operations: [Op], items: [ItemID: ItemID], shops: [ItemID: ItemID]) -> [Op] {
        operations.map { op in
            var moved = op
            switch op.field.target {
            case .list: return op
            case .shop: moved.item = shops[op.item] ?? op.item
            case .item: moved.item = items[op.item] ?? op.item
            }
            guard case .text(let text) = op.value else { return moved }
            switch op.field {
            case .shops:
                moved.value = ShopMarks.format(ShopMarks.parse(text).map { shops[$0] ?? $0 }).map(Value.text) ?? .null
            case .places:
                let places = ShopPlaces.parse(text)
                moved.value =
                    ShopPlaces.format(
                        Dictionary(places.map { (shops[$0.key] ?? $0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
                    ).map(Value.text) ?? .null
            default: break
            }
            return moved
        }
    }

    /// The shops an item's operation names in its value (`shops`, `places`).
    static func shopsNamed(in op: Op) -> [ItemID] {
        guard case .text(let text) = op.value else { return [] }
        switch op.field {
        case .shops: return ShopMarks.parse(text)
        case .places: return Array(ShopPlaces.parse(text).keys)
        default: return []
        }
    }
}
