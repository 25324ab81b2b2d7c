public import BasketCore
import SQLite

/// Reads: lists, items, history, every known operation, the outbox.
extension Replica {
    /// Every list this replica knows, by title.
    public func lists() throws -> [ListInfo] {
        try locked { db in
            try db.query(
                """
                SELECT l.id, l.title,
                       (SELECT count(*) FROM items i WHERE i.list = l.no AND i.name IS NOT NULL AND i.deleted = 0),
                       (SELECT count(*) FROM items i WHERE i.list = l.no AND i.name IS NOT NULL AND i.deleted = 0
                                                          AND i.checked = 0),
                       (SELECT registers FROM items i WHERE i.list = l.no AND i.id = zeroblob(16))
                FROM lists l
                """
            ) { row in
                var info = ListInfo(
                    id: ListID(raw: ID128(row.blob128(0))), title: row.string(1) ?? "(untitled)",
                    itemCount: Int(row.int64(2)), uncheckedCount: Int(row.int64(3)))
                if !row.isNull(4) {
                    try row.withBlob(4) { blob in
                        try Records.forEach(in: blob) { field, register in
                            switch (field, register.value) {
                            case (.aisles, .text(let text)): info.aisles = Self.aisleNames(text)
                            case (.archived, .bool(let archived)): info.isArchived = archived
                            case (.language, .text(let code)): info.language = Self.isLanguageCode(code) ? code : nil
                            default: break
                            }
                        }
                    }
                }
                return info
            }
            .sorted { ($0.title.lowercased(), $0.id) < ($1.title.lowercased(), $1.id) }
        }
    }

    /// The category names of an aisle order as stored ("produce, dairy").
    static func aisleNames(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.split(separator: " ").joined(separator: " ") }.filter { !$0.isEmpty }
    }

    /// The items of a list, unchecked first, then by name.
    public func items(in list: ListID, filter: ItemFilter = .onList) throws -> [Item] {
        var condition = "name IS NOT NULL"
        switch filter {
        case .onList: condition += " AND deleted = 0"
        case .unchecked: condition += " AND deleted = 0 AND checked = 0"
        case .checked: condition += " AND deleted = 0 AND checked = 1"
        case .all: break
        }
        return try locked { try loadItems(list, where: condition, $0) }.sortedForDisplay()
    }

    /// The items of a list matching an SQL `condition` on `items`, unsorted (in a transaction or
    /// with the lock held); none when the list is not here.
    func loadItems(_ list: ListID, where condition: String, _ db: Connection) throws -> [Item] {
        guard let no = try listNo(list, db) else { return [] }
        return try db.query(
            """
            SELECT id, \(ItemColumns.names()) FROM items
            WHERE list = ? AND \(condition)
            """, .integer(no), map: { ItemColumns.item(from: $0) })
    }

    /// Lowercased UTF-8 bytes of a name; ASCII without Unicode tables (most names).
    static func sortKey(_ name: String) -> [UInt8] {
        var bytes = Array(name.utf8)
        for i in bytes.indices {
            let b = bytes[i]
            if b >= 0x80 { return Array(name.lowercased().utf8) }
            if b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") { bytes[i] = b + 32 }
        }
        return bytes
    }

    /// One item, removed or not; nil when the list has no such item.
    public func item(_ id: ItemID, in list: ListID) throws -> Item? {
        try locked { try Self.loadItem(id, in: list, $0) }
    }

    static func loadItem(_ id: ItemID, in list: ListID, _ db: Connection) throws -> Item? {
        let statement = try db.cached(
            """
            SELECT i.id, \(ItemColumns.names(prefix: "i."))
            FROM items i JOIN lists l ON l.no = i.list
            WHERE l.id = ?1 AND i.id = ?2 AND i.name IS NOT NULL
            """)
        try statement.bind(list.raw.bytes, at: 1)
        try statement.bind(id.raw.bytes, at: 2)
        defer { statement.reset() }
        return try statement.step().map { ItemColumns.item(from: $0) }
    }

    /// Every write ever seen on an item's registers (or the list's, for `ItemID.list`), oldest
    /// first per field, with the winner of each register marked and why it won or lost.
    public func history(of id: ItemID, in list: ListID) throws -> [HistoryEntry] {
        let bytes = try locked { db -> [UInt8]? in
            guard let no = try listNo(list, db) else { return nil }
            return try db.scalar(
                "SELECT history FROM items WHERE list = ? AND id = ?", .integer(no), .blob(id.raw.bytes))?.blobValue
        }
        guard let bytes else { throw ReplicaError.noSuchItem(id.description) }
        let entries = try Records.decode(bytes)
        var winners: [Field: Register] = [:]
        for entry in entries {
            winners[entry.field] = winners[entry.field].map { $0.merging(entry.register) } ?? entry.register
        }
        return
            entries
            .sorted { ($0.field, $0.register.version) < ($1.field, $1.register.version) }
            .map { entry in
                let winner = winners[entry.field]!
                let op = Op(
                    list: list, item: id, field: entry.field, value: entry.register.value,
                    version: entry.register.version)
                if winner == entry.register {
                    return HistoryEntry(operation: op, isWinner: true, reason: "latest write: its register shows it")
                }
                let reason: String
                if winner.version.timestamp == entry.register.version.timestamp {
                    reason =
                        "same timestamp as the winner \(winner.version); replica \(winner.version.replica) "
                        + "has the higher id and wins the tie"
                } else {
                    reason = "superseded by the later write of \(winner.value) from replica \(winner.version.replica)"
                }
                return HistoryEntry(operation: op, isWinner: false, reason: reason)
            }
    }

    /// Every operation this replica knows (history included), of one list or of all, in the
    /// canonical order of `OperationCodec`. Exports and full re-pushes use it.
    public func operations(in list: ListID? = nil) throws -> [Op] {
        try operations(in: list, column: "history")
    }

    /// The newest write of each register of `list`'s items and of the list itself: its state,
    /// what a snapshot holds (docs/encryption.md, "Snapshots").
    public func currentOperations(in list: ListID) throws -> [Op] {
        try operations(in: list, column: "registers")
    }

    /// The writes kept in `column` (`history` or `registers`) of the items of `list`, or of every list.
    private func operations(in list: ListID?, column: String) throws -> [Op] {
        try locked { db in try operations(in: list, column: column, db) }
    }

    /// ``operations(in:column:)`` inside a transaction of the caller's.
    func operations(in list: ListID?, column: String, _ db: Connection) throws -> [Op] {
        do {
            var ops: [Op] = []
            var condition = ""
            var values: [SQLValue] = []
            if let list {
                guard let no = try listNo(list, db) else { return [] }
                condition = "WHERE i.list = ?"
                values.append(.integer(no))
            }
            let statement = try db.prepare(
                "SELECT l.id, i.id, i.\(column) FROM items i JOIN lists l ON l.no = i.list \(condition)")
            try statement.bind(values)
            while let row = try statement.step() {
                let listID = ListID(raw: ID128(row.blob128(0)))
                let itemID = ItemID(raw: ID128(row.blob128(1)))
                try row.withBlob(2) { blob in
                    try Records.forEach(in: blob) { field, register in
                        ops.append(
                            Op(
                                list: listID, item: itemID, field: field, value: register.value,
                                version: register.version))
                    }
                }
            }
            return ops.sorted(by: OperationCodec.canonicalLess)
        }
    }

    /// Local writes not yet acknowledged, oldest first.
    func pendingOperations(limit: Int = .max) throws -> [PendingOperation] {
        try locked { db in
            try db.query(
                "SELECT seq, list, item, line FROM outbox ORDER BY seq LIMIT ?",
                .integer(Int64(min(limit, Int(Int64.max)))),
                map: Self.pending(from:))
        }
    }

    /// Drops acknowledged local writes from the outbox, up to and including `sequence`.
    func acknowledge(through sequence: Int64) throws {
        try locked { try $0.run("DELETE FROM outbox WHERE seq <= ?", .integer(sequence)) }
    }
}

extension Replica {
    /// When each item of a list went onto the to-buy list: its creation and every add that brought
    /// it back (a write of `deleted = false` or `checked = false`), in Unix milliseconds.
    public func addTimes(in list: ListID) throws -> [(item: Item, times: [UInt64])] {
        let rows = try locked { db -> [(Item, [UInt8])] in
            guard let no = try listNo(list, db) else { return [] }
            return try db.query(
                """
                SELECT history, id, \(ItemColumns.names()) FROM items
                WHERE list = ? AND name IS NOT NULL
                """, .integer(no)
            ) { row in (ItemColumns.item(from: row, id: 1), row.blob(0)) }
        }
        return try rows.map { item, history in
            var times: [UInt64] = []
            try history.withUnsafeBytes { buffer in
                try Records.forEach(in: buffer) { field, register in
                    if (field == .deleted || field == .checked) && register.value == .bool(false) {
                        times.append(register.version.timestamp.milliseconds)
                    }
                }
            }
            // A new item writes both registers at once: count that add once.
            var distinct: [UInt64] = []
            for time in times.sorted() where distinct.last.map({ time - $0 > 1_000 }) ?? true { distinct.append(time) }
            return (item, distinct)
        }
    }
}

/// Items of one aisle (category) of a list, as a shop walk shows them.
public struct AisleGroup: Hashable, Sendable {
    /// The category as the items name it; nil for items without one.
    public var category: String?
    /// The group's items, by name.
    public var items: [Item]
}

extension AisleGroup {
    /// Groups items by category in the order of `aisles` (matched without case or accents),
    /// then the categories the aisle order does not name (alphabetically), then the items
    /// without a category; each group by name. What `basket ls` shows for the items to buy.
    public static func grouping(_ items: [Item], aisles: [String]) -> [AisleGroup] {
        var byKey: [String: AisleGroup] = [:]
        var uncategorised: [Item] = []
        for item in items.sortedForDisplay() {
            guard let category = item.category, !ItemKey.normalize(category).isEmpty else {
                uncategorised.append(item)
                continue
            }
            byKey[ItemKey.normalize(category), default: AisleGroup(category: category, items: [])].items.append(item)
        }
        // A group the aisle order names is headed as the order spells it.
        var groups: [AisleGroup] = aisles.compactMap { aisle in
            byKey.removeValue(forKey: ItemKey.normalize(aisle)).map { AisleGroup(category: aisle, items: $0.items) }
        }
        groups += byKey.sorted { $0.key < $1.key }.map(\.value)
        if !uncategorised.isEmpty { groups.append(AisleGroup(category: nil, items: uncategorised)) }
        return groups
    }
}

extension [Item] {
    /// Unchecked before checked, then by name without case, then by id; each name is lowercased once.
    public func sortedForDisplay() -> [Item] {
        map { (item: $0, name: Replica.sortKey($0.name)) }
            .sorted { a, b in
                if a.item.isDeleted != b.item.isDeleted { return !a.item.isDeleted }
                if a.item.isChecked != b.item.isChecked { return !a.item.isChecked }
                if a.name != b.name { return a.name.lexicographicallyPrecedes(b.name) }
                return a.item.id < b.item.id
            }
            .map(\.item)
    }
}
