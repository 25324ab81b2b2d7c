public import BasketCore
import SQLite

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
    /// No shop by this name on the list.
    case noSuchShop(String)
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
        case .noSuchShop: "no_such_shop"
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
        case .noSuchShop(let name): return "no shop '\(name)' on this list ('basket shops' lists them)"
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
