public import BasketCore
import SQLite

/// A shop of a list: its name and aisle order (hand-set, pinned, learned from trips).
public struct Shop: Hashable, Sendable, Identifiable {
    /// The shop's id (from the list and its first name's key).
    public var id: ItemID
    /// Its name as last written.
    public var name: String
    /// Whether it was removed from the list.
    public var isRemoved: Bool
    /// The aisle order set by hand (empty: the list's aisle order).
    public var order: [String]
    /// The aisles an owner pinned.
    public var pinned: [String]
    /// What the trips taught; nil before the first trip and after the order is set by hand.
    public var learned: ShopOrder.Learned?

    /// A shop with these parts.
    public init(
        id: ItemID, name: String, isRemoved: Bool = false, order: [String] = [], pinned: [String] = [],
        learned: ShopOrder.Learned? = nil
    ) {
        self.id = id
        self.name = name
        self.isRemoved = isRemoved
        self.order = order
        self.pinned = pinned
        self.learned = learned
    }

    /// The order the shop is walked in, for a list whose own aisle order is `listAisles`.
    public func aisles(listAisles: [String]) -> [String] {
        ShopOrder.order(base: order.isEmpty ? listAisles : order, pinned: pinned, learned: learned)
    }

    /// The aisle `item` is in at this shop: the one taught there, else its category.
    public func aisle(of item: Item) -> String? {
        ShopPlaces.parse(item.places)[id] ?? item.category
    }
}

/// An item bought again and again, and when it is due.
public struct Usual: Hashable, Sendable {
    /// The item as it stands.
    public var item: Item
    /// How often and when it was bought.
    public var pattern: Usuals.Pattern

    /// Whether it is due at `now` (Unix ms).
    public func isDue(at now: UInt64) -> Bool { Int64(now) >= pattern.due }

    /// Whether it is on the list to buy (not removed, not checked).
    public var isOnList: Bool { !item.isDeleted && !item.isChecked }
}

/// A trip this device is on: the shop and when it began (this device's clock).
public struct Trip: Hashable, Sendable {
    /// The shop.
    public var shop: ItemID
    /// When the trip began (Unix ms).
    public var started: UInt64
}

/// Shops, their orders, item marks and places, trips and usuals.
extension Replica {
    // MARK: Shops

    /// The shops of `list`, removed ones only with `removed`, by name.
    public func shops(in list: ListID, removed: Bool = false) throws -> [Shop] {
        try locked { try Self.loadShops(list, $0) }
            .filter { removed || !$0.isRemoved }
            .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
    }

    static func loadShops(_ list: ListID, _ db: Connection) throws -> [Shop] {
        let statement = try db.cached(
            """
            SELECT i.id, i.registers FROM items i JOIN lists l ON l.no = i.list
            WHERE l.id = ?1 AND i.name IS NULL AND i.id != zeroblob(16)
            """)
        try statement.bind(list.raw.bytes, at: 1)
        defer { statement.reset() }
        var shops: [Shop] = []
        while let row = try statement.step() {
            var shop = Shop(id: ItemID(raw: ID128(row.blob128(0))), name: "")
            try row.withBlob(1) { blob in
                try Records.forEach(in: blob) { field, register in
                    switch (field, register.value) {
                    case (.shop, .text(let name)): shop.name = name
                    case (.shopRemoved, .bool(let removed)): shop.isRemoved = removed
                    case (.order, .text(let text)): shop.order = aisleNames(text)
                    case (.pinned, .text(let text)): shop.pinned = aisleNames(text)
                    case (.learned, .text(let text)): shop.learned = ShopOrder.Learned(text: text)
                    default: break
                    }
                }
            }
            if !shop.name.isEmpty { shops.append(shop) }
        }
        return shops
    }

    /// The shop of `list` named `name` (by key, else by a unique beginning of its name).
    /// - Throws: ``ReplicaError/noSuchShop(_:)``.
    public func shop(named name: String, in list: ListID) throws -> Shop {
        let shops = try self.shops(in: list)
        let key = ItemKey.normalize(name)
        if let exact = shops.first(where: { ItemKey.normalize($0.name) == key }) { return exact }
        let starting = shops.filter { !key.isEmpty && ItemKey.normalize($0.name).hasPrefix(key) }
        guard starting.count == 1 else { throw ReplicaError.noSuchShop(name) }
        return starting[0]
    }

    /// Adds a shop to `list` (a removed one of the same name comes back, with its order).
    @discardableResult
    public func addShop(_ name: String, to list: ListID) throws -> Shop {
        let clean = try Self.cleanName(name, for: .shop)
        let key = ItemKey.normalize(clean)
        return try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            let all = try Self.loadShops(list, writer.db)
            if let live = all.first(where: { !$0.isRemoved && ItemKey.normalize($0.name) == key }) {
                throw ReplicaError.nameTaken(existing: live.name)
            }
            // The id of the name's key, unless a shop renamed since holds it: then the next free one.
            var id = shopID(list, key: key)
            for n in 2...9 {
                guard let holder = all.first(where: { $0.id == id }), !holder.isRemoved else { break }
                id = shopID(list, key: "\(key) #\(n)")
            }
            var shop = all.first { $0.id == id } ?? Shop(id: id, name: clean)
            shop.name = clean
            shop.isRemoved = false
            writer.write(list, id, .shop, .text(clean))
            writer.write(list, id, .shopRemoved, .bool(false))
            return shop
        }
    }

    /// Renames a shop; its id, order and marks stay.
    public func renameShop(_ id: ItemID, to name: String, in list: ListID) throws {
        let clean = try Self.cleanName(name, for: .shop)
        try performLocal { writer in
            let all = try Self.loadShops(list, writer.db)
            guard all.contains(where: { $0.id == id && !$0.isRemoved }) else {
                throw ReplicaError.noSuchShop(id.description)
            }
            if let other = all.first(where: {
                $0.id != id && !$0.isRemoved && ItemKey.normalize($0.name) == ItemKey.normalize(clean)
            }) {
                throw ReplicaError.nameTaken(existing: other.name)
            }
            writer.write(list, id, .shop, .text(clean))
        }
    }

    /// Removes a shop from the list: items marked for it only are bought anywhere again.
    public func removeShop(_ id: ItemID, in list: ListID) throws {
        try performLocal { writer in
            guard try Self.loadShops(list, writer.db).contains(where: { $0.id == id }) else {
                throw ReplicaError.noSuchShop(id.description)
            }
            writer.write(list, id, .shopRemoved, .bool(true))
        }
    }

    /// Sets a shop's aisle order by hand (empty: the list's), which starts its learning anew.
    public func setShopOrder(_ aisles: [String], of shop: ItemID, in list: ListID) throws {
        let text = try Self.aisleText(aisles, for: .order)
        try performLocal { writer in
            guard try Self.loadShops(list, writer.db).contains(where: { $0.id == shop }) else {
                throw ReplicaError.noSuchShop(shop.description)
            }
            writer.write(list, shop, .order, text.map(Value.text) ?? .null)
            writer.write(list, shop, .learned, .null)
        }
    }

    /// Pins aisles of a shop (they keep their place in its hand-set order whatever trips say);
    /// the set replaces the pinned aisles (empty: none). On a shared list only an owner may.
    public func setPinned(_ aisles: [String], of shop: ItemID, in list: ListID) throws {
        let text = try Self.aisleText(aisles, for: .pinned)
        try performLocal { writer in
            guard try Self.loadShops(list, writer.db).contains(where: { $0.id == shop }) else {
                throw ReplicaError.noSuchShop(shop.description)
            }
            let state = try Self.loadSyncState(list, writer.db)
            if let role = state.role, role != .owner { throw ReplicaError.notOwner(list: list, role: role) }
            writer.write(list, shop, .pinned, text.map(Value.text) ?? .null)
        }
    }

    /// Aisle names as a register keeps them ("produce, dairy"), each cleaned like a category and
    /// once; nil for none. A name holding a comma is refused.
    static func aisleText(_ aisles: [String], for field: Field) throws -> String? {
        var names: [String] = []
        for name in aisles {
            let clean = try cleanName(name, for: .category)
            guard !clean.contains(",") else { throw ReplicaError.invalidOperation("an aisle name holds no comma") }
            if !names.contains(where: { ItemKey.normalize($0) == ItemKey.normalize(clean) }) { names.append(clean) }
        }
        guard !names.isEmpty else { return nil }
        let text = names.joined(separator: ", ")
        do throws(ItemName.Problem) {
            try ItemName.check(text, for: field)
        } catch {
            throw ReplicaError.invalidName(error)
        }
        return text
    }

    // MARK: Items and shops

    /// Marks items for some shops only (empty: bought anywhere).
    @discardableResult
    public func markItems(_ ids: [ItemID], for shops: [ItemID], in list: ListID) throws -> [Item] {
        guard shops.count <= ShopMarks.maxShops else {
            throw ReplicaError.invalidOperation("an item is marked for at most \(ShopMarks.maxShops) shops")
        }
        let value = ShopMarks.format(shops).map(Value.text) ?? .null
        return try performLocal { writer in
            try ids.map { id in
                var item = try Self.require(writer.item(id, in: list), id)
                writer.write(list, id, .shops, value)
                item.shops = value.textValue
                return item
            }
        }
    }

    /// Teaches where an item is in a shop ("wrong aisle?"): `aisle` there from now on (nil forgets).
    @discardableResult
    public func teachAisle(_ aisle: String?, of id: ItemID, at shop: ItemID, in list: ListID) throws -> Item {
        let clean = try aisle.map { try Self.cleanName($0, for: .category) }
        if let clean, clean.contains(";") || clean.contains("=") {
            throw ReplicaError.invalidOperation("an aisle taught at a shop holds no ';' or '='")
        }
        return try performLocal { writer in
            var item = try Self.require(writer.item(id, in: list), id)
            var places = ShopPlaces.parse(item.places)
            places[shop] = clean
            let text = ShopPlaces.format(places)
            if let text {
                do throws(ItemName.Problem) {
                    try ItemName.check(text, for: .places)
                } catch {
                    throw ReplicaError.invalidName(error)
                }
            }
            writer.write(list, id, .places, text.map(Value.text) ?? .null)
            item.places = text
            return item
        }
    }

    // MARK: Trips

    private static func tripKey(_ list: ListID) -> String { "trip.\(list)" }

    /// The trip this device is on for `list`, if any.
    public func trip(of list: ListID) throws -> Trip? {
        guard let text = try setting(Self.tripKey(list)) else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 2, let shop = ItemID(hex: parts[0]), let started = UInt64(parts[1]) else { return nil }
        return Trip(shop: shop, started: started)
    }

    /// Begins a trip to `shop`: what this device checks off from now on teaches the shop's order
    /// when the trip ends (``finishTrip(in:)``).
    public func startTrip(at shop: ItemID, in list: ListID) throws -> Trip {
        let trip = Trip(shop: shop, started: configuration.wallClock())
        try setSetting(Self.tripKey(list), "\(shop) \(trip.started)")
        return trip
    }

    /// Ends the trip this device is on for `list`: the aisles it checked items off in, in that
    /// order, move the shop's learned order (a write of its `learned` register) when they are two
    /// or more. Returns the shop with what it learned, or nil when there was no trip or it taught
    /// nothing.
    @discardableResult
    public func finishTrip(in list: ListID) throws -> Shop? {
        guard let trip = try trip(of: list) else { return nil }
        defer { try? setSetting(Self.tripKey(list), nil) }
        let aisles = try listAisles(list)
        return try performLocal(journal: false) { writer -> Shop? in
            guard var shop = try Self.loadShops(list, writer.db).first(where: { $0.id == trip.shop && !$0.isRemoved }),
                let no = try listNo(list, writer.db)
            else { return nil }
            // This device's check-offs since the trip began, in the order of their stamps.
            let since = HybridTimestamp(milliseconds: trip.started, counter: 0)
            var mine: [(HybridTimestamp, ItemID)] = []
            let rows = try writer.db.cached("SELECT id, checks FROM items WHERE list = ?1 AND purchases > 0")
            try rows.bind(no, at: 1)
            defer { rows.reset() }
            while let row = try rows.step() {
                let id = ItemID(raw: ID128(row.blob128(0)))
                for version in row.withBlob(1, Purchases.decode)
                where version.replica == writer.replica && version.timestamp >= since {
                    mine.append((version.timestamp, id))
                }
            }
            let checks = mine.sorted { $0.0 < $1.0 }.map(\.1)
            var visited: [String] = []
            for id in checks {
                if let item = try writer.item(id, in: list), let aisle = shop.aisle(of: item) { visited.append(aisle) }
            }
            guard Set(visited.map(ItemKey.normalize)).count >= 2 else { return nil }
            let learned = ShopOrder.learn(
                trip: visited, base: shop.order.isEmpty ? aisles : shop.order, pinned: shop.pinned,
                learned: shop.learned, at: Int64(writer.wall))
            var text = learned.text
            while text.utf8.count > Field.learned.maxBytes, let cut = text.lastIndex(of: ",") {
                text = String(text[..<cut])
            }
            writer.write(list, shop.id, .learned, .text(text))
            shop.learned = ShopOrder.Learned(text: text)
            return shop
        }
    }

    /// The list's own aisle order.
    func listAisles(_ list: ListID) throws -> [String] {
        try lists().first { $0.id == list }?.aisles ?? []
    }

    // MARK: Usuals

    /// The usuals of `list` (items bought at least three times, not dismissed since), due ones
    /// first (the longest due first), then by when they are due.
    public func usuals(in list: ListID) throws -> [Usual] {
        try locked { db -> [Usual] in
            guard let no = try listNo(list, db) else { return [] }
            // The items with three check-offs or more (the index items_usuals holds only those, its
            // condition written as this one), each read once.
            let rows = try db.cached(
                """
                SELECT id, \(ItemColumns.names()), checks FROM items
                WHERE list = ?1 AND purchases >= \(Usuals.minimumPurchases) AND name IS NOT NULL
                """)
            try rows.bind(no, at: 1)
            defer { rows.reset() }
            let checksColumn = Int32(1 + Field.itemFields.count)
            var usuals: [Usual] = []
            while let row = try rows.step() {
                let item = ItemColumns.item(from: row)
                let times = row.withBlob(checksColumn, Purchases.milliseconds).sorted()
                guard let pattern = Usuals.pattern(checks: times, dismissed: Usuals.dismissedAt(item.dismissed)) else {
                    continue
                }
                usuals.append(Usual(item: item, pattern: pattern))
            }
            return usuals.sorted {
                ($0.pattern.due, $0.item.name.lowercased()) < ($1.pattern.due, $1.item.name.lowercased())
            }
        }
    }

    /// Dismisses usuals ("not anymore"): purchases until now no longer count. With `back`, brings
    /// them back (their whole history counts again).
    @discardableResult
    public func dismissUsuals(_ ids: [ItemID], in list: ListID, back: Bool = false) throws -> [Item] {
        try performLocal { writer in
            try ids.map { id in
                var item = try Self.require(writer.item(id, in: list), id)
                let value: Value = back ? .null : .text(String(writer.wall))
                writer.write(list, id, .dismissed, value)
                item.dismissed = value.textValue
                return item
            }
        }
    }
}
