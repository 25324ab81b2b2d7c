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

    /// The items of list `no`, read by `load` when not known.
    mutating func items(of no: Int64, load: () throws -> Set<ItemID>) rethrows -> Set<ItemID> {
        if let known = sets[no] { return known }
        let loaded = try load()
        sets[no] = loaded
        total += loaded.count
        return loaded
    }

    /// Adds items a committed push brought to list `no` (if its set is known), then keeps the
    /// total within ``capacity``.
    mutating func add(_ items: Set<ItemID>, to no: Int64) {
        guard !items.isEmpty, var set = sets.removeValue(forKey: no) else { return }
        total -= set.count
        set.formUnion(items)
        total += set.count
        sets[no] = set
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

    var itemCount: Int { total }
}
