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
}

/// The heads of lists and the roles of members who asked, as the store last read or wrote them,
/// so that a pull with nothing new, and a membership check, need no query. For a store that one
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
        var generation: UInt64 = 0
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
            guard let entry = state.entries[list], now &- entry.readAt < milliseconds else {
                return (nil, state.generation)
            }
            guard let role = entry.roles[account] else { return (nil, state.generation) }
            return ((entry.head, role), state.generation)
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
            if var entry = state.entries[list], entry.head == head, now &- entry.readAt < milliseconds {
                entry.roles[account] = role
                state.entries[list] = entry
                return
            }
            if state.entries[list] == nil, state.entries.count >= capacity {
                state.entries.remove(at: state.entries.startIndex)
            }
            state.entries[list] = Entry(head: head, roles: [account: role], readAt: now)
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
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
