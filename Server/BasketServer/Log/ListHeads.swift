import BasketCore
import Dispatch
import Synchronization

/// What a list's row says: where its log ends, its epoch, what compaction may have dropped.
struct ListHead: Sendable, Equatable {
    /// The list's row number in the store.
    var no: Int64
    var cursor: Int64
    var epoch: String
    var compactedThrough: Int64
    /// Whether the list is encrypted end to end (set when it is made, never changed).
    var encrypted = false
}

/// The heads of lists, the roles of members who asked, and which lists an account has, as the
/// store last read or wrote them, so that a pull with nothing new, a membership check and an
/// account's lists need no query. A member removed, or a list deleted, leaves the list out of
/// `entries`, so an account's lists naming it are read again. For a store that one
/// process writes (``SQLiteStore``): every write there that changes a list's head or members
/// calls ``advanced(_:to:)`` or ``invalidate(_:)`` before it answers. Entries are also read
/// again after ``milliseconds`` (a subcommand run on the file by hand while the server runs), and
/// there are at most ``capacity`` lists.
///
/// A lookup that missed reads the store, then inserts what it read only if nothing changed
/// meanwhile (the generation): a write that lands between the read and the insert cannot be
/// hidden by an older head.
final class ListHeads: Sendable {
    private struct Entry {
        var head: ListHead
        var roles: [Int64: Role]
        var readAt: UInt64
    }
    private struct State {
        var entries: [ListID: Entry] = [:]
        /// The lists each account is a member of, in the store's order (their heads and the
        /// account's roles are in `entries`).
        var memberships: [Int64: (lists: [ListID], readAt: UInt64)] = [:]
        var generation: UInt64 = 0

        /// The entry of `list` when it is fresh and knows `account`'s role.
        func known(_ list: ListID, _ account: Int64, now: UInt64, within milliseconds: UInt64) -> (ListHead, Role)? {
            guard let entry = entries[list], now &- entry.readAt < milliseconds, let role = entry.roles[account] else {
                return nil
            }
            return (entry.head, role)
        }

        mutating func record(
            _ list: ListID, _ head: ListHead, _ account: Int64, _ role: Role, now: UInt64, within milliseconds: UInt64,
            capacity: Int
        ) {
            if var entry = entries[list], entry.head == head, now &- entry.readAt < milliseconds {
                entry.roles[account] = role
                entries[list] = entry
                return
            }
            if entries[list] == nil, entries.count >= capacity { entries.remove(at: entries.startIndex) }
            entries[list] = Entry(head: head, roles: [account: role], readAt: now)
        }
    }
    private let state = Mutex(State())
    let capacity: Int
    let milliseconds: UInt64

    init(capacity: Int, milliseconds: UInt64) {
        self.capacity = capacity
        self.milliseconds = milliseconds
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// The list's head and the account's role, when both are known and fresh; and the generation
    /// to insert with after reading the store.
    func lookup(_ list: ListID, account: Int64, now: UInt64 = now()) -> (found: (ListHead, Role)?, generation: UInt64) {
        state.withLock { state in
            (state.known(list, account, now: now, within: milliseconds), state.generation)
        }
    }

    /// The account's lists with their heads and its roles, when every one of them is known and
    /// fresh; and the generation to insert with after reading the store.
    func memberships(of account: Int64, now: UInt64 = now()) -> (
        found: [(list: ListID, head: ListHead, role: Role)]?, generation: UInt64
    ) {
        state.withLock { state in
            guard let (lists, readAt) = state.memberships[account], now &- readAt < milliseconds else {
                return (nil, state.generation)
            }
            var found: [(list: ListID, head: ListHead, role: Role)] = []
            found.reserveCapacity(lists.count)
            for list in lists {
                guard let (head, role) = state.known(list, account, now: now, within: milliseconds) else {
                    return (nil, state.generation)
                }
                found.append((list, head, role))
            }
            return (found, state.generation)
        }
    }

    /// Records the account's lists as the store said, unless anything changed since `generation`.
    func insertMemberships(
        of account: Int64, _ lists: [(list: ListID, head: ListHead, role: Role)], ifUnchangedSince generation: UInt64,
        now: UInt64 = now()
    ) {
        guard capacity > 0 else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            for (list, head, role) in lists {
                state.record(list, head, account, role, now: now, within: milliseconds, capacity: capacity)
            }
            if state.memberships[account] == nil, state.memberships.count >= capacity {
                state.memberships.remove(at: state.memberships.startIndex)
            }
            state.memberships[account] = (lists.map(\.list), now)
        }
    }

    /// The account joined or made a list: its lists are read again.
    func invalidateMemberships(of account: Int64) {
        state.withLock { state in
            state.generation &+= 1
            state.memberships[account] = nil
        }
    }

    /// Records what the store said, unless anything changed since `generation`.
    func insert(
        _ list: ListID, head: ListHead, account: Int64, role: Role, ifUnchangedSince generation: UInt64,
        now: UInt64 = now()
    ) {
        guard capacity > 0 else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            state.record(list, head, account, role, now: now, within: milliseconds, capacity: capacity)
        }
    }

    /// A push to `list` committed: its log now ends at `cursor`.
    func advanced(_ list: ListID, to cursor: Int64) {
        state.withLock { state in
            state.generation &+= 1
            if let old = state.entries[list]?.head.cursor, old < cursor { state.entries[list]?.head.cursor = cursor }
        }
    }

    /// The list's members or row changed: it is read again.
    func invalidate(_ list: ListID) {
        state.withLock { state in
            state.generation &+= 1
            state.entries[list] = nil
        }
    }

    /// Every list is read again.
    func invalidateAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
            state.memberships.removeAll()
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
