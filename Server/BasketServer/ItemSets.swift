import BasketCore

/// The items each list has held, for its quota: a push counts the items that are new to the list.
/// Kept in memory by ``SQLiteStore``'s writer (under its lock), read from the log when a push first
/// needs a list's (its distinct items: compaction keeps every register's latest operation), and
/// bounded by items over all lists (a list that does not fit is read again next time).
struct ItemSets {
    private var sets: [Int64: Set<ItemID>] = [:]
    private var total = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Makes sure list `no`'s items are known, reading them with `load` when they are not.
    mutating func load(_ no: Int64, _ load: () throws -> Set<ItemID>) rethrows {
        guard sets[no] == nil else { return }
        let loaded = try load()
        sets[no] = loaded
        total += loaded.count
    }

    /// Records `item` in list `no` (loaded first); true when the list had not held it.
    mutating func insert(_ item: ItemID, into no: Int64) -> Bool {
        guard sets[no]?.insert(item).inserted == true else { return false }
        total += 1
        return true
    }

    /// Takes back items of a push that was not kept (refused, or its commit failed).
    mutating func remove(_ items: [ItemID], from no: Int64) {
        for item in items where sets[no]?.remove(item) != nil { total -= 1 }
    }

    /// Keeps the total within ``capacity`` (after a commit: never while a push needs its list's).
    mutating func trim() {
        while total > capacity, let (evicted, items) = sets.first {
            sets[evicted] = nil
            total -= items.count
        }
    }

    /// Forgets list `no` (deleted), or every list (a commit failed after sets were read in it).
    mutating func forget(_ no: Int64? = nil) {
        guard let no else {
            sets.removeAll()
            total = 0
            return
        }
        total -= sets.removeValue(forKey: no)?.count ?? 0
    }
}
