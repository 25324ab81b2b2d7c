import BasketCLI
import BasketCore
import Foundation
import SQLite
import Synchronization
import TestSupport

@testable import BasketReplica

/// Local writes both clients must make alike: each step of a case is a command on one
/// list at a given wall-clock reading, and what it must write (operations, in order, with their
/// timestamps), what it says, how many changes then wait, and the whole outbox after it. A real
/// SQLite `Replica` with a fixed replica id and an injected wall clock makes them.
extension Vectors {
    struct LocalWriteCase: Codable, Equatable {
        var about: String
        /// The id the replica writes under.
        var replica: String
        /// Operations another device wrote before (canonical encoding), applied as a pull would.
        var setup: String
        /// The wall clock (Unix ms) when the setup is applied.
        var setupWall: UInt64
        var steps: [LocalStep]
        /// The list's state after the last step.
        var state: State
    }

    /// One command. `action`: add (`entries`), check, uncheck, remove, set (`field`, `value`;
    /// null clears), rename (`value`: the new name), undo, aisles (`aisles`), archive
    /// (`archived`), correctClock (`serverTime`), restamp (after a refusal of the server),
    /// discard (the changes the server refused, dropped: Replica.discardPending).
    /// `item` names the item acted on (its key gives its id).
    struct LocalStep: Codable, Equatable {
        var wall: UInt64
        var action: String
        var entries: [EntryValue]?
        var item: String?
        var field: String?
        var value: String?
        var aisles: [String]?
        var archived: Bool?
        var serverTime: UInt64?
        /// Expected: the operations written (the outbox's new entries, a re-stamp's included), in
        /// order, as [item, field, timestamp, replica, value].
        var writes: [[String]]
        /// Expected, for an add: each name's outcome and whether its quantity changed.
        var outcomes: [AddOutcome]?
        /// Expected, for an add: what it says (the CLI's Phrases.added, the web's addPhrases).
        var phrases: [String]?
        /// Expected: the ReplicaError code when the command is refused (then nothing is written).
        var error: String?
        /// Expected, for correctClock and restamp: how many writes got a new stamp.
        var restamped: Int?
        /// Expected, for discard: how many writes were dropped.
        var discarded: Int?
        /// Expected: the changes waiting afterwards, as a person counts them.
        var changes: Int
        /// Expected, after a re-stamp and after the last step: the whole outbox, sorted.
        var pending: [[String]]?
    }

    struct AddOutcome: Codable, Equatable {
        var outcome: String
        var quantityChanged: Bool
    }

    static let localReplica = ReplicaID(hex: "00000000000000b7")!
    static let otherReplica = ReplicaID(hex: "00000000000000a1")!

    static func localWriteCases() throws -> [LocalWriteCase] {
        let w: UInt64 = 1_764_000_000_000
        func add(_ wall: UInt64, _ entries: [(String, String?)], categories: [String?] = []) -> LocalStep {
            step(wall, "add") {
                $0.entries = entries.enumerated().map { i, entry in
                    EntryValue(name: entry.0, quantity: entry.1, category: i < categories.count ? categories[i] : nil)
                }
            }
        }
        func on(_ wall: UInt64, _ action: String, _ item: String, value: String? = nil, field: String? = nil)
            -> LocalStep
        {
            step(wall, action) {
                $0.item = item
                $0.value = value
                $0.field = field
            }
        }
        let familyStart: [LocalStep] = [
            add(w, [("Milk", nil)]),
            add(w, [("bread", "2"), ("eggs", nil)]),
            add(w + 1000, [("milk", "3")]),
            add(w + 1000, [("MILK", nil)]),
            // Amounts added to bread still to buy: summed in its unit, kept beside in another.
            add(w + 1000, [("bread", "1")]),
            add(w + 1000, [("bread", "500 g"), ("Bread", "250 g")]),
            on(w + 2000, "check", "milk"),
            add(w + 3000, [("milk", nil)]),
            on(w + 4000, "remove", "eggs"),
            add(w + 5000, [("Eggs", "12"), ("Tea", nil), ("tea", "2")]),
        ]
        // Every settable field of bread, which the rename then carries (a new field joins both).
        let samples: [Field: String] = [.quantity: "4", .note: "sourdough, sliced", .category: "Bakery"]
        let setEvery = Field.settableItemFields.map {
            on(w + 6000, "set", "bread", value: samples[$0] ?? "value of \($0.rawValue)", field: $0.rawValue)
        }
        let family =
            familyStart + setEvery + [
                on(w + 6000, "set", "bread", value: "Rye", field: "name"),  // not settable: refused, nothing written
                on(w + 7000, "rename", "bread", value: "Rye bread"),
                on(w + 7000, "rename", "milk", value: "MILK"),
                on(w + 8000, "rename", "rye bread", value: "eggs"),
                add(w + 8000, [("ok", nil), ("a\u{202E}b", nil)]),
                on(w + 8000, "set", "nothing", value: "1", field: "quantity"),
                step(w + 9000, "undo"),
                step(w + 9000, "undo"),
                step(w + 4000, "undo"),  // the wall clock went back: the stamps still go forward
                on(w + 10000, "set", "tea", value: nil, field: "quantity"),
                step(w + 10000, "aisles") { $0.aisles = ["Bakery", "dairy", "bakery", " Produce "] },
                step(w + 10000, "archive") { $0.archived = true },
                add(w + 10000, [("Jam", nil)]),
                step(w + 11000, "archive") { $0.archived = false },
                on(w + 11000, "uncheck", "milk"),
                on(w + 11000, "check", "tea"),
                step(w + 12000, "undo"),
                // The catalogue's aisle goes to an item without a category, never over one.
                add(
                    w + 13000, [("Butter", nil), ("rye bread", nil), ("Eggs", nil)],
                    categories: ["Dairy & eggs", "Pantry", nil]),
                // A note typed with an add joins the note of an item still to buy; the line typed
                // is kept when it says more than the name, and written again only when it changes.
                step(w + 14000, "add") {
                    $0.entries = [
                        EntryValue(name: "onions", quantity: "2", note: "chopped", typed: "- 2 onions, chopped"),
                        EntryValue(name: "Jam", quantity: nil, typed: "Jam"),
                    ]
                },
                step(w + 15000, "add") {
                    $0.entries = [
                        EntryValue(name: "onions", quantity: "1", note: "for soup", typed: "1 onions (for soup)"),
                        EntryValue(name: "onions", quantity: nil, note: "chopped", typed: "1 onions (for soup)"),
                    ]
                },
                on(w + 16000, "check", "onions"),
                step(w + 17000, "add") {
                    $0.entries = [
                        EntryValue(name: "onions", quantity: nil, note: "for stew", typed: "onions (for stew)")
                    ]
                },
                step(w + 18000, "undo"),
            ]
        let hour: UInt64 = 3_600_000
        let clock: [LocalStep] = [
            add(w, [("Bread", nil)]),
            add(w + hour, [("Milk", nil)]),
            on(w + hour, "check", "milk"),
            step(w + hour + 1000, "correctClock") { $0.serverTime = w + 2000 },
            add(w + hour + 2000, [("Tea", "2")]),
            on(w + hour + 2000, "check", "bread"),
            step(w + hour + 2000, "restamp"),
            step(w + hour + 3000, "undo"),
            step(w + hour + 3000, "undo"),
        ]
        // A viewer's changes, refused by the server and dropped: every item they touched goes
        // back to what the other writes say (Milk unchecked with its quantity 1, no Cake), and
        // the writes after go on from the clock as it stood.
        let milk = ItemID(list: listID, key: "milk")
        func other(_ field: Field, _ value: Value, _ counter: UInt16) -> Op {
            Op(
                list: listID, item: milk, field: field, value: value,
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: w - 30_000, counter: counter), replica: otherReplica))
        }
        let shared = [
            other(.name, .text("Milk"), 0), other(.checked, .bool(false), 1), other(.deleted, .bool(false), 2),
            other(.quantity, .text("1"), 3),
        ]
        let refused: [LocalStep] = [
            on(w, "check", "milk"),
            on(w, "set", "milk", value: "2", field: "quantity"),
            add(w + 1000, [("Cake", nil)]),
            on(w + 1000, "remove", "milk"),
            step(w + 2000, "discard"),
            add(w + 3000, [("Tea", nil)]),
        ]
        return [
            try localWriteCase(
                "adds, checks, removes, edits and renames of a family's list; refused changes; undo steps",
                setupWall: w, family),
            try localWriteCase(
                "a viewer's changes dropped (discard): the items they touched back to the other writes",
                setupWall: w, refused, setup: shared),
            try localWriteCase(
                "a phone an hour ahead: its writes, the clock correction (only writes beyond 5 minutes are "
                    + "stamped anew, from the server's time), the next writes, a re-stamp after a refusal, undo",
                setupWall: w, clock),
        ]
    }

    static func step(_ wall: UInt64, _ action: String, _ fill: (inout LocalStep) -> Void = { _ in }) -> LocalStep {
        var step = LocalStep(wall: wall, action: action, writes: [], changes: 0)
        fill(&step)
        return step
    }

    /// The wall clock the replica reads, set step by step.
    final class Wall: Sendable {
        let now = Mutex<UInt64>(0)
    }

    static func localWriteCase(
        _ about: String, setupWall: UInt64, _ steps: [LocalStep], setup shared: [Op] = []
    ) throws -> LocalWriteCase {
        let directory = TemporaryDirectory("basket-local-vectors")
        let path = directory.file("replica.sqlite")
        let wall = Wall()
        var configuration = Replica.Configuration()
        configuration.synchronous = .off
        configuration.wallClock = { wall.now.withLock { $0 } }
        // The replica id is fixed: made once, then written into the file before it is opened again.
        _ = try Replica(path: path, configuration: configuration)
        let db = try Connection(path: path)
        try db.run("UPDATE meta SET value = ? WHERE key = 'replica'", .text(localReplica.description))
        let replica = try Replica(path: path, configuration: configuration)
        let title = Op(
            list: listID, item: .list, field: .title, value: .text("Groceries"),
            version: Version(
                timestamp: HybridTimestamp(milliseconds: setupWall - 60_000, counter: 0), replica: otherReplica))
        wall.now.withLock { $0 = setupWall }
        try replica.merge([title] + shared)
        var made: [LocalStep] = []
        for (index, var step) in steps.enumerated() {
            wall.now.withLock { $0 = step.wall }
            let before = Set(try replica.pendingOperations(in: listID).map { written($0.operation) })
            let id = step.item.map { ItemID(list: listID, key: ItemKey.normalize($0)) }
            do {
                switch step.action {
                case "add":
                    let results = try replica.add(
                        (step.entries ?? []).map {
                            Replica.NewItem(
                                name: $0.name, quantity: $0.quantity, category: $0.category, note: $0.note,
                                typed: $0.typed)
                        }, to: listID)
                    step.outcomes = results.map {
                        AddOutcome(outcome: $0.outcome.rawValue, quantityChanged: $0.quantityChanged)
                    }
                    step.phrases = Phrases.added(results)
                case "check": try replica.check(try require(id), in: listID)
                case "uncheck": try replica.uncheck(try require(id), in: listID)
                case "remove": try replica.remove(try require(id), in: listID)
                case "set":
                    try replica.set(
                        try require(Field(rawValue: step.field ?? "")), to: step.value, of: try require(id), in: listID)
                case "rename": try replica.rename(try require(id), to: step.value ?? "", in: listID)
                case "undo": try replica.undo(in: listID)
                case "aisles": try replica.setAisles(step.aisles ?? [], of: listID)
                case "archive": try replica.setArchived(step.archived ?? false, list: listID)
                case "correctClock": step.restamped = try replica.correctClock(serverTime: try require(step.serverTime))
                case "restamp": step.restamped = try replica.restampPending(in: listID)
                case "discard": step.discarded = try replica.discardPending(in: listID).count
                default: throw CocoaError(.featureUnsupported)
                }
            } catch let error as ReplicaError {
                step.error = error.code
            }
            let pending = try replica.pendingOperations(in: listID)
            // What the step wrote: the outbox's new entries in its order (a re-stamp's too).
            step.writes = pending.map { written($0.operation) }.filter { !before.contains($0) }
            if step.restamped != nil || index == steps.count - 1 {
                step.pending = pending.map { written($0.operation) }.sorted { $0.lexicographicallyPrecedes($1) }
            }
            step.changes = try replica.pendingChanges(in: listID)
            made.append(step)
        }
        return LocalWriteCase(
            about: about, replica: localReplica.description,
            setup: String(decoding: OperationCodec.encode([title] + shared), as: UTF8.self),
            setupWall: setupWall, steps: made, state: try state(of: replica))
    }

    static func written(_ op: Op) -> [String] {
        [
            op.item.description, op.field.rawValue, String(format: "%016llx", op.version.timestamp.rawValue),
            op.version.replica.description, encodedValue(op.value),
        ]
    }
}

/// `#require` outside a test: the value, or an error.
func require<T>(_ value: T?) throws -> T {
    guard let value else { throw CocoaError(.fileReadUnknown) }
    return value
}
