public import BasketCore
import Synchronization

/// What one sync of one list did.
public struct ListSyncReport: Hashable, Sendable {
    /// The list.
    public var list: ListID
    /// Local operations the server accepted (or already had).
    public var pushed = 0
    /// Operations pulled from the server and new to this replica.
    public var pulled = 0
    /// Items whose state changed by what was pulled.
    public var changedItems = 0
    /// The server's epoch changed (it was restored from a backup): everything was pushed again.
    public var epochChanged = false
    /// An owner encrypted the list end to end: this device's copy moved to its keys and started
    /// again from its snapshot (docs/encryption.md, "Converting a plain list").
    public var converted = false
    /// Whether this account's role on the list changed (the server said so in a page).
    public var roleChanged = false
    /// Whether the server said who is shopping for the list (``Replica/shoppingNews(of:)``).
    public var shoppingChanged = false
    /// Texts waiting in the list's inbox, when the server said so (a device files them).
    public var inboxWaiting = 0
    /// Local writes re-stamped after the server refused this device's clock.
    public var restamped = 0
    /// Local writes stamped anew after the server held one of their identities with another
    /// value (another member pushed it first, forging this device's replica id).
    public var reclaimed = 0
    /// Local writes kept in the outbox because the account may not change this list (a viewer).
    public var refusedPending = 0
    /// The clock correction in force after the sync (server minus local, milliseconds).
    public var clockOffset: Int64 = 0
    /// Times the list's epoch changed during the sync (bounded by ``SyncEngine/maxRebuildsPerSync``).
    public var rebuilds = 0
    /// The list was on the server for this account and is no longer (an owner removed it, or it
    /// left): it stays on this device, unsent changes included; nothing was sent or received.
    public var noLongerMember = false
    /// Local changes to the list not sent (kept in the outbox).
    public var unsent = 0
    /// Writes of other devices (or of this one before a restore) that a restored server now holds
    /// for another account or with another value: kept on this device, not sent again.
    public var notRelayed = 0
    /// Operations of an encrypted list pulled and left out: they did not open with this device's
    /// keys, or opened to what breaks the rules (``PulledPage/unopened``).
    public var unopened = 0
    /// The list is encrypted end to end and this device holds no keys for it: nothing was pulled
    /// (its sealed values would be read as text). Its keys come with an invite code or an
    /// envelope of the account's.
    public var keysMissing = false
    /// This device took a newer key of the encrypted list from its envelope, or rotated the key
    /// itself (a member had left or was removed), during the sync (``ListKeyRenewal``).
    public var keysRenewed = false
    /// The list's state came from its snapshot (an encrypted list new to this device,
    /// docs/encryption.md): the log was pulled after it, not from the start.
    public var fromSnapshot = false
    /// This device left a new snapshot of the list on the server (an owner's, of an encrypted list).
    public var snapshotMade = false
    /// Whether the sync asked for the keys to be renewed already (once a sync).
    var renewalTried = false
    /// Why this list could not be synced, when the server refused it or answered what cannot be
    /// read (``SyncEngine/syncAll(_:)`` goes on with the other lists); nil when it was.
    public var failure: SyncError?
}

/// Synchronises a replica with a server: pushes the outbox in batches, pulls pages after the
/// list's cursor (stored in the same transaction as each page), re-pushes everything when the
/// server's epoch changed, and corrects the clock when the server refuses its timestamps.
///
/// ```swift
/// let engine = SyncEngine(replica: replica, transport: HTTPSyncTransport(baseURL: url, token: token))
/// let reports = try await engine.syncAll()
/// ```
public final class SyncEngine: Sendable {
    /// The replica, through the one seam sync may use (``SyncableReplica``).
    let replica: any SyncableReplica
    /// The server the engine talks to.
    public let transport: any SyncTransport
    /// How the engine brings an encrypted list's keys up to the server's (nil: it does not).
    public let keyRenewal: (any ListKeyRenewal)?
    /// Operations per push.
    public let batchSize: Int
    /// An owner's device leaves a new snapshot of an encrypted list when its log has grown by this
    /// many operations since the last one this device made or started from (docs/encryption.md).
    public let snapshotEvery: Int64
    /// Pages one sync pulls at most, and epoch changes it follows at most: a server that always
    /// answers `more`, or a new epoch, cannot keep a sync going forever.
    public static let maxPagesPerSync = 10_000
    /// Epoch changes one sync follows at most (see ``maxPagesPerSync``).
    public static let maxRebuildsPerSync = 2
    /// When, by the server's clock, a watch last heard who is shopping for each list or of its
    /// inbox (`Wire.Page.together`): sent with each long-poll, so a change made between two of
    /// them is told at once.
    let togetherHeard = Mutex<[ListID: Int64]>([:])

    /// An engine that syncs `replica` through `transport`, pushing `batchSize` operations at a time.
    /// With `keyRenewal`, an encrypted list whose key another member rotated, or that awaits a
    /// rotation, is brought up to date and synced on.
    public convenience init(
        replica: Replica, transport: any SyncTransport, batchSize: Int = 1_000, keyRenewal: (any ListKeyRenewal)? = nil,
        snapshotEvery: Int64 = 2_000
    ) {
        self.init(
            syncing: replica, transport: transport, batchSize: batchSize, keyRenewal: keyRenewal,
            snapshotEvery: snapshotEvery)
    }

    /// An engine over any ``SyncableReplica`` (tests use an in-memory one).
    init(
        syncing replica: any SyncableReplica, transport: any SyncTransport, batchSize: Int = 1_000,
        keyRenewal: (any ListKeyRenewal)? = nil, snapshotEvery: Int64 = 2_000
    ) {
        self.replica = replica
        self.transport = transport
        self.batchSize = batchSize
        self.keyRenewal = keyRenewal
        self.snapshotEvery = max(1, snapshotEvery)
    }

    /// Whether this device's keys of `list` came up to the server's (``ListKeyRenewal``): asked at
    /// most once a sync, so a server that keeps refusing cannot loop it.
    private func renewedKeys(_ list: ListID, _ report: inout ListSyncReport) async throws -> Bool {
        guard !report.renewalTried, let keyRenewal else { return false }
        report.renewalTried = true
        let renewed = try await keyRenewal.renewKeys(of: list)
        if renewed { report.keysRenewed = true }
        return renewed
    }

    /// Registers the local lists the server does not know, then syncs every list the account
    /// has on the server (joined from another device included). A list the server refuses (a
    /// full list, a conflict it keeps answering) or answers with what cannot be read gets a
    /// report with its ``ListSyncReport/failure``, and the other lists are synced all the same;
    /// a server that cannot be reached ends the whole sync. `known`: the account's lists as the
    /// server just said (nil: asked here).
    public func syncAll(_ known: [RemoteList]? = nil) async throws -> [ListSyncReport] {
        var remote = known ?? []
        if known == nil { remote = try await transport.lists() }
        let remoteIDs = Set(remote.map(\.id))
        var reports: [ListSyncReport] = []
        for list in try replica.listIDs() where !remoteIDs.contains(list) {
            var state = try replica.syncState(of: list)
            if state.isRegistered {
                // It was on the server, and this account is no longer a member: keep it here
                // (read-only), and say so.
                if !state.noLongerMember {
                    state.noLongerMember = true
                    try replica.saveSyncState(state)
                }
                var report = ListSyncReport(list: list)
                report.noLongerMember = true
                report.unsent = try replica.pendingOperations(in: list, limit: .max).count
                reports.append(report)
                continue
            }
            reports.append(try await syncAlone(list))
        }
        for list in remote {
            // An encrypted list without keys here is left out, unless this device pulled it as
            // plain: an owner encrypted it since, and its sync moves the copy to the keys.
            if try list.encrypted == true && !replica.isEncrypted(list.id)
                && replica.syncState(of: list.id).epoch == nil
            {
                var report = ListSyncReport(list: list.id)
                report.keysMissing = true
                reports.append(report)
                continue
            }
            var state = try replica.syncState(of: list.id)
            if state.role != list.role || state.noLongerMember {
                // The server's word on this account's role (promoted, demoted, joined again).
                state.role = list.role
                state.noLongerMember = false
                try replica.saveSyncState(state)
            }
            reports.append(try await syncAlone(list.id))
        }
        return reports
    }

    /// ``sync(_:)``, with a refusal of this list (or an answer about it that cannot be read) kept
    /// in its report instead of thrown, so that it does not stop the sync of the others.
    private func syncAlone(_ list: ListID) async throws -> ListSyncReport {
        do {
            return try await sync(list)
        } catch let error as SyncError {
            switch error {
            case .server, .badResponse:
                var report = ListSyncReport(list: list)
                report.failure = error
                report.unsent = (try? replica.pendingOperations(in: list, limit: .max).count) ?? 0
                return report
            case .unreachable, .clockSkew, .redirected: throw error
            }
        }
    }

    /// Syncs a list that already exists on the server (joined with an invite code, or pulled again
    /// into a rebuilt replica): it is marked as known there, so the sync does not create it.
    /// `role` is the account's role on it, as the server said when it joined.
    public func adopt(_ list: ListID, role: Role? = nil) async throws -> ListSyncReport {
        var state = try replica.syncState(of: list)
        state.isRegistered = true
        state.noLongerMember = false
        if let role { state.role = role }
        try replica.saveSyncState(state)
        return try await sync(list)
    }

    /// Pushes and pulls one list until both sides are even.
    public func sync(_ list: ListID) async throws -> ListSyncReport {
        var report = ListSyncReport(list: list)
        var state = try replica.syncState(of: list)
        try await register(list, &state)
        try await pushPending(list, &state, &report)
        try await startFromSnapshot(list, &state, &report)
        try await pullAll(list, &state, &report)
        state.lastSync = HybridClock.wallClockMilliseconds()
        try replica.saveSyncState(state)
        report.clockOffset = try replica.clockOffset()
        try await leaveSnapshot(list, state, &report)
        return report
    }

    /// An encrypted list this device has not pulled yet starts from its snapshot, when the server
    /// has one that opens here: its state at a position of the log, merged as a page would be
    /// (history before it is incomplete here), then the log after it. A snapshot of another epoch
    /// of the server's log (it was restored), one that does not open, or one ahead of this
    /// device's clock is passed over: the log from the start, as before any snapshot was made.
    private func startFromSnapshot(_ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport)
        async throws
    {
        guard state.cursor == 0, replica.isEncrypted(list), let snapshot = try await transport.snapshot(of: list),
            snapshot.cursor > 0, state.epoch == nil || state.epoch == snapshot.epoch
        else { return }
        var next = state
        next.epoch = snapshot.epoch
        next.cursor = snapshot.cursor
        next.historyIncomplete = true
        let result: MergeResult
        do {
            result = try replica.merge(snapshot.operations, saving: next, isValidated: true)
        } catch ReplicaError.clockSkew {
            return  // the log's pages carry the server's time, which corrects the clock
        }
        try replica.saveSnapshotCursor(snapshot.cursor, of: list)
        report.pulled += result.new
        report.changedItems += result.changedItems
        report.fromSnapshot = true
        state = next
    }

    /// An owner's device of an encrypted list leaves a new snapshot once the log has grown by
    /// ``snapshotEvery`` operations since the last it made or started from: only when this
    /// device is even with the server (nothing waits to be sent, nothing was refused or left
    /// out), so the snapshot holds exactly the log's state at the cursor. A refusal (another
    /// owner's newer snapshot, a rotation under way) is not this sync's failure.
    private func leaveSnapshot(_ list: ListID, _ state: SyncState, _ report: inout ListSyncReport) async throws {
        guard replica.isEncrypted(list), state.role == .owner, !state.noLongerMember, report.unopened == 0,
            report.notRelayed == 0, report.refusedPending == 0, !report.keysMissing,
            state.cursor >= (try replica.snapshotCursor(of: list)) + snapshotEvery,
            try replica.pendingCount(in: list) == 0
        else { return }
        do {
            try await transport.putSnapshot(try replica.currentOperations(in: list), at: state.cursor, of: list)
        } catch SyncError.server {
            return
        }
        try replica.saveSnapshotCursor(state.cursor, of: list)
        report.snapshotMade = true
    }

    /// Sends a list's local changes without pulling: registers the list on the server when it is
    /// not there yet, then pushes the outbox in batches. What a write command, or a
    /// ``LiveSync`` after a local change, runs; the next sync or watch round pulls. Safe beside
    /// a running ``watchOnce(_:wait:sending:)`` of the same list: it never moves the list's cursor (a
    /// push sent twice is stored once).
    public func send(_ list: ListID) async throws -> ListSyncReport {
        var report = ListSyncReport(list: list)
        var state = try replica.syncState(of: list)
        try await register(list, &state)
        let (epochBefore, roleBefore) = (state.epoch, state.role)
        try await pushPending(list, &state, &report)
        if (epochBefore == nil && state.epoch != nil) || state.role != roleBefore {
            // Only what a push learns; the cursor stays as a running watch round left it.
            var fresh = try replica.syncState(of: list)
            if fresh.epoch == nil { fresh.epoch = state.epoch }
            fresh.role = state.role
            try replica.saveSyncState(fresh)
        }
        report.clockOffset = try replica.clockOffset()
        return report
    }

    /// Creates the list on the server when this replica made it and has not registered it yet.
    private func register(_ list: ListID, _ state: inout SyncState) async throws {
        guard !state.isRegistered else { return }
        let remote = try await transport.createList(list)
        if state.epoch == nil { state.epoch = remote.epoch }
        state.isRegistered = true
        state.role = remote.role
        try replica.saveSyncState(state)
    }

    /// One long-poll round: push what is pending (unless `sending` is false), wait up to `wait`
    /// seconds for news, apply it.
    public func watchOnce(_ list: ListID, wait: Int = 25, sending: Bool = true) async throws -> ListSyncReport {
        var report = ListSyncReport(list: list)
        var state = try replica.syncState(of: list)
        if sending { try await pushPending(list, &state, &report) }
        let heard = togetherHeard.withLock { $0[list] } ?? 0
        let page = try await transport.pull(list, after: state.cursor, limit: 5_000, wait: wait, together: heard)
        if let together = page.together { togetherHeard.withLock { $0[list] = together } }
        if page.keysBehind {
            // Another member rotated the key: with it, the same page again; without, nothing moves.
            if try await renewedKeys(list, &report) {
                try await pullAll(list, &state, &report)
            } else {
                report.keysMissing = true
            }
        } else if let epoch = state.epoch, epoch != page.epoch {
            try await rebuild(list, &state, &report, newEpoch: page.epoch)
            try await pullAll(list, &state, &report)
        } else {
            try mergePage(page, list, &state, &report)
            if page.more { try await pullAll(list, &state, &report) }
        }
        state.lastSync = HybridClock.wallClockMilliseconds()
        try replica.saveSyncState(state)
        return report
    }

    private func pushPending(_ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport) async throws {
        var correctedOnce = false
        var reclaimed: Set<Wire.ErrorCode> = []
        while true {
            // The outbox keeps each write as it is sent: its lines go as read.
            guard let batch = try replica.pendingBatch(in: list, limit: batchSize) else { return }
            let outcome: PushOutcome
            do {
                outcome = try await transport.push(batch.text, count: batch.count, to: list)
            } catch SyncError.clockSkew(let serverTime, _) where !correctedOnce {
                // Correct the clock and re-stamp the refused writes, then push them again.
                report.restamped += try replica.correctClock(serverTime: serverTime)
                correctedOnce = true
                continue
            } catch let error as SyncError
                where [.identityConflict, .replicaTaken].contains(error.errorCode)
                && error.errorCode.map({ !reclaimed.contains($0) }) == true
            {
                // Another member pushed an operation with one of these writes' identities first
                // (their replica and timestamp) and another value, or pushed this replica id to the
                // list first: stamped anew (under a new replica id for the second), ours go
                // through and win, as they would have. Each at most once a sync (a forgery of
                // one identity is both, one after the other).
                let restamped = try replica.restampPending(in: list, renewingReplica: error.errorCode == .replicaTaken)
                if reclaimed.isEmpty { report.reclaimed += restamped }
                if let code = error.errorCode { reclaimed.insert(code) }
                continue
            } catch let error as SyncError where [.staleKey, .rotationRequired].contains(error.errorCode) {
                // Sealed under a key the list no longer takes, or it awaits a new one (a member
                // left): with the list's newest key (taken, or made here), the same writes again.
                guard try await renewedKeys(list, &report) else { throw error }
                continue
            } catch let error as SyncError where error.errorCode == .listEncrypted {
                // An owner encrypted the list since this device last heard: its copy (and these
                // writes) move to the list's keys, then the same writes go sealed.
                guard try await adoptedConversion(list, &state, &report) else { throw error }
                continue
            } catch let error as SyncError where error.errorCode == .forbidden {
                // A viewer: the changes stay here (listed by `basket status`, dropped on request);
                // later writes are refused before they are made. (Other 403s, a full list, are
                // errors to show.)
                report.refusedPending = try replica.pendingOperations(in: list, limit: .max).count
                state.role = .viewer
                return
            }
            if let epoch = state.epoch, epoch != outcome.epoch {
                try await rebuild(list, &state, &report, newEpoch: outcome.epoch)
                // What the rebuild sent is acknowledged; writes of this device it could not send
                // (stamped anew under a new replica id) go now.
                continue
            }
            state.epoch = outcome.epoch
            try replica.acknowledge(list, through: batch.lastSequence)
            report.pushed += batch.count
        }
    }

    /// Whether an owner encrypted `list`, which this device holds as plain (its log's epoch
    /// changed, or a push was refused as plain): then this device's copy moved to the keys from
    /// its account's envelope (``ListKeyRenewal/adoptConversion(of:)``) and starts again from
    /// the list's snapshot; its unsent writes go sealed with the next push.
    private func adoptedConversion(_ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport)
        async throws -> Bool
    {
        guard !report.converted, !replica.isEncrypted(list), let keyRenewal,
            try await keyRenewal.adoptConversion(of: list)
        else { return false }
        report.converted = true
        state = try replica.syncState(of: list)
        try await startFromSnapshot(list, &state, &report)
        return true
    }

    /// The refusals of a rebuild's push that send each replica's writes alone, and leave those
    /// refused again on this device.
    static let rebuildSplits: Set<Wire.ErrorCode?> = [.replicaTaken, .identityConflict, .ownerOnly]

    /// The server lost what it had after a backup: push everything this replica knows of the
    /// list (the server keeps what it has and skips duplicates), then pull from the start.
    private func rebuild(_ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport, newEpoch: String)
        async throws
    {
        if try await adoptedConversion(list, &state, &report) { return }
        report.rebuilds += 1
        guard report.rebuilds <= Self.maxRebuildsPerSync else {
            throw SyncError.badResponse("the list's epoch changed \(report.rebuilds) times in one sync")
        }
        report.epochChanged = true
        let pending = try replica.pendingOperations(in: list, limit: .max)
        let pendingIdentities = Set(pending.map { OperationIdentity($0.operation) })
        let everything = try replica.allOperations(in: list)
        var start = 0
        var refused = false
        var pendingRefused = false
        while start < everything.count {
            let batch = Array(everything[start..<min(start + batchSize, everything.count)])
            do {
                _ = try await transport.push(batch, to: list)
            } catch let error as SyncError where error.errorCode == .forbidden {
                refused = true  // a viewer: the writers rebuild the server; this replica only pulls
                state.role = .viewer
                break
            } catch let error as SyncError where Self.rebuildSplits.contains(error.errorCode) {
                // After a restore, a replica id belongs to the first account that pushes its writes
                // again, and an identity to the first value pushed for it: each replica's writes go
                // alone, and those the server now holds for someone else stay on this device only.
                // So do an owner's writes only an owner may push (an archive, a pin), pushed again
                // by an editor: the owner's own device brings them back.
                for group in Dictionary(grouping: batch, by: \.version.replica).values {
                    do {
                        _ = try await transport.push(group, to: list)
                    } catch let error as SyncError where Self.rebuildSplits.contains(error.errorCode) {
                        report.notRelayed += group.count
                        if group.contains(where: { pendingIdentities.contains(OperationIdentity($0)) }) {
                            pendingRefused = true
                        }
                    }
                }
            }
            start += batchSize
        }
        if pendingRefused {
            // This device's own unsent writes were refused with the rest: stamped anew under a new
            // replica id, they go with the next push, and stand.
            report.reclaimed += try replica.restampPending(in: list, renewingReplica: true)
        } else if !refused, let last = pending.last {
            try replica.acknowledge(list, through: last.sequence)
        }
        state.epoch = newEpoch
        state.cursor = 0
        try replica.saveSyncState(state)
    }

    private func pullAll(_ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport) async throws {
        for _ in 0..<Self.maxPagesPerSync {
            let page = try await transport.pull(list, after: state.cursor, limit: 5_000, wait: 0)
            if page.keysBehind {
                // Another member rotated the key: with it, the same page again; without, the cursor
                // stays where it is (nothing is skipped for good) and the report says why.
                if try await renewedKeys(list, &report) { continue }
                report.keysMissing = true
                return
            }
            if let epoch = state.epoch, epoch != page.epoch {
                try await rebuild(list, &state, &report, newEpoch: page.epoch)
                continue
            }
            let before = state.cursor
            try mergePage(page, list, &state, &report)
            if !page.more { return }
            guard state.cursor > before else {
                throw SyncError.badResponse("the server says more follows cursor \(before) but sends nothing after it")
            }
        }
        throw SyncError.badResponse("more than \(Self.maxPagesPerSync) pages in one sync; the rest waits for the next")
    }

    private func mergePage(_ page: PulledPage, _ list: ListID, _ state: inout SyncState, _ report: inout ListSyncReport)
        throws
    {
        var next = state
        next.epoch = page.epoch
        next.cursor = page.cursor
        // Operations the server compacted away before this replica pulled them: histories lack them.
        if !page.historyComplete { next.historyIncomplete = true }
        // The server ended a long-poll because this account's role changed: the copy follows.
        if let role = page.role, role != next.role {
            next.role = role
            report.roleChanged = true
        }
        // Or because someone went shopping or finished.
        if let shopping = page.shopping {
            try replica.saveShopping(shopping, of: list, serverTime: page.serverTime)
            report.shoppingChanged = true
        }
        report.inboxWaiting = page.inbox ?? 0
        let result: MergeResult
        do {
            result = try replica.merge(page.operations, saving: next, isValidated: page.isValidated)
        } catch ReplicaError.clockSkew where page.serverTime > 0 {
            // This device's clock is behind the server's: take the server's time and apply again.
            _ = try replica.correctClock(serverTime: page.serverTime)
            result = try replica.merge(page.operations, saving: next, isValidated: page.isValidated)
        }
        report.pulled += result.new
        report.changedItems += result.changedItems
        report.unopened += page.unopened
        state = next
    }
}

/// What ``SyncEngine/sendPending(of:within:)`` did.
public struct SendOutcome: Hashable, Sendable {
    /// Operations the server accepted (or already had).
    public var sent = 0
    /// Local changes of those lists still waiting after it, as a person counts them.
    public var waiting = 0
    /// Why the sending stopped short, when it did.
    public var failure: String?
    /// Whether time ran out before the server answered.
    public var timedOut = false

    /// Nothing sent, nothing waiting.
    public init() {}
}

extension SyncEngine {
    /// Sends the local changes of `lists` (when nil: every list with changes waiting that the
    /// server may take, not those this account may only view or is no longer a member of),
    /// waiting at most `seconds` for the server: what a command-line write runs before it exits.
    /// What is not sent by then stays in the outbox for the next sync; a request still under way
    /// goes on in the background (or ends with the process).
    public func sendPending(of lists: [ListID]? = nil, within seconds: Double) async -> SendOutcome {
        let replica = self.replica
        let lists =
            lists
            ?? ((try? replica.listsWithPendingChanges()) ?? []).filter { list in
                guard let state = try? replica.syncState(of: list) else { return true }
                return !state.noLongerMember && state.role != .viewer
            }
        // Not cancelled when time runs out (see ``LiveSync/stop()``): a send under way ends when
        // answered, or with the process.
        let finished = await result(within: seconds) { [self] in
            var outcome = SendOutcome()
            do {
                for list in lists {
                    let report = try await send(list)
                    outcome.sent += report.pushed
                    if report.refusedPending > 0 {
                        outcome.failure = "you can only view this list; the server refuses its changes"
                    }
                }
            } catch {
                outcome.failure = "\(error)"
            }
            return outcome
        }
        var outcome = (try? finished?.get()) ?? SendOutcome()
        outcome.timedOut = finished == nil
        outcome.waiting = lists.reduce(0) { $0 + ((try? replica.pendingChanges(in: $1)) ?? 0) }
        return outcome
    }
}

/// The identity of an operation (item, field, timestamp, replica): what the server binds a value to.
struct OperationIdentity: Hashable {
    var item: ItemID
    var field: Field
    var version: Version

    init(_ op: Op) {
        item = op.item
        field = op.field
        version = op.version
    }
}
