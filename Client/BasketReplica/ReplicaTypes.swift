public import BasketCore
import SQLite

/// A list as the replica knows it.
public struct ListInfo: Hashable, Sendable, Identifiable {
    /// The list's id.
    public var id: ListID
    /// The list's title.
    public var title: String
    /// Items on the list (checked or not, removed ones excluded).
    public var itemCount: Int
    /// Items still to buy.
    public var uncheckedCount: Int
    /// The aisle order: category names in the order of the shop (empty when not set).
    public var aisles: [String] = []
    /// Whether the list is archived (read-only until an owner unarchives it).
    public var isArchived = false
}

/// Which items ``Replica/items(in:filter:)`` returns.
public enum ItemFilter: String, Sendable, CaseIterable {
    /// Everything on the list, checked or not (the default).
    case onList
    /// Only items still to buy.
    case unchecked
    /// Only items crossed off.
    case checked
    /// Everything, removed items included.
    case all
}

/// What ``Replica/add(_:to:)-([String],_)`` did with one name.
public struct AddResult: Hashable, Sendable {
    /// What happened to the name.
    public enum Outcome: String, Hashable, Sendable {
        /// A new item.
        case added
        /// The key existed as a removed item: it is back on the list, unchecked.
        case restored
        /// The key existed checked: it is unchecked again (you need it again).
        case unchecked
        /// The key is already on the list, unchecked: nothing changed.
        case alreadyOnList
    }

    /// The item as it stands after the add.
    public var item: Item
    /// What the add did.
    public var outcome: Outcome
    /// Whether the add changed the quantity of an item that was there before ("milk x3").
    public var quantityChanged = false

    /// What an add says, phrase by phrase, as a person reads it (the web client's `addPhrases`,
    /// pinned by the conformance vectors): "Added milk (2), bread", "Brought back eggs",
    /// "milk: quantity now 3", "milk is already on the list".
    public static func phrases(_ results: [AddResult]) -> [String] {
        let added = results.filter { $0.outcome == .added }.map { result in
            result.item.name + (result.item.quantity.map { " (\($0))" } ?? "")
        }
        var phrases = added.isEmpty ? [] : ["Added " + added.joined(separator: ", ")]
        for result in results where result.outcome != .added {
            let item = result.item
            switch result.outcome {
            case .restored, .unchecked:
                phrases.append(
                    "Brought back \(item.name)"
                        + (result.quantityChanged ? " (quantity now \(item.quantity ?? ""))" : ""))
            default:
                phrases.append(
                    result.quantityChanged
                        ? "\(item.name): quantity now \(item.quantity ?? "")" : "\(item.name) is already on the list")
            }
        }
        return phrases
    }
}

/// One write in an item's history, and whether it is the write its register shows.
public struct HistoryEntry: Hashable, Sendable {
    /// The write.
    public var operation: Op
    /// Whether its register shows it.
    public var isWinner: Bool
    /// Why it won or lost, in words: "latest write", "superseded by a later write (…)",
    /// "same timestamp as …, lower replica id".
    public var reason: String
}

/// A local operation not yet acknowledged by a server.
public struct PendingOperation: Hashable, Sendable {
    /// Position in the outbox; acknowledge up to it.
    public var sequence: Int64
    /// The write.
    public var operation: Op
}

/// What a commit changed; sent to every ``Replica/changes()`` stream.
public struct ReplicaChange: Hashable, Sendable {
    /// Where a change came from.
    public enum Origin: String, Hashable, Sendable {
        /// A write made through this replica's API.
        case local
        /// Operations from another replica (``Replica/merge(_:)``).
        case remote
    }

    /// Whether this device or another made it.
    public var origin: Origin
    /// Lists whose items or title changed.
    public var lists: Set<ListID>
    /// Items whose state changed (not those that only gained a losing write in their history).
    public var items: Set<ItemID>
}

/// The outcome of ``Replica/merge(_:)``.
public struct MergeResult: Hashable, Sendable {
    /// Operations new to this replica (kept in history).
    public var new: Int
    /// Operations already known, ignored.
    public var duplicates: Int
    /// Registers whose value changed.
    public var changedItems: Int
}

/// Errors of the replica's API. Each has a stable `code` for `--json` and scripts.
public enum ReplicaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A name (or text field) that breaks a rule of `ItemName`.
    case invalidName(ItemName.Problem)
    /// An operation that fails `Op.validate()`, with the reason.
    case invalidOperation(String)
    /// No list by this name or id on this device.
    case noSuchList(String)
    /// No item by this name on the list.
    case noSuchItem(String)
    /// A rename onto the key of another item, whose display name this is.
    case nameTaken(existing: String)
    /// A list by this name already exists on this device.
    case listExists(String)
    /// A timestamp too far ahead of this device's clock.
    case clockSkew(ClockSkewError)
    /// The replica file was written by a newer Basket (schema `found`, this one knows up to `supported`).
    case newerSchema(found: Int, supported: Int)
    /// The replica file is damaged or not a Basket replica; the text says what was found.
    case corrupt(String)
    /// A server's clock this far (milliseconds, server minus device) from this device's: not taken.
    case implausibleServerClock(Int64)
    /// The account may only view the list (its role there): nothing was written.
    case readOnly(list: ListID, role: Role)
    /// The list is no longer shared with this account on the server: its copy here is read-only.
    case noLongerMember(ListID)
    /// There is no earlier state to go back to; the text says why.
    case cannotUndo(String)
    /// The list is archived: nothing but unarchiving is written to it.
    case archived(ListID)
    /// Only an owner of the list may do this (archive it); the account's role is given.
    case notOwner(list: ListID, role: Role)
    /// The replica file could not be read or written (SQLite's words: a full disk, a file
    /// another process keeps locked, no permission): nothing was changed.
    case storage(String)

    /// A stable code for scripts (`invalid_name`, `no_such_list`, …).
    public var code: String {
        switch self {
        case .invalidName: "invalid_name"
        case .invalidOperation: "invalid_operation"
        case .noSuchList: "no_such_list"
        case .noSuchItem: "no_such_item"
        case .nameTaken: "name_taken"
        case .listExists: "list_exists"
        case .clockSkew: ClockSkewError.code
        case .newerSchema: "newer_schema"
        case .corrupt: "corrupt"
        case .implausibleServerClock: "implausible_server_clock"
        case .readOnly: "read_only"
        case .noLongerMember: "no_longer_member"
        case .cannotUndo: "cannot_undo"
        case .archived: "archived"
        case .notOwner: "forbidden"
        case .storage: "storage"
        }
    }

    public var description: String {
        switch self {
        case .invalidName(let problem): return problem.description
        case .invalidOperation(let message): return "invalid operation: \(message)"
        case .noSuchList(let name): return "no list named '\(name)'"
        case .noSuchItem(let name): return "no item '\(name)' on this list"
        case .nameTaken(let existing): return "'\(existing)' is already on the list"
        case .listExists(let name): return "a list named '\(name)' exists already"
        case .clockSkew(let error): return error.description
        case .newerSchema(let found, let supported):
            return "the replica file has schema version \(found); this build knows up to \(supported): upgrade basket"
        case .corrupt(let message): return "the replica file is damaged: \(message)"
        case .implausibleServerClock(let offset):
            let hours = offset.magnitude / 3_600_000
            return "the server's clock is \(hours) hours "
                + "\(offset > 0 ? "ahead of" : "behind") this device's; a clock more than a day away is not taken"
                + " (check this device's date, or the server)"
        case .readOnly(_, let role):
            return "you can only view this list (your role: \(role.rawValue)); nothing was changed"
        case .noLongerMember:
            return "this list is no longer shared with you on the server; its copy here is read-only"
        case .cannotUndo(let why): return "cannot undo: \(why)"
        case .archived: return "the list is archived: unarchive it first ('basket list unarchive')"
        case .notOwner(_, let role):
            return "only an owner of the list can do this (your role: \(role.rawValue))"
        case .storage(let message): return message
        }
    }
}

extension ReplicaError {
    /// SQLite's error as the replica's: a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) is
    /// ``corrupt(_:)``, anything else ``storage(_:)`` in SQLite's words.
    init(_ error: SQLiteError) {
        switch error {
        case ResultCode.corrupt, ResultCode.notADatabase: self = .corrupt(error.message)
        default: self = .storage(error.description)
        }
    }
}
