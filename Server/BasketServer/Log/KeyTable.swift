/// An open-addressing hash table (linear probing) whose keys are already uniformly random 64-bit
/// numbers (keyed hashes made by the caller, see `ListLogs`), so a key's bits pick its slot with
/// no hashing of its own. Several entries may share a key: the caller tells them apart by their
/// values. One array of entries, so a probe usually stays in one cache line.
struct KeyTable<Value> {
    fileprivate struct Entry {
        var key: UInt64  // 0: empty
        var value: Value
    }

    private var entries: [Entry] = []
    private var mask = 0
    private(set) var count = 0
    /// What an empty slot holds (never read as a value).
    private let filler: Value

    init(filler: Value, minimumCapacity: Int = 0) {
        self.filler = filler
        reserve(minimumCapacity)
    }

    /// The bytes the table's slots take.
    var bytes: Int { entries.count * MemoryLayout<Entry>.stride }

    /// Makes room for `count` entries without growing.
    mutating func reserve(_ count: Int) {
        var size = 8
        while size * 3 < count * 5 { size *= 2 }  // at most 60 % full
        guard size > entries.count else { return }
        let old = entries
        entries = Array(repeating: Entry(key: 0, value: filler), count: size)
        mask = size - 1
        self.count = 0
        for entry in old where entry.key != 0 { insert(entry.key, entry.value) }
    }

    private static func stored(_ key: UInt64) -> UInt64 { key == 0 ? 1 : key }

    /// The first value under `key` that `matches`, with its slot; nil when none does.
    func first(_ key: UInt64, where matches: (Value) throws -> Bool) rethrows -> (slot: Int, value: Value)? {
        guard count > 0 else { return nil }
        let key = Self.stored(key)
        var slot = Int(truncatingIfNeeded: key) & mask
        while entries[slot].key != 0 {
            let entry = entries[slot]
            if entry.key == key, try matches(entry.value) { return (slot, entry.value) }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Adds an entry (another under the same key may be there).
    mutating func insert(_ key: UInt64, _ value: Value) {
        if (count + 1) * 5 > entries.count * 3 { reserve(count + 1) }
        let key = Self.stored(key)
        var slot = Int(truncatingIfNeeded: key) & mask
        while entries[slot].key != 0 { slot = (slot + 1) & mask }
        entries[slot] = Entry(key: key, value: value)
        count += 1
    }

    /// Replaces the value in `slot` (from ``first(_:where:)``, with no change in between).
    mutating func replace(at slot: Int, with value: Value) {
        entries[slot].value = value
    }

    /// Removes the first entry under `key` that `matches`; false when there is none.
    @discardableResult
    mutating func remove(_ key: UInt64, where matches: (Value) -> Bool) -> Bool {
        guard var hole = first(key, where: matches)?.slot else { return false }
        // Backward-shift deletion: entries after the hole that may sit in it move back.
        var slot = hole
        while true {
            slot = (slot + 1) & mask
            let entry = entries[slot]
            guard entry.key != 0 else { break }
            let home = Int(truncatingIfNeeded: entry.key) & mask
            // The entry may move into the hole when its home is not in (hole, slot], cyclically.
            let fromHole = (slot - hole) & mask
            let fromHome = (slot - home) & mask
            if fromHome >= fromHole {
                entries[hole] = entry
                hole = slot
            }
        }
        entries[hole] = Entry(key: 0, value: filler)
        count -= 1
        return true
    }
}

extension KeyTable: Sendable where Value: Sendable {}
extension KeyTable.Entry: Sendable where Value: Sendable {}
