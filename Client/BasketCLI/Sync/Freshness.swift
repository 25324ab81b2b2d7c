import BasketCore
import BasketReplica
import Foundation
import PrivateFiles
import Synchronization

/// How current this device's copy of a list is before a command shows it (`ls`, `ls --at`,
/// `changes --since`): pulled first when it can be, else said how old.
extension SyncCommands {
    /// How old a list's last pull may be before `basket ls` pulls again.
    static let freshSeconds: UInt64 = 5
    /// How long `basket ls` waits for that pull before it shows the list as it has it.
    static let refreshSeconds = 2.0

    /// What `basket ls` knows of how current its copy of a list is.
    enum Freshness {
        /// Pulled just now, or a few seconds ago; or a list on this device only.
        case current
        /// Not pulled now: the last pull (nil: never), why not, and the time it was asked at.
        case stale(lastSync: UInt64?, why: String, now: UInt64)

        /// What a person is told under the heading: how old the copy is and why ("As of 12 min
        /// ago (the connection was refused)"); nil when it is current.
        var note: String? {
            guard case .stale(let lastSync, let why, let now) = self else { return nil }
            return lastSync.map { "As of \(SyncCommands.ago($0, now: now)) (\(why))" }
                ?? "Never synced with the server (\(why))"
        }

        /// The same for --json: `{"lastSync": ISO 8601 or null, "why": text}`; nil when current.
        var json: Output.Stale? {
            guard case .stale(let lastSync, let why, _) = self else { return nil }
            return Output.Stale(lastSync: lastSync.map(ItemCommands.isoTime), why: why)
        }
    }

    /// Before a list is shown: pulls it when the last pull is older than ``freshSeconds`` and
    /// the server answers within ``refreshSeconds`` (sending what waits too). Nothing is asked
    /// with --no-sync, auto-sync off, no server or no sign-in, or for a list on this device only.
    static func refresh(_ context: Context, _ list: ListID) -> Freshness {
        guard let replica = try? context.replica(), let state = try? replica.syncState(of: list),
            state.isRegistered, !state.noLongerMember
        else { return .current }
        // The command's clock (BASKET_CLOCK_SKEW_MS moves it, as for writes).
        let now = ((try? context.wallClock()) ?? { HybridClock.wallClockMilliseconds() })()
        if let last = state.lastSync, now >= last, now - last < freshSeconds * 1_000 { return .current }
        let config = try? context.loadConfig()
        let notAsked =
            context.arguments.has(.noSync)
            ? "--no-sync"
            : config?.server == nil
                ? "no server"
                : config?.token == nil
                    ? "signed out" : config?.autoSync == false ? "auto-sync is off; 'basket sync' pulls" : nil
        if let notAsked { return .stale(lastSync: state.lastSync, why: notAsked, now: now) }
        guard let (transport, _) = try? context.transport(answerTimeout: refreshSeconds) else {
            return .stale(lastSync: state.lastSync, why: "no server", now: now)
        }
        let engine = SyncCommands.engine(context, replica: replica, transport: transport)
        switch runBlocking(within: refreshSeconds, { try await engine.sync(list) }) {
        case .some(.success): return .current
        case .some(.failure(let error)):
            if case SyncError.unreachable(let why) = error {
                return .stale(lastSync: state.lastSync, why: why, now: now)
            }
            return .stale(lastSync: state.lastSync, why: "\(error)", now: now)
        case nil:
            return .stale(
                lastSync: state.lastSync, why: "the server did not answer within \(Int(refreshSeconds)) s", now: now)
        }
    }

    /// "12 min ago", "3 h ago", "2 days ago": how long ago a time was, as people say it.
    static func ago(_ milliseconds: UInt64, now: UInt64 = HybridClock.wallClockMilliseconds()) -> String {
        let seconds = now > milliseconds ? (now - milliseconds) / 1_000 : 0
        switch seconds {
        case ..<60: return "\(seconds) s ago"
        case ..<3_600: return "\(seconds / 60) min ago"
        case ..<172_800: return "\(seconds / 3_600) h ago"
        default: return "\(seconds / 86_400) days ago"
        }
    }
}
