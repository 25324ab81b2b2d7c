import Synchronization

/// Signed-in sessions by token hash, so that an authenticated request does not ask the store
/// each time. Bounded by entries (one is evicted when full) and by age: an entry older than
/// ``seconds`` is read from the store again.
///
/// Revocation: every change to an account's tokens or password made here calls
/// ``forget(account:)`` before it answers; a change made by another instance on the same
/// PostgreSQL database arrives as ``CommitEvent/accountChanged(_:)`` (NOTIFY), and a lost
/// notification connection (``CommitEvent/resumed``) empties the cache. The age bound is the
/// backstop for what neither covers.
///
/// A lookup that missed reads the store, then ``insert(_:account:token:ifUnchangedSince:now:)``s
/// what it read only if nothing was forgotten meanwhile: a revocation that lands between the read
/// and the insert cannot be undone by a stale entry.
final class SessionCache: Sendable {
    struct Entry {
        var account: AccountRecord
        var token: TokenRecord
        /// Monotonic milliseconds when the store was read.
        var readAt: UInt64
    }
    private struct State {
        var entries: [String: Entry] = [:]
        /// Bumped by every forget.
        var generation: UInt64 = 0
    }
    private let state = Mutex(State())
    let capacity: Int
    let milliseconds: UInt64

    init(capacity: Int, seconds: Double) {
        self.capacity = max(0, capacity)
        self.milliseconds = UInt64(max(0, seconds) * 1000)
    }

    /// The cached session, unless it is missing or too old; with the generation to pass to
    /// ``insert(_:account:token:ifUnchangedSince:now:)`` after reading the store.
    func lookup(_ hash: String, now: UInt64) -> (hit: Entry?, generation: UInt64) {
        state.withLock { state in
            guard let entry = state.entries[hash] else { return (nil, state.generation) }
            guard now &- entry.readAt < milliseconds else {
                state.entries[hash] = nil
                return (nil, state.generation)
            }
            return (entry, state.generation)
        }
    }

    /// Caches a session read from the store, unless a forget happened since `generation`.
    func insert(
        _ hash: String, account: AccountRecord, token: TokenRecord, ifUnchangedSince generation: UInt64, now: UInt64
    ) {
        guard capacity > 0 else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries[hash] == nil, state.entries.count >= capacity {
                // Full: one entry goes (the table's first, which is as good as any).
                state.entries.remove(at: state.entries.startIndex)
            }
            state.entries[hash] = Entry(account: account, token: token, readAt: now)
        }
    }

    /// Records a new last use of a cached token (the store was told).
    func touched(_ hash: String, at lastUsed: Int64) {
        state.withLock { $0.entries[hash]?.token.lastUsed = lastUsed }
    }

    /// Drops every session of the account (a token revoked, the password changed).
    func forget(account: Int64) {
        state.withLock { state in
            state.generation &+= 1
            state.entries = state.entries.filter { $0.value.account.id != account }
        }
    }

    /// Drops every session.
    func forgetAll() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
