import BasketCore
import Foundation
import Synchronization

/// The epoch of each list this instance has read lately, so that a long-poll whose wait ran out
/// with nothing new is answered without reading the log (``Watchers``). A list's epoch changes
/// only when a store is restored (`restore`, `renew-epochs`), with the instances stopped; an
/// entry is still trusted for ``lifetime`` only, and a list deleted here is forgotten at once.
final class ListEpochs: Sendable {
    private struct Entry {
        var epoch: String
        var learnt: UInt64
    }
    private let entries = Mutex([ListID: Entry]())
    /// How long an epoch read is used (uptime nanoseconds): past it, one read of the log again.
    let lifetime: UInt64
    /// The most lists remembered; past it, all are forgotten (and learnt again by their next read).
    static let capacity = 200_000

    init(lifetimeSeconds: Double = 600) {
        lifetime = UInt64(lifetimeSeconds * 1e9)
    }

    /// Records that `list`'s epoch is `epoch` (just read from the store).
    func learn(_ list: ListID, _ epoch: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        entries.withLock { entries in
            if entries.count >= Self.capacity && entries[list] == nil { entries.removeAll(keepingCapacity: true) }
            entries[list] = Entry(epoch: epoch, learnt: now)
        }
    }

    /// `list`'s epoch if it was read within ``lifetime``.
    func epoch(of list: ListID) -> String? {
        let now = DispatchTime.now().uptimeNanoseconds
        return entries.withLock { entries in
            guard let entry = entries[list], now - entry.learnt < lifetime else { return nil }
            return entry.epoch
        }
    }

    /// Forgets `list` (deleted).
    func forget(_ list: ListID) { entries.withLock { _ = $0.removeValue(forKey: list) } }
}
