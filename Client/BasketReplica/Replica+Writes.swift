public import BasketCore
import SQLite

/// Local writes: each public call stamps its writes with the hybrid clock, merges them through the
/// same engine as remote operations, queues them in the outbox and commits, all in one transaction.
extension Replica {
    /// Collects the writes of one local transaction and reads the state they start from.
    struct LocalWriter {
        let db: Connection
        var clock: HybridClock
        let replica: ReplicaID
        let wall: UInt64
        var operations: [Op] = []

        mutating func write(_ list: ListID, _ item: ItemID, _ field: Field, _ value: Value) {
            let version = Version(timestamp: clock.now(wallMilliseconds: wall), replica: replica)
            operations.append(Op(list: list, item: item, field: field, value: value, version: version))
        }

        /// The item as it stands in the file, removed or not (nil when it has no name yet).
        func item(_ id: ItemID, in list: ListID) throws -> Item? {
            try Replica.loadItem(id, in: list, db)
        }
    }

    /// Runs one local transaction; `body` reads state and queues writes. With `journal`, the
    /// registers the writes replace go to the undo journal as one step (``undo(in:)``).
    func performLocal<T>(journal: Bool = true, _ body: (inout LocalWriter) throws -> T) throws -> T {
        let (value, outcome) = try locked { db in
            try db.transaction {
                let offset = try db.scalar("SELECT value FROM meta WHERE key = 'clock_offset'")?.integerValue ?? 0
                var writer = LocalWriter(
                    db: db, clock: try loadClock(db), replica: try loadReplicaID(db),
                    wall: UInt64(max(0, Int64(configuration.wallClock()) + offset)))
                let value = try body(&writer)
                guard !writer.operations.isEmpty else { return (value, MergeOutcome()) }
                try Self.checkWritable(writer.operations, db)
                if journal { try Self.journal(writer.operations, db) }
                let outcome = try merge(writer.operations, db)
                for op in writer.operations { try Self.queue(op, db) }
                try saveClock(writer.clock, db)
                return (value, outcome)
            }
        }
        notify(ReplicaUpdate(origin: .local, lists: outcome.lists, items: outcome.items))
        return value
    }

    /// Refuses a write to a list this account may only view, or that is no longer shared with
    /// it: the transaction rolls back, nothing is written.
    static func checkWritable(_ operations: [Op], _ db: Connection) throws {
        for list in Set(operations.map(\.list)) {
            let state = try loadSyncState(list, db)
            if state.noLongerMember { throw ReplicaError.noLongerMember(list) }
            if let role = state.role, role == .viewer { throw ReplicaError.readOnly(list: list, role: role) }
            // An archived list takes nothing but its unarchiving.
            if try isArchived(list, db),
                operations.contains(where: { $0.list == list && !($0.field == .archived && $0.value == .bool(false)) })
            {
                throw ReplicaError.archived(list)
            }
        }
    }

    static func isArchived(_ list: ListID, _ db: Connection) throws -> Bool {
        guard
            let blob = try db.query(
                "SELECT registers FROM items WHERE list = (SELECT no FROM lists WHERE id = ?) AND id = zeroblob(16)",
                .blob(list.raw.bytes), map: { $0.blob(0) }
            ).first
        else { return false }
        var archived = false
        try blob.withUnsafeBytes { buffer in
            try Records.forEach(in: buffer) { field, register in
                if field == .archived { archived = register.value == .bool(true) }
            }
        }
        return archived
    }

    /// Puts a local write in the outbox (in the transaction that merged it), as its line of the
    /// text encoding: the form it is sent in.
    static func queue(_ op: Op, _ db: Connection) throws {
        let insert = try db.cached("INSERT INTO outbox(list, item, line) VALUES (?1, ?2, ?3)")
        var line: [UInt8] = []
        OperationCodec.appendLine(op, to: &line)
        try insert.bind(op.list.raw.bytes, at: 1)
        try insert.bind(op.item.raw.bytes, at: 2)
        try insert.bind(line, at: 3)
        try insert.runToCompletion()
    }

    // MARK: Lists

    /// Creates a list with a new random id.
    /// - Parameters:
    ///   - title: the list's title.
    ///   - language: the language its aisles are named in ("en"; ``setLanguage(_:of:)``).
    ///   - encrypted: whether it is encrypted end to end (new keys from the configuration's
    ///     keyring, kept in this file); nil for the configuration's ``Configuration/encryptNewLists``.
    ///     Without a keyring every list is plain.
    /// - Throws: ``ReplicaError/listExists(_:)`` when a list with the same title key exists.
    @discardableResult
    public func createList(title: String, language: String? = nil, encrypted: Bool? = nil) throws -> ListInfo {
        let clean = try Self.cleanName(title)
        if try lists().contains(where: { ItemKey.normalize($0.title) == ItemKey.normalize(clean) }) {
            throw ReplicaError.listExists(clean)
        }
        let code = try language.map(Self.checkedLanguage)
        let id = ListID.random()
        if let keyring = configuration.keyring, encrypted ?? configuration.encryptNewLists {
            try setSetting(Self.keysSetting + id.description, keyring.makeKeys(for: id))
        }
        try performLocal { writer in
            writer.write(id, .list, .title, .text(clean))
            if let code { writer.write(id, .list, .language, .text(code)) }
        }
        var info = ListInfo(id: id, title: clean, itemCount: 0, uncheckedCount: 0)
        info.language = code
        return info
    }

    /// Sets the language a list's aisles are named in ("de"): every device files the items it
    /// adds under aisles named in it. On a shared list only an owner may (the server refuses others).
    /// - Throws: ``ReplicaError/invalidOperation(_:)`` for a code that is not 2 or 3 letters a–z.
    public func setLanguage(_ language: String, of list: ListID) throws {
        let code = try Self.checkedLanguage(language)
        try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            let state = try Self.loadSyncState(list, writer.db)
            if let role = state.role, role != .owner { throw ReplicaError.notOwner(list: list, role: role) }
            writer.write(list, .list, .language, .text(code))
        }
    }

    /// Whether `code` is a language's code as a list keeps it: 2 or 3 letters a–z ("en", "de").
    static func isLanguageCode(_ code: String) -> Bool {
        (2...3).contains(code.utf8.count)
            && code.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    static func checkedLanguage(_ code: String) throws -> String {
        guard isLanguageCode(code) else {
            throw ReplicaError.invalidOperation("a language is 2 or 3 letters a–z ('en', 'de'), not '\(code)'")
        }
        return code
    }

    /// Renames a list.
    public func renameList(_ list: ListID, to title: String) throws {
        let clean = try Self.cleanName(title)
        try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            writer.write(list, .list, .title, .text(clean))
        }
    }

    /// Sets a list's aisle order: category names in the order of the shop (an empty array
    /// clears it). Each name is cleaned like a category; a name holding a comma is refused.
    public func setAisles(_ aisles: [String], of list: ListID) throws {
        let text = try Self.aisleText(aisles, for: .aisles)
        try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            writer.write(list, .list, .aisles, text.map(Value.text) ?? .null)
        }
    }

    /// Archives a list (read-only on every device until unarchived) or unarchives it. On a
    /// shared list only an owner may (the server refuses others).
    public func setArchived(_ archived: Bool, list: ListID) throws {
        try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            let state = try Self.loadSyncState(list, writer.db)
            if let role = state.role, role != .owner { throw ReplicaError.notOwner(list: list, role: role) }
            writer.write(list, .list, .archived, .bool(archived))
        }
    }

    // MARK: Items

    /// Adds items by name. A name whose key is already on the list is never added twice: a removed
    /// item comes back, a checked one is unchecked, an unchecked one keeps its name. Either way the
    /// item's `checked` and `deleted` registers are written, so the add wins over a remove or check
    /// made earlier on another device that this one has not seen yet.
    /// All names are checked first; when one is invalid nothing is written.
    /// - Throws: ``ReplicaError/invalidName(_:)``.
    @discardableResult
    public func add(_ names: [String], to list: ListID) throws -> [AddResult] {
        try add(names.map { NewItem(name: $0) }, to: list)
    }

    /// An item to add: its name and, optionally, a quantity (kept in the `quantity` register) and
    /// the category it takes when it has none (the catalogue's aisle for the name).
    public struct NewItem: Hashable, Sendable {
        /// The item's name.
        public var name: String
        /// Its quantity; nil to leave the quantity as it is.
        public var quantity: String?
        /// The category for an item that has none yet; nil to leave the category as it is.
        public var category: String?
        /// A note typed with it ("for the cake"); nil to leave the note as it is.
        public var note: String?
        /// The line it was typed as ("2 onions, chopped"); kept when it says more than the name.
        public var typed: String?

        /// An item to add, with a quantity and a note when they were given, a category for it
        /// when it has none, and the line it was `typed` as.
        public init(
            name: String, quantity: String? = nil, category: String? = nil, note: String? = nil, typed: String? = nil
        ) {
            self.name = name
            self.quantity = quantity
            self.category = category
            self.note = note
            self.typed = typed
        }
    }

    /// Adds items with quantities; see ``add(_:to:)-([String],_)``. A quantity given is added to
    /// the quantity of an item still to buy (`Quantity.adding(_:to:)` in BasketCore: "2" and "1" make "3",
    /// "500 g" and "1 pack" "500 g + 1 pack") and replaces that of an item brought back; none
    /// leaves it as it is. A note given joins the note of an item still to buy ("a; b") and
    /// replaces another's. A category given is written when the item has none. The line typed is
    /// written when it says more than the name and differs from the one kept.
    @discardableResult
    public func add(_ newItems: [NewItem], to list: ListID) throws -> [AddResult] {
        let cleaned = try newItems.map {
            try NewItem(
                name: Self.cleanName($0.name), quantity: $0.quantity.map { try Self.cleanName($0, for: .quantity) },
                category: $0.category.map { try Self.cleanName($0, for: .category) },
                note: $0.note.map { try Self.cleanName($0, for: .note) },
                typed: $0.typed.map { try Self.cleanName($0, for: .typed) })
        }
        return try performLocal { writer in
            var results: [AddResult] = []
            var pending: [ItemID: Item] = [:]
            for new in cleaned {
                let (name, quantity, category) = (new.name, new.quantity, new.category)
                let id = itemID(list, key: ItemKey.normalize(name))
                let existing = try pending[id] ?? writer.item(id, in: list)
                var item = Item(id: id, name: name)
                let outcome: AddResult.Outcome
                switch existing {
                case nil:
                    writer.write(list, id, .name, .text(name))
                    writer.write(list, id, .checked, .bool(false))
                    writer.write(list, id, .deleted, .bool(false))
                    outcome = .added
                case let current? where current.isDeleted:
                    if current.name != name { writer.write(list, id, .name, .text(name)) }
                    if current.isChecked { writer.write(list, id, .checked, .bool(false)) }
                    writer.write(list, id, .deleted, .bool(false))
                    item = current
                    item.name = name
                    outcome = .restored
                case let current? where current.isChecked:
                    writer.write(list, id, .checked, .bool(false))
                    writer.write(list, id, .deleted, .bool(false))
                    item = current
                    outcome = .unchecked
                case let current?:
                    // Already on the list, to buy: still written, so that adding wins over a
                    // concurrent remove or check made earlier on another device (docs/conflicts.md).
                    writer.write(list, id, .checked, .bool(false))
                    writer.write(list, id, .deleted, .bool(false))
                    item = current
                    outcome = .alreadyOnList
                }
                var quantityChanged = false
                // An amount added to one still to buy is added to it ("2 milk" and "1 milk" make
                // 3); a restored or unchecked item's old amount was for a trip already made.
                let amount = quantity.map { added in
                    outcome == .alreadyOnList ? item.quantity.map { Quantity.adding(added, to: $0) } ?? added : added
                }
                if let amount, amount != item.quantity || existing == nil {
                    writer.write(list, id, .quantity, .text(try Self.cleanName(amount, for: .quantity)))
                    quantityChanged = existing != nil
                    item.quantity = amount
                }
                if let category, item.category == nil {
                    writer.write(list, id, .category, .text(category))
                    item.category = category
                }
                if let note = new.note.map({ Self.note($0, adding: outcome == .alreadyOnList ? item.note : nil) }),
                    note != item.note
                {
                    writer.write(list, id, .note, .text(note))
                    item.note = note
                }
                if let typed = new.typed, typed != name, typed != item.typed {
                    writer.write(list, id, .typed, .text(typed))
                    item.typed = typed
                }
                item.isChecked = false
                item.isDeleted = false
                pending[id] = item
                results.append(AddResult(item: item, outcome: outcome, quantityChanged: quantityChanged))
            }
            return results
        }
    }

    /// The note an add leaves: `added` joined to the `existing` note of an item still to buy
    /// ("for the cake; for the lasagne"), unless it is in it already or the two exceed a note's
    /// bytes (then the note stays as it is).
    static func note(_ added: String, adding existing: String?) -> String {
        guard let existing, !existing.isEmpty else { return added }
        if existing.contains(added) { return existing }
        let joined = existing + "; " + added
        return joined.utf8.count <= Field.note.maxBytes ? joined : existing
    }

    /// Crosses an item off.
    @discardableResult
    public func check(_ item: ItemID, in list: ListID) throws -> Item {
        try setChecked([item], in: list) { _ in true }[0]
    }

    /// Puts a checked item back to "to buy".
    @discardableResult
    public func uncheck(_ item: ItemID, in list: ListID) throws -> Item {
        try setChecked([item], in: list) { _ in false }[0]
    }

    /// Checks an unchecked item, unchecks a checked one.
    @discardableResult
    public func toggle(_ item: ItemID, in list: ListID) throws -> Item {
        try setChecked([item], in: list) { !$0 }[0]
    }

    /// Crosses several items off as one step (one ``undo(in:)`` takes it back); all or none.
    @discardableResult
    public func check(_ items: [ItemID], in list: ListID) throws -> [Item] {
        try setChecked(items, in: list) { _ in true }
    }

    /// Puts several checked items back to "to buy", as one step.
    @discardableResult
    public func uncheck(_ items: [ItemID], in list: ListID) throws -> [Item] {
        try setChecked(items, in: list) { _ in false }
    }

    /// Toggles several items, each on its own state, as one step.
    @discardableResult
    public func toggle(_ items: [ItemID], in list: ListID) throws -> [Item] {
        try setChecked(items, in: list) { !$0 }
    }

    private func setChecked(_ ids: [ItemID], in list: ListID, _ newValue: (Bool) -> Bool) throws -> [Item] {
        try performLocal { writer in
            try ids.map { id in
                var item = try Self.require(writer.item(id, in: list), id)
                item.isChecked = newValue(item.isChecked)
                writer.write(list, id, .checked, .bool(item.isChecked))
                return item
            }
        }
    }

    /// Removes an item from the list. Its history stays; adding the name again brings it back.
    @discardableResult
    public func remove(_ id: ItemID, in list: ListID) throws -> Item {
        try remove([id], in: list)[0]
    }

    /// Removes several items as one step (one ``undo(in:)`` brings them back); all or none.
    @discardableResult
    public func remove(_ ids: [ItemID], in list: ListID) throws -> [Item] {
        try performLocal { writer in
            try ids.map { id in
                var item = try Self.require(writer.item(id, in: list), id)
                item.isDeleted = true
                writer.write(list, id, .deleted, .bool(true))
                return item
            }
        }
    }

    /// Removes every checked item of the list, as one step (one ``undo(in:)`` brings them all
    /// back; adding one again brings it back too). Returns the items removed.
    @discardableResult
    public func removeChecked(in list: ListID) throws -> [Item] {
        try performLocal { writer in
            guard try listNo(list, writer.db) != nil else { throw ReplicaError.noSuchList(list.description) }
            let checked = try loadItems(list, where: "name IS NOT NULL AND deleted = 0 AND checked = 1", writer.db)
                .sortedForDisplay()
            for item in checked { writer.write(list, item.id, .deleted, .bool(true)) }
            return checked
        }
    }

    /// Sets an optional item field (one of `Field.settableItemFields`: quantity, note,
    /// category); nil clears it.
    @discardableResult
    public func set(_ field: Field, to value: String?, of id: ItemID, in list: ListID) throws -> Item {
        guard Field.settableItemFields.contains(field) else {
            let names = Field.settableItemFields.map(\.rawValue)
            throw ReplicaError.invalidOperation(
                "only \(names.dropLast().joined(separator: ", ")) and \(names.last ?? "") can be set this way")
        }
        let cleaned = try value.map { try Self.cleanName($0, for: field) }.map(Value.text) ?? .null
        return try performLocal { writer in
            var item = try Self.require(writer.item(id, in: list), id)
            writer.write(list, id, field, cleaned)
            item[field] = cleaned
            return item
        }
    }

    /// Renames an item. A new name with the same key only changes the display name; a name with
    /// another key moves the item: a new id with every field copied, and the old item removed.
    /// - Throws: ``ReplicaError/nameTaken(existing:)`` when another item on the list has the new key.
    @discardableResult
    public func rename(_ id: ItemID, to newName: String, in list: ListID) throws -> Item {
        let name = try Self.cleanName(newName)
        return try performLocal { writer in
            var item = try Self.require(writer.item(id, in: list), id)
            let newID = itemID(list, key: ItemKey.normalize(name))
            if newID == id {
                if item.name != name { writer.write(list, id, .name, .text(name)) }
                item.name = name
                return item
            }
            if let other = try writer.item(newID, in: list), !other.isDeleted {
                throw ReplicaError.nameTaken(existing: other.name)
            }
            // Every field moves: a field added to `Field.itemFields` is copied without a change here.
            item.id = newID
            item.name = name
            item.isDeleted = false
            for field in Field.itemFields { writer.write(list, newID, field, item[field]) }
            writer.write(list, id, .deleted, .bool(true))
            return item
        }
    }

    // MARK: Remote operations

    /// Merges operations from another replica in one transaction: all of them or none.
    ///
    /// Operations are validated first; a timestamp more than 5 minutes ahead of this replica's
    /// wall clock is refused with ``ReplicaError/clockSkew(_:)``. Known operations are ignored, so
    /// applying a batch twice, or batches in any order, gives the same state.
    @discardableResult
    public func merge(_ remote: [Op]) throws -> MergeResult {
        try merge(remote, saving: nil)
    }

    /// Validates `remote` (each operation, unless `isValidated` says its decoding did, and its
    /// clock against this device's), merges it and, when pulled from a server, stores the list's
    /// new `syncState` in the same transaction: a crash leaves both or neither, so a page is never
    /// merged twice or skipped.
    @discardableResult
    func merge(_ remote: [Op], saving syncState: SyncState?, isValidated: Bool = false) throws -> MergeResult {
        guard !remote.isEmpty else {
            if let syncState { try saveSyncState(syncState) }
            return MergeResult(new: 0, duplicates: 0, changedItems: 0)
        }
        var latest = HybridTimestamp.zero
        for index in remote.indices {  // not `enumerated()`: it copied each operation
            if !isValidated {
                do throws(Op.Problem) {
                    try remote[index].validate()
                } catch {
                    throw ReplicaError.invalidOperation("operation \(index + 1): \(error)")
                }
            }
            if remote[index].timestamp > latest { latest = remote[index].timestamp }
        }
        let wall = try correctedWall()
        do throws(ClockSkewError) {
            try HybridClock.check(latest, wallMilliseconds: wall)
        } catch {
            throw ReplicaError.clockSkew(error)
        }
        let outcome = try locked { db in
            try db.transaction {
                var clock = try loadClock(db)
                try? clock.receive(latest, wallMilliseconds: wall)
                // Pulled from a server: what other devices did is noticed (Replica+News.swift),
                // unless this is the list's first pull here (all of it is new: nothing to mark).
                let pulledBefore = try syncState.map { state in
                    try db.scalar("SELECT cursor FROM sync_lists WHERE list = ?", .blob(state.list.raw.bytes))?
                        .integerValue ?? 0
                }
                let watch = (pulledBefore ?? 0) > 0 ? NewsWatch(me: replicaID) : nil
                let outcome = try merge(remote, db, noticing: watch)
                if watch != nil { try keep(outcome, db) }
                try saveClock(clock, db)
                if let syncState { try Self.saveSyncState(syncState, db) }
                return outcome
            }
        }
        notify(ReplicaUpdate(origin: .remote, lists: outcome.lists, items: outcome.items))
        return outcome.result
    }

    /// The wall clock with the correction learnt from the server.
    func correctedWall() throws -> UInt64 {
        UInt64(max(0, Int64(configuration.wallClock()) + (try clockOffset())))
    }

    /// `raw` cleaned as a value of `field` (BasketCore's rules, shared with the server).
    static func cleanName(_ raw: String, for field: Field = .name) throws -> String {
        do throws(ItemName.Problem) {
            return try ItemName.clean(raw, for: field)
        } catch {
            throw ReplicaError.invalidName(error)
        }
    }

    static func require(_ item: Item?, _ id: ItemID) throws -> Item {
        guard let item else { throw ReplicaError.noSuchItem(id.description) }
        return item
    }
}
