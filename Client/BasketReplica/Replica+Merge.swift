import BasketCore
import SQLite

/// The merge engine: every write, local or remote, goes through `merge(_:_:)` inside a transaction.
///
/// A batch is first grouped by row (list, item) in memory; each touched row is then read once,
/// its registers merged with the batch's writes (the greatest version wins), its history
/// extended with the writes it did not know, and written once. So the cost is one read and at most
/// one write per touched item, however many operations the batch holds for it.
extension Replica {
    /// Every field, in code order, made once (`Field.allCases` makes a new array at each use).
    static let fields = Field.allCases

    struct RowKey: Hashable {
        var listNo: Int64
        var item: ItemID
    }

    struct HistoryKey: Hashable {
        var field: Field
        var version: Version
    }

    /// The state of one row while a batch is merged into it.
    struct RowState {
        var registers: [Register?] = Array(repeating: nil, count: Replica.fields.count)
        var history: [UInt8] = []
        /// The identities in `history`; built only when a write loses (a possible duplicate).
        var known: Set<HistoryKey>?
        var registersChanged = false
        var historyChanged = false
        /// Whether the file has the row (read by ``load(_:_:)``): it is then updated in place.
        var exists = false
        /// Every check-off (`checked = true` write) the row's history holds, as `checks` keeps them
        /// (Purchases.swift), and how many: the new ones are appended by ``merge(_:_:)``.
        var checks: [UInt8] = []
        var purchases: Int64 = 0
        /// Whether ``merge(_:_:)`` added a check-off: only then are the check-off columns (and the
        /// index of the usuals) written.
        var checksChanged = false

        subscript(field: Field) -> Register? {
            get { registers[Int(field.code)] }
            set { registers[Int(field.code)] = newValue }
        }

        mutating func knownWrites() throws -> Set<HistoryKey> {
            if let known { return known }
            var set = Set<HistoryKey>()
            try history.withUnsafeBytes { buffer in
                try Records.forEach(in: buffer) { field, register in
                    set.insert(HistoryKey(field: field, version: register.version))
                }
            }
            known = set
            return set
        }

        /// Merges one write; returns whether it was new to this row.
        mutating func merge(_ field: Field, _ incoming: Register) throws -> Bool {
            if let current = self[field] {
                if current.version == incoming.version && current.value == incoming.value { return false }
                if beats(incoming, current, field) {
                    // A write that beats the winner cannot be in the history already.
                    self[field] = incoming
                    registersChanged = true
                } else {
                    let key = HistoryKey(field: field, version: incoming.version)
                    if try knownWrites().contains(key) { return false }
                    known?.insert(key)
                }
            } else {
                self[field] = incoming
                registersChanged = true
            }
            Records.append(field: field, register: incoming, to: &history)
            historyChanged = true
            if field == .checked, incoming.value == .bool(true) {
                Purchases.append(incoming.version, to: &checks)
                purchases += 1
                checksChanged = true
            }
            #if DEBUG
                if PlantedRule.plants(.quantityClearsCheck), field == .quantity, self[field] == incoming {
                    let unchecked = Register(value: .bool(false), version: incoming.version)
                    if self[.checked].map({ $0.isBeaten(by: unchecked.version, value: unchecked.value) }) ?? true {
                        self[.checked] = unchecked
                    }
                }
            #endif
            return true
        }

        /// Whether `incoming` beats `current` (the register's rule, or a planted wrong one).
        func beats(_ incoming: Register, _ current: Register, _ field: Field) -> Bool {
            #if DEBUG
                if PlantedRule.plants(.removeBeatsLaterAdd), field == .deleted, incoming.value != current.value {
                    return incoming.value == .bool(true)
                }
            #endif
            return current.isBeaten(by: incoming.version, value: incoming.value)
        }
    }

    struct MergeOutcome {
        var result = MergeResult(new: 0, duplicates: 0, changedItems: 0)
        var lists: Set<ListID> = []
        var items: Set<ItemID> = []
        /// What other devices did, when the merge was asked to notice it (``NewsWatch``).
        var news: [NewsWatch.Seen] = []
        var lost: [NewsWatch.Lost] = []
    }

    /// One operation's write, as the merge needs it.
    struct Write {
        var field: Field
        var register: Register
    }

    /// A batch grouped by row: which rows it touches (in key order) and which operations each gets.
    struct Batch {
        var rows: [RowKey] = []
        /// The writes of row `r` are `writes[start[r]..<start[r + 1]]`.
        var start: [Int] = []
        /// Each operation's field and register, moved next to the other writes of its row: the
        /// merge then reads them in order. Read through their indices instead, in row order, the
        /// operations (shuffled, 80 bytes each) were a cache miss apiece, a sixth of a merge.
        var writes: [Write] = []
        /// Row indices in (list, item) order: B-tree reads and writes in order touch each page once.
        var order: [Int] = []
        /// Lists first seen in this batch: none of their rows exist yet.
        var newLists: Set<Int64> = []
        var listIDs: [Int64: ListID] = [:]
    }

    /// Merges `operations` (already validated) into the file: group them by row, then for each
    /// row load it, merge its writes and write it back. Call inside a transaction.
    func merge(_ operations: [Op], _ db: Connection, noticing watch: NewsWatch? = nil) throws -> MergeOutcome {
        var outcome = MergeOutcome()
        var batch = try group(operations, db)
        let select = try db.cached(Self.selectRow)
        let write = try db.cached(Self.writeRow)
        let update = try db.cached(Self.updateRow)
        let updateChecks = try db.cached(Self.updateRowAndChecks)
        for rowIndex in batch.order {
            let key = batch.rows[rowIndex]
            var row = batch.newLists.contains(key.listNo) ? RowState() : try load(key, select)
            let before = watch == nil ? nil : row.registers
            let writes = batch.start[rowIndex]..<batch.start[rowIndex + 1]
            try batch.writes.withUnsafeMutableBufferPointer { all in
                // In place: a slice of the array was copied on its way to the merge.
                var rowWrites = UnsafeMutableBufferPointer(rebasing: all[writes])
                rowWrites.sort { $0.register.version < $1.register.version }
                try mergeWrites(UnsafeBufferPointer(rowWrites), into: &row, counting: &outcome.result)
            }
            guard row.historyChanged else { continue }
            try store(row, at: key, !row.exists ? write : row.checksChanged ? updateChecks : update)
            if row.registersChanged {
                if let watch, let before, let list = batch.listIDs[key.listNo] {
                    watch.notice(list, key.item, before: before, after: row.registers, into: &outcome)
                }
                outcome.result.changedItems += 1
                outcome.lists.insert(batch.listIDs[key.listNo]!)
                if key.item == .list {
                    try db.run(
                        "UPDATE lists SET title = ? WHERE no = ?",
                        row[.title]?.value.textValue.map { .text($0) } ?? .null,
                        .integer(key.listNo))
                } else {
                    outcome.items.insert(key.item)
                }
            }
        }
        return outcome
    }

    /// Reads one row for the merge (``load(_:_:)``).
    static let selectRow = "SELECT registers, history, purchases, checks FROM items WHERE list = ?1 AND id = ?2"

    /// Writes one row back (``store(_:at:_:)`` binds it).
    static let writeRow = """
        INSERT OR REPLACE INTO items(list, id, \(ItemColumns.names()), registers, history, purchases, checks)
        VALUES (?1, ?2, \(ItemColumns.parameters(from: 3)), ?\(historyParameter - 1), ?\(historyParameter),
            ?\(historyParameter + 1), ?\(historyParameter + 2))
        """

    /// Rewrites a row the file has whose check-offs did not change (``store(_:at:_:)`` binds it as
    /// it binds ``writeRow``, without the check-offs): an UPDATE naming `purchases` would rewrite
    /// the usuals' index entry of every usual the merge touches.
    static let updateRow = """
        UPDATE items SET \(ItemColumns.assignments(from: 3)),
            registers = ?\(historyParameter - 1), history = ?\(historyParameter)
        WHERE list = ?1 AND id = ?2
        """

    /// Rewrites a row the file has, with its check-offs.
    static let updateRowAndChecks = """
        UPDATE items SET \(ItemColumns.assignments(from: 3)),
            registers = ?\(historyParameter - 1), history = ?\(historyParameter),
            purchases = ?\(historyParameter + 1), checks = ?\(historyParameter + 2)
        WHERE list = ?1 AND id = ?2
        """

    /// The last parameter of a row write: list, id, the item columns, registers, history.
    static let historyParameter = Int32(2 + Field.itemFields.count + 2)

    /// Step 1: numbers the rows the batch touches (creating lists it is the first to mention) and
    /// counting-sorts the operation indices by row, without an array per row.
    func group(_ operations: [Op], _ db: Connection) throws -> Batch {
        var batch = Batch()
        var listNos: [ListID: Int64] = [:]
        var rowNumbers = RowNumbers(capacity: operations.count)
        var rowOfOperation = [Int32](repeating: 0, count: operations.count)
        var lastList: (ListID, Int64)?
        // By index: `enumerated()` copied each operation (and retained its text) to read two ids.
        for index in operations.indices {
            let list = operations[index].list
            let listNo: Int64
            if let lastList, lastList.0 == list {
                listNo = lastList.1
            } else if let known = listNos[list] {
                listNo = known
            } else if let existing = try self.listNo(list, db) {
                listNo = existing
                listNos[list] = listNo
            } else {
                try db.run("INSERT INTO lists(id) VALUES (?)", .blob(list.raw.bytes))
                listNo = db.lastInsertRowID
                listNos[list] = listNo
                batch.newLists.insert(listNo)
            }
            lastList = (list, listNo)
            let key = RowKey(listNo: listNo, item: operations[index].item)
            rowOfOperation[index] = rowNumbers.number(of: key, next: &batch.rows)
        }
        batch.start = [Int](repeating: 0, count: batch.rows.count + 1)
        for row in rowOfOperation { batch.start[Int(row) + 1] += 1 }
        for i in 0..<batch.rows.count { batch.start[i + 1] += batch.start[i] }
        var fill = batch.start
        batch.writes = Array(
            repeating: Write(field: .name, register: Register(value: .null, version: .zero)), count: operations.count)
        for (index, row) in rowOfOperation.enumerated() {
            batch.writes[fill[Int(row)]] = Write(
                field: operations[index].field,
                register: Register(value: operations[index].value, version: operations[index].version))
            fill[Int(row)] += 1
        }
        let rows = batch.rows
        batch.order = rows.indices.sorted { (rows[$0].listNo, rows[$0].item) < (rows[$1].listNo, rows[$1].item) }
        batch.listIDs = Dictionary(uniqueKeysWithValues: listNos.map { ($1, $0) })
        return batch
    }

    /// The number of each row a batch touches, in order of first appearance: an open-addressing
    /// table over the item ids' bits (the first 128 bits of a SHA-256, so already uniform), which
    /// a `Dictionary` would hash again for each of the batch's operations.
    struct RowNumbers {
        private var slots: [Int32]  // -1: empty; else an index in `rows`
        private let mask: Int

        init(capacity: Int) {
            var size = 16
            while size < capacity * 2 { size *= 2 }
            slots = Array(repeating: -1, count: size)
            mask = size - 1
        }

        /// The number of `key`'s row, appending it to `rows` when it is new.
        mutating func number(of key: RowKey, next rows: inout [RowKey]) -> Int32 {
            let mixed = (key.item.raw.low ^ UInt64(bitPattern: key.listNo)) &* 0x9E37_79B9_7F4A_7C15
            var slot = Int(truncatingIfNeeded: mixed >> 32) & mask
            while true {
                let number = slots[slot]
                if number < 0 {
                    slots[slot] = Int32(rows.count)
                    rows.append(key)
                    return Int32(rows.count - 1)
                }
                if rows[Int(number)] == key { return number }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Step 2: the row's winning registers and history as the file has them (empty when new).
    func load(_ key: RowKey, _ select: Statement) throws -> RowState {
        var row = RowState()
        try withIDBytes(key.item) { idBytes in
            select.reset()
            try select.bind(key.listNo, at: 1)
            try select.bind(idBytes, at: 2)
            if let found = try select.step() {
                try found.withBlob(0) { blob in
                    try Records.forEach(in: blob) { field, register in row[field] = register }
                }
                row.history = found.blob(1)
                row.purchases = found.int64(2)
                row.checks = found.blob(3)
                row.exists = true
            }
            select.reset()
        }
        return row
    }

    /// Step 3: merges the row's writes, given oldest first: then each write either beats the
    /// register or is a duplicate of it, and the history is consulted only for writes older than
    /// what the file had.
    func mergeWrites(_ writes: UnsafeBufferPointer<Write>, into row: inout RowState, counting result: inout MergeResult)
        throws
    {
        for write in writes {
            if try row.merge(write.field, write.register) {
                result.new += 1
            } else {
                result.duplicates += 1
            }
        }
    }

    /// Step 4: writes the row back, its winning values in their columns for reading.
    func store(_ row: RowState, at key: RowKey, _ write: Statement) throws {
        var registers: [UInt8] = []
        for field in Self.fields {
            if let register = row[field] { Records.append(field: field, register: register, to: &registers) }
        }
        try withIDBytes(key.item) { idBytes in
            try write.bind(key.listNo, at: 1)
            try write.bind(idBytes, at: 2)
            // The list's own row keeps its title in `lists.title`.
            try ItemColumns.bind({ row[$0]?.value }, isList: key.item == .list, to: write, from: 3)
            try write.bind(registers, at: Self.historyParameter - 1)
            try write.bind(row.history, at: Self.historyParameter)
            if write.parameterCount > Self.historyParameter {
                try write.bind(row.purchases, at: Self.historyParameter + 1)
                try write.bind(row.checks, at: Self.historyParameter + 2)
            }
            try write.runToCompletion()
        }
    }

    func listNo(_ list: ListID, _ db: Connection) throws -> Int64? {
        try db.scalar("SELECT no FROM lists WHERE id = ?", .blob(list.raw.bytes))?.integerValue
    }
}

/// Calls `body` with the 16 big-endian bytes of an item id, without allocating.
func withIDBytes<T>(_ id: ItemID, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
    var raw = (id.raw.high.bigEndian, id.raw.low.bigEndian)
    return try withUnsafeBytes(of: &raw) { try body($0) }
}
