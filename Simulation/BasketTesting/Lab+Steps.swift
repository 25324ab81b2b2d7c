import BasketCore
public import BasketModel
import BasketReplica
import BasketSearch
import BasketServer
import BasketTrace
import SeededRandom
import Synchronization

/// What a lab's devices, network, clock and server do.
extension Lab {
    /// An edit a device makes to the shared list, by item name.
    public enum Edit: Sendable, Equatable {
        /// Adds items as typed in the CLI ("Milk, Bread": two; "2 milk": milk, quantity 2); again,
        /// if one is there: unchecks it and brings it back.
        case add(String)
        /// Checks an item.
        case check(String)
        /// Unchecks an item.
        case uncheck(String)
        /// Checks or unchecks an item.
        case toggle(String)
        /// Removes an item.
        case remove(String)
        /// Renames an item (old name, new name).
        case rename(String, String)
        /// Sets an item's quantity.
        case quantity(String, String)
        /// Renames the list.
        case title(String)
        /// Puts an item in an aisle (its category).
        case aisle(String, String)
        /// Adds a shop to the list.
        case addShop(String)
        /// Sets a shop's aisle order by hand.
        case shopOrder(String, [String])
        /// Pins an aisle of a shop (owners).
        case pin(String, String)
        /// Marks an item for these shops only (none: anywhere).
        case mark(String, [String])
        /// A trip to a shop: checks these items off in this order, then ends, teaching its order.
        case trip(String, [String])
        /// Says an item is no usual anymore.
        case dismiss(String)

        /// Whether the edit adds items or renames the list (which `maybe` does not take).
        public var isAddOrTitle: Bool {
            switch self {
            case .add, .title: true
            default: false
            }
        }

        /// Whether the edit is of one item that must be on the list (not an add, not the title).
        public var isOfAnItem: Bool {
            switch self {
            case .add, .title, .addShop, .shopOrder, .pin, .trip: false
            case .check, .uncheck, .toggle, .remove, .rename, .quantity, .aisle, .mark, .dismiss: true
            }
        }

        /// Whether a device showing `list` makes it: ``applies(onList:)`` for its items, and an
        /// edit of a shop needs the shop (an add, none of that name; a mark, every shop named).
        public func applies(to list: ReferenceModel.List) -> Bool {
            let live = Set(list.shops.values.filter { !$0.removed }.map { ItemKey.normalize($0.name) })
            switch self {
            case .addShop(let name): return !live.contains(ItemKey.normalize(name))
            case .shopOrder(let shop, _), .pin(let shop, _), .trip(let shop, _):
                return live.contains(ItemKey.normalize(shop))
            case .mark(_, let shops):
                guard shops.allSatisfy({ live.contains(ItemKey.normalize($0)) }) else { return false }
            default: break
            }
            return applies(onList: Set(list.items.values.map { ItemKey.normalize($0.name) }))
        }

        /// Whether a device whose list holds the items of `keys` (normalized names) makes it: an
        /// item's edit needs the item, a rename also a new name no other item has.
        public func applies(onList keys: Set<String>) -> Bool {
            switch self {
            case .add, .title, .addShop, .shopOrder, .pin, .trip: return true
            case .check(let name), .uncheck(let name), .toggle(let name), .remove(let name), .quantity(let name, _),
                .aisle(let name, _), .mark(let name, _), .dismiss(let name):
                return keys.contains(ItemKey.normalize(name))
            case .rename(let old, let new):
                let (from, to) = (ItemKey.normalize(old), ItemKey.normalize(new))
                return keys.contains(from) && (from == to || !keys.contains(to))
            }
        }
    }

    /// `device` makes `edit`; an edit of an item not on its list (by its key), or a rename to a
    /// name another item has, or of a shop it does not have, is skipped, as a person would:
    /// returns whether it was made.
    /// - Throws: ``Finding`` when the edit's writes do not beat what the device had seen of
    ///   the same registers (the hybrid clock's promise), or the edit failed.
    @discardableResult
    public func edit(_ device: String, _ edit: Edit) throws -> Bool {
        guard edit.applies(to: try ScenarioRun.shown(replica(device), list: list)) else { return false }
        do {
            try make(edit, on: device)
        } catch ReplicaError.noSuchItem, ReplicaError.nameTaken, ReplicaError.noSuchShop, ReplicaError.notOwner {
            return false
        } catch let error as ReplicaError {
            throw Finding(description: "\(device): \(edit) failed: \(error)")
        }
        return true
    }

    /// `device` makes `edit` whatever its list holds; its writes are checked against what the
    /// device had seen (the hybrid clock's promise) and drawn on the trace.
    /// - Throws: the replica's error (an item not on the list, a refused write), or ``Finding``.
    func make(_ edit: Edit, on device: String) throws {
        let replica = self.replica(device)
        let seen = try replica.operations(in: list)
        func id(_ name: String) -> ItemID { ItemID(list: list, key: ItemKey.normalize(name)) }
        do {
            switch edit {
            case .add(let text):
                // As typed in the CLI: "Milk, Bread" is two items; "2 milk" is milk, quantity 2;
                // "kaese" is the Käse on the list.
                let items = try replica.items(in: list, filter: .all)
                let entries = EntryParser.resolvingSpellings(
                    EntryParser.parseAll(text, existingKeys: Set(items.map(\.key))), names: items.map(\.name))
                _ = try replica.add(entries.map { Replica.NewItem(name: $0.name, quantity: $0.quantity) }, to: list)
            case .check(let name): _ = try replica.check(id(name), in: list)
            case .uncheck(let name): _ = try replica.uncheck(id(name), in: list)
            case .toggle(let name): _ = try replica.toggle(id(name), in: list)
            case .remove(let name): _ = try replica.remove(id(name), in: list)
            case .rename(let old, let new): _ = try replica.rename(id(old), to: new, in: list)
            case .quantity(let name, let value): _ = try replica.set(.quantity, to: value, of: id(name), in: list)
            case .title(let title): try replica.renameList(list, to: title)
            case .aisle(let name, let aisle): _ = try replica.set(.category, to: aisle, of: id(name), in: list)
            case .addShop(let name): try replica.addShop(name, to: list)
            case .shopOrder(let shop, let aisles):
                try replica.setShopOrder(aisles, of: try replica.shop(named: shop, in: list).id, in: list)
            case .pin(let shop, let aisle):
                let found = try replica.shop(named: shop, in: list)
                try replica.setPinned(found.pinned + [aisle], of: found.id, in: list)
            case .mark(let name, let shops):
                let ids = try shops.map { try replica.shop(named: $0, in: list).id }
                try replica.markItems([id(name)], for: ids, in: list)
            case .trip(let shop, let names):
                _ = try replica.startTrip(at: try replica.shop(named: shop, in: list).id, in: list)
                // Checked off in this order, those on the list (as `basket check` takes them).
                for name in names where (try? replica.item(id(name), in: list))?.isDeleted == false {
                    _ = try replica.check(id(name), in: list)
                }
                try replica.finishTrip(in: list)
            case .dismiss(let name): try replica.dismissUsuals([id(name)], in: list)
            }
        } catch let error as ReplicaError {
            throw error
        } catch {
            throw Finding(description: "\(device): \(edit) failed: \(error)")
        }
        try ScenarioRun.observeEdit(device, seen: seen, now: try replica.operations(in: list), recorder: recorder)
    }

    /// `device` adds `name` (see ``edit(_:_:)``).
    @discardableResult
    public func add(_ name: String, on device: String) throws -> Bool { try edit(device, .add(name)) }

    /// `device` checks `name` (see ``edit(_:_:)``).
    @discardableResult
    public func check(_ name: String, on device: String) throws -> Bool { try edit(device, .check(name)) }

    /// `device` unchecks `name` (see ``edit(_:_:)``).
    @discardableResult
    public func uncheck(_ name: String, on device: String) throws -> Bool { try edit(device, .uncheck(name)) }

    /// `device` removes `name` (see ``edit(_:_:)``).
    @discardableResult
    public func remove(_ name: String, on device: String) throws -> Bool { try edit(device, .remove(name)) }

    /// One sync of `device`, its requests meeting the faults drawn from `faults` (0: none). A
    /// request that does not reach the server, or an answer that does not come back, is the
    /// network's doing and not an error; returns whether the sync went through.
    /// - Throws: ``Finding`` for any other failure.
    @discardableResult
    public func sync(_ device: String, faults: UInt64 = 0) async throws -> Bool {
        try await sync(device, faults: faults, everyList: false)
    }

    /// ``sync(_:faults:)`` of the lab's list, or (`everyList`) of every list as `basket sync`
    /// does it: the server's list of lists first, so the device learns its role on each, and
    /// that it is no longer a member of one.
    func sync(_ device: String, faults: UInt64, everyList: Bool) async throws -> Bool {
        let member = members[index(device)]
        let list = self.list
        let replica = member.replica
        network.faults(faults)
        defer { network.faults(nil) }
        let before =
            recorder == nil ? nil : (ops: try replica.operations(in: list), waiting: try replica.outbox.count())
        var reached = false
        defer {
            if let recorder, let before, let ops = try? replica.operations(in: list),
                let waiting = try? replica.outbox.count()
            {
                let known = Set(before.ops)
                let pulled = ops.filter { !known.contains($0) && $0.version.replica != replica.replicaID }
                recorder.record(
                    .synced(
                        device: device, pushed: max(0, before.waiting - waiting), pulled: pulled,
                        reached: reached || !pulled.isEmpty || waiting < before.waiting))
            }
        }
        do {
            let reports = everyList ? try await member.engine.syncAll() : [try await member.engine.sync(list)]
            reached = true
            state.withLock {
                if reports.contains(where: { $0.restamped > 0 }) { $0.counters.clockCorrections += 1 }
                if reports.contains(where: \.epochChanged) { $0.counters.epochChanges += 1 }
            }
        } catch SyncError.unreachable {
        } catch {
            throw Finding(description: "\(device) sync failed: \(error)")
        }
        return reached
    }

    /// Every device not partitioned syncs, twice round (what the last one pushed reaches the first).
    public func syncAll() async throws {
        for _ in 0..<2 {
            for device in devices where !isPartitioned(device) { try await sync(device) }
        }
    }

    /// `device` loses the network: its requests are lost until ``heal(_:)``.
    public func partition(_ device: String) {
        let index = self.index(device)
        state.withLock { _ = $0.partitioned.insert(index) }
        recorder?.record(.offline(device: device))
    }

    /// `device` gets the network back.
    public func heal(_ device: String) {
        let index = self.index(device)
        state.withLock { _ = $0.partitioned.remove(index) }
        recorder?.record(.online(device: device))
    }

    /// Whether `device` is partitioned.
    public func isPartitioned(_ device: String) -> Bool {
        let index = self.index(device)
        return state.withLock { $0.partitioned.contains(index) }
    }

    /// The requests the network held back reach the server, in an order drawn from `order`;
    /// their answers are lost.
    public func deliverDelayed(order: UInt64 = 1) {
        for request in network.takeDelayed(order: order) { _ = try? deliver(request) }
    }

    /// Every clock (the devices' and the server's) moves on.
    public func advance(milliseconds: UInt64) {
        time.advance(milliseconds)
        recorder?.record(.timeMoved(milliseconds: Int64(milliseconds)))
    }

    /// The server restarts, its store kept.
    public func restartServer() throws {
        state.withLock { $0.counters.serverRestarts += 1 }
        closeServer()
        try openServer()
        recorder?.record(.serverRestarted)
    }

    /// The server's store is backed up (what ``loseServerData()`` goes back to).
    public func backupServer() throws {
        backups += 1
        guard state.withLock({ $0.service }) != nil else { return }
        let store = try SQLiteStore(path: storePath, fsyncEveryCommit: false)
        defer { store.close() }
        try store.backup(to: folder + "/backup-\(backups).sqlite")
        recorder?.record(.serverBackedUp)
    }

    /// The server loses what it stored since the last backup (restored from it, with new epochs:
    /// devices push everything again).
    public func loseServerData() throws {
        state.withLock { $0.counters.serverDataLosses += 1 }
        closeServer()
        _ = try SQLiteStore.restore(from: folder + "/backup-\(backups).sqlite", into: storePath)
        try openServer()
        recorder?.record(.serverLostData)
    }

    /// The end of a run: every device back online, the delayed requests delivered, and syncs
    /// round the devices until nothing waits (at least twice, at most eight times). Returns what
    /// stayed unsynced, nil when nothing did.
    @discardableResult
    public func settle() async throws -> Verdict? {
        let partitioned = state.withLock { state in
            defer { state.partitioned = [] }
            return state.partitioned
        }
        network.faults(nil)
        for index in partitioned.sorted() { recorder?.record(.online(device: devices[index])) }
        deliverDelayed(order: 1)
        for round in 0..<8 {
            for device in devices { try await sync(device) }
            let pending = try members.reduce(0) { $0 + (try $1.replica.outbox.count()) }
            if pending == 0 && round >= 1 { break }
        }
        for (index, member) in members.enumerated() where try member.replica.outbox.count() > 0 {
            return .unsynced(device: devices[index], operations: try member.replica.outbox.count())
        }
        return nil
    }
}
