import BasketCore
import Synchronization
import Testing

@testable import BasketReplica

/// The sync engine against an in-memory replica and a scripted server, through the seam
/// (`SyncableReplica`, `SyncTransport`): no database, no network. The end-to-end tests run the
/// same engine against real files and a real server.
struct SyncEngineTests {
    static let list = ListID(hex: "0123456789abcdef0123456789abcdef")!

    static func op(_ name: String, ms: UInt64) -> Op {
        Op(
            list: list, item: ItemID(list: list, key: name.lowercased()), field: .name, value: .text(name),
            version: Version(timestamp: HybridTimestamp(milliseconds: ms, counter: 0), replica: ReplicaID(rawValue: 7)))
    }

    /// A replica in memory: an outbox, applied operations, sync states, a clock offset.
    final class MemoryReplica: SyncableReplica {
        struct State {
            var outbox: [PendingOperation] = []
            var applied: [Op] = []
            var states: [ListID: SyncState] = [:]
            var offset: Int64 = 0
            var corrections: [UInt64] = []
            var restamps = 0
            /// Remote timestamps after this (ms) are refused as clock skew until a correction.
            var clockLimit: UInt64?
            /// Whether the list is encrypted here, and the cursor of its last snapshot.
            var encrypted = false
            var snapshotCursor: Int64 = 0
        }
        let state = Mutex(State())

        init(pending: [Op]) {
            state.withLock {
                $0.outbox = pending.enumerated().map { PendingOperation(sequence: Int64($0 + 1), operation: $1) }
            }
        }

        func listIDs() throws -> [ListID] { [SyncEngineTests.list] }
        func isEncrypted(_ list: ListID) -> Bool { state.withLock { $0.encrypted } }
        func currentOperations(in list: ListID) throws -> [Op] { state.withLock { $0.applied } }
        func snapshotCursor(of list: ListID) throws -> Int64 { state.withLock { $0.snapshotCursor } }
        func saveSnapshotCursor(_ cursor: Int64, of list: ListID) throws {
            state.withLock { $0.snapshotCursor = cursor }
        }
        func syncState(of list: ListID) throws -> SyncState {
            state.withLock { $0.states[list] } ?? SyncState(list: list, epoch: nil, cursor: 0, isRegistered: false)
        }
        func saveSyncState(_ new: SyncState) throws { state.withLock { $0.states[new.list] = new } }
        func pendingOperations(in list: ListID, limit: Int) throws -> [PendingOperation] {
            state.withLock { Array($0.outbox.filter { $0.operation.list == list }.prefix(limit)) }
        }
        func listsWithPendingChanges() throws -> [ListID] {
            state.withLock { Array(Set($0.outbox.map(\.operation.list))) }
        }
        func pendingCount(in list: ListID) throws -> Int {
            state.withLock { $0.outbox.count { $0.operation.list == list } }
        }
        func pendingChanges(in list: ListID) throws -> Int {
            state.withLock { Set($0.outbox.filter { $0.operation.list == list }.map(\.operation.item)).count }
        }
        func acknowledge(_ list: ListID, through sequence: Int64) throws {
            state.withLock { $0.outbox.removeAll { $0.operation.list == list && $0.sequence <= sequence } }
        }
        func allOperations(in list: ListID) throws -> [Op] {
            state.withLock { $0.applied + $0.outbox.map(\.operation) }
        }
        func merge(_ remote: [Op], saving syncState: SyncState?, isValidated: Bool) throws -> MergeResult {
            try state.withLock { state in
                if let limit = state.clockLimit, state.corrections.isEmpty,
                    let ahead = remote.map(\.timestamp.milliseconds).max(), ahead > limit
                {
                    throw ReplicaError.clockSkew(
                        ClockSkewError(offsetMilliseconds: ahead - limit, receiverMilliseconds: limit))
                }
                state.applied += remote
                if let syncState { state.states[syncState.list] = syncState }
            }
            return MergeResult(new: remote.count, duplicates: 0, changedItems: remote.count)
        }
        func clockOffset() throws -> Int64 { state.withLock { $0.offset } }
        func correctClock(serverTime: UInt64) throws -> Int {
            state.withLock {
                $0.corrections.append(serverTime)
                return $0.outbox.count
            }
        }
        func restampPending(in list: ListID, renewingReplica: Bool) throws -> Int {
            state.withLock { state in
                state.restamps += 1
                return state.outbox.count
            }
        }
    }

    /// A server that answers from a script: pushes in order (an error or acceptance), one page log.
    final class ScriptedServer: SyncTransport {
        struct State {
            var pushAnswers: [(any Error)?] = []
            var pushed: [[Op]] = []
            var log: [Op] = []
            var epoch = "e1"
            var pulls: [Int64] = []
            /// Operations per page (the engine asks for 5,000).
            var pageSize = Int.max
            /// Errors for pulls by their number (0 is the first pull).
            var pullErrors: [Int: any Error] = [:]
            /// Whether the account is still a member (lists() names the list).
            var member = true
            /// Whether the account is a viewer: every push is refused with 403 forbidden.
            var viewer = false
            var serverTime: UInt64 = 1
            /// How long each push takes to be answered (a server that does not answer in time).
            var pushDelay: Duration = .zero
            /// Whether the server cannot be reached: every call fails as unreachable.
            var offline = false
            /// Pushes tried, answered or not.
            var pushAttempts = 0
            /// The list's snapshot, and the snapshots devices left (their operations and cursor).
            var snapshot: OpenedSnapshot?
            var snapshotsLeft: [(operations: [Op], cursor: Int64)] = []
        }
        let state: Mutex<State>

        init(log: [Op] = [], pushAnswers: [(any Error)?] = []) {
            state = Mutex(State(pushAnswers: pushAnswers, log: log))
        }

        func lists() async throws -> [RemoteList] {
            state.withLock { state in
                state.member
                    ? [
                        RemoteList(
                            id: SyncEngineTests.list, role: state.viewer ? .viewer : .owner, epoch: state.epoch,
                            cursor: 0)
                    ]
                    : []
            }
        }
        func createList(_ id: ListID) async throws -> RemoteList {
            RemoteList(id: id, role: .owner, epoch: state.withLock { $0.epoch }, cursor: 0)
        }
        func push(_ text: OperationText, count: Int, to list: ListID) async throws -> PushOutcome {
            let operations = try text.operations()
            #expect(operations.count == count)
            let delay = try state.withLock { state in
                state.pushAttempts += 1
                if state.offline { throw SyncError.unreachable("scripted: offline") }
                return state.pushDelay
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            return try state.withLock { state in
                if state.viewer { throw SyncError.server(status: 403, code: "forbidden", message: "a viewer") }
                if !state.pushAnswers.isEmpty, let error = state.pushAnswers.removeFirst() { throw error }
                state.pushed.append(operations)
                state.log += operations
                return PushOutcome(
                    accepted: operations.count, duplicates: 0, cursor: Int64(state.log.count), epoch: state.epoch,
                    serverTime: 1)
            }
        }
        func snapshot(of list: ListID) async throws -> OpenedSnapshot? { state.withLock { $0.snapshot } }

        func putSnapshot(_ operations: [Op], at cursor: Int64, of list: ListID) async throws {
            state.withLock { $0.snapshotsLeft.append((operations, cursor)) }
        }

        func pull(_ list: ListID, after cursor: Int64, limit: Int, wait: Int) async throws -> PulledPage {
            // A long-poll with nothing new waits until something arrives or `wait` seconds pass.
            for _ in 0..<(wait * 50) {
                guard state.withLock({ $0.log.count == Int(cursor) && $0.pullErrors.isEmpty && !$0.offline }) else {
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try state.withLock { state in
                if state.offline { throw SyncError.unreachable("scripted: offline") }
                state.pulls.append(cursor)
                if let error = state.pullErrors[state.pulls.count - 1] { throw error }
                let page = Array(state.log.dropFirst(Int(cursor)).prefix(min(limit, state.pageSize)))
                return PulledPage(
                    operations: page, cursor: cursor + Int64(page.count), epoch: state.epoch,
                    more: Int(cursor) + page.count < state.log.count, historyComplete: true,
                    serverTime: state.serverTime)
            }
        }
    }

    /// A pulled operation is validated once: as the transport decodes the page. A page made any
    /// other way, or whose operations changed after, is validated again by the replica.
    @Test func aPageIsTakenAsValidatedOnlyWhenItsDecodingValidatedIt() throws {
        let ops = [Self.op("Milk", ms: 5)]
        let wire = Wire.Page(
            count: 1, cursor: 1, epoch: "e", historyComplete: true, more: false, serverTime: 0,
            ops: OperationText(ops))
        var decoded = try HTTPSyncTransport.page(wire, of: Self.list, after: 0)
        #expect(decoded.isValidated && decoded.operations == ops)
        decoded.operations.append(Self.op("Tea", ms: 6))
        #expect(!decoded.isValidated)
        let made = PulledPage(operations: ops, cursor: 1, epoch: "e", more: false, historyComplete: true, serverTime: 0)
        #expect(!made.isValidated)
        // A bad operation in the text never becomes a page.
        var broken = ops[0]
        broken.value = .bool(true)  // a name that is not text
        let bad = Wire.Page(
            count: 1, cursor: 1, epoch: "e", historyComplete: true, more: false, serverTime: 0,
            ops: OperationText([broken]))
        #expect(throws: SyncError.self) { try HTTPSyncTransport.page(bad, of: Self.list, after: 0) }
    }

    /// A stand-in for an encrypted list's keys: "sealing" reverses the text behind a marker, and
    /// opening refuses what it did not seal (the real keys are BasketSeal's, tested there).
    struct ReversingSealing: ListSealing {
        func itemID(key: String) -> ItemID { ItemID(list: SyncEngineTests.list, key: "keyed " + key) }
        func shopID(key: String) -> ItemID { ItemID(list: SyncEngineTests.list, shopKey: "keyed " + key) }
        var newestEpoch: UInt32 { 0 }
        func sealSnapshot(_ operations: [Op], at cursor: Int64) -> String {
            "n1.0." + Base64URL.encode(OperationCodec.encode(operations))
        }
        func openSnapshot(_ text: String, at cursor: Int64) throws -> [Op] {
            try OperationCodec.decode(Base64URL.decode(text.dropFirst(5)) ?? [])
        }
        func seal(_ op: Op) -> Op {
            var sealed = op
            let text =
                op.value.textValue.map { "t" + String($0.reversed()) } ?? (op.value.boolValue == true ? "T" : "F")
            // As long as a real seal's smallest: 60 bytes (a flag's bound leaves no room for more).
            let body = Array(("stand-in " + text).utf8)
            let payload = body + [UInt8](repeating: 1, count: max(1, 60 - body.count))
            sealed.value = .text(Sealed.text(epoch: 0, payload: payload))
            return sealed
        }
        func open(_ op: Op) throws -> Op {
            guard case .text(let text) = op.value, let (_, payload) = Sealed.parse(text),
                let body = String(validating: payload.prefix { $0 != 1 }, as: UTF8.self), body.hasPrefix("stand-in ")
            else { throw SyncError.badResponse("not sealed here") }
            var opened = op
            let inner = String(body.dropFirst("stand-in ".count))
            opened.value = inner.first == "t" ? .text(String(inner.dropFirst().reversed())) : .bool(inner == "T")
            return opened
        }
    }

    /// An encrypted list's page: what opens and keeps the rules is taken, what does not (another
    /// key, or a value its field cannot hold) is left out and counted, never failing the page.
    @Test func anEncryptedListsPageLeavesOutWhatDoesNotOpen() throws {
        let sealing = ReversingSealing()
        let milk = Self.op("Milk", ms: 5)
        var foreign = Self.op("Tea", ms: 6)
        foreign.value = .text(Sealed.text(epoch: 0, payload: [UInt8](repeating: 2, count: 70)))
        var wrongKind = sealing.seal(Self.op("Bread", ms: 7))
        wrongKind.field = .checked  // opens to text, which a flag cannot hold
        let wire = Wire.Page(
            count: 3, cursor: 3, epoch: "e", historyComplete: true, more: false, serverTime: 0,
            ops: OperationText([sealing.seal(milk), foreign, wrongKind]))
        let page = try HTTPSyncTransport.page(wire, of: Self.list, after: 0, sealing: sealing)
        #expect(page.operations == [milk] && page.unopened == 2 && page.isValidated)
        // A plain value in an encrypted list's page is no page: the server never sends one.
        let plain = Wire.Page(
            count: 1, cursor: 1, epoch: "e", historyComplete: true, more: false, serverTime: 0,
            ops: OperationText([milk]))
        #expect(throws: SyncError.self) { try HTTPSyncTransport.page(plain, of: Self.list, after: 0, sealing: sealing) }
    }

    /// An encrypted list new to a device starts from the server's snapshot and pulls after it; a
    /// snapshot of another epoch of the server's log is passed over. An owner's device even with
    /// the server leaves a new snapshot once the log has grown by `snapshotEvery` operations.
    @Test func anEncryptedListStartsFromItsSnapshotAndAnOwnerLeavesOne() async throws {
        let log = (0..<10).map { Self.op("Item \($0)", ms: UInt64(10 + $0)) }
        let replica = MemoryReplica(pending: [])
        replica.state.withLock { $0.encrypted = true }
        let server = ScriptedServer(log: log)
        server.state.withLock {
            $0.snapshot = OpenedSnapshot(operations: Array(log.prefix(7)), cursor: 7, epoch: "e1")
        }
        let engine = SyncEngine(syncing: replica, transport: server, snapshotEvery: 5)
        var report = try await engine.sync(Self.list)
        #expect(report.fromSnapshot && report.pulled == 10)
        #expect(server.state.withLock { $0.pulls } == [7])  // the log after the snapshot only
        #expect(try replica.syncState(of: Self.list).historyIncomplete)
        #expect(replica.state.withLock { $0.applied } == log)
        // Not an owner: no snapshot left. An owner, 5 more operations: one, at the cursor.
        #expect(!report.snapshotMade && server.state.withLock { $0.snapshotsLeft.isEmpty })
        var state = try replica.syncState(of: Self.list)
        state.role = .owner
        try replica.saveSyncState(state)
        server.state.withLock { $0.log.append(Self.op("Item 10", ms: 20)) }
        report = try await engine.sync(Self.list)
        #expect(!report.snapshotMade)  // 11 < 7 + 5
        server.state.withLock { $0.log.append(Self.op("Item 11", ms: 21)) }
        report = try await engine.sync(Self.list)
        #expect(report.snapshotMade)
        #expect(server.state.withLock { $0.snapshotsLeft.map(\.cursor) } == [12])
        #expect(server.state.withLock { $0.snapshotsLeft.first?.operations.count } == 12)

        // Another device, after the server was restored (another epoch): the log from the start.
        let other = MemoryReplica(pending: [])
        other.state.withLock {
            $0.encrypted = true
            $0.states[Self.list] = SyncState(list: Self.list, epoch: "e0", cursor: 0, isRegistered: true)
        }
        server.state.withLock { $0.pulls = [] }
        let otherReport = try await SyncEngine(syncing: other, transport: server).sync(Self.list)
        #expect(!otherReport.fromSnapshot)
        #expect(server.state.withLock { $0.pulls.first } == 0)
    }

    @Test func pushedWritesAreAcknowledgedAndPagesAppliedWithTheirCursor() async throws {
        let replica = MemoryReplica(pending: [Self.op("Milk", ms: 10), Self.op("Tea", ms: 11)])
        let server = ScriptedServer(log: [Self.op("Eggs", ms: 5)])
        let engine = SyncEngine(syncing: replica, transport: server, batchSize: 1)
        let report = try await engine.sync(Self.list)
        #expect(report.pushed == 2)
        #expect(server.state.withLock { $0.pushed.map(\.count) } == [1, 1])  // batches of one
        #expect(replica.state.withLock { $0.outbox.isEmpty })
        // The page holds the server's log, its own pushes included, and the cursor is saved with it.
        #expect(replica.state.withLock { $0.applied.map(\.value) } == [.text("Eggs"), .text("Milk"), .text("Tea")])
        let saved = try replica.syncState(of: Self.list)
        #expect(saved.cursor == 3 && saved.epoch == "e1" && saved.isRegistered)
    }

    @Test func aClockSkewIsCorrectedOnceThenTheWritesArePushedAgain() async throws {
        let replica = MemoryReplica(pending: [Self.op("Milk", ms: 10)])
        let skew = SyncError.clockSkew(serverTime: 1_234, offsetMilliseconds: 600_000)
        let server = ScriptedServer(pushAnswers: [skew])
        let report = try await SyncEngine(syncing: replica, transport: server).sync(Self.list)
        #expect(replica.state.withLock { $0.corrections } == [1_234])
        #expect(report.restamped == 1 && report.pushed == 1)
        #expect(replica.state.withLock { $0.outbox.isEmpty })
    }

    @Test func aSecondClockSkewAfterACorrectionIsAnErrorAndKeepsTheOutbox() async throws {
        let replica = MemoryReplica(pending: [Self.op("Milk", ms: 10)])
        let skew = SyncError.clockSkew(serverTime: 1_234, offsetMilliseconds: 600_000)
        let server = ScriptedServer(pushAnswers: [skew, skew])
        await #expect(throws: SyncError.self) {
            try await SyncEngine(syncing: replica, transport: server).sync(Self.list)
        }
        #expect(replica.state.withLock { $0.corrections.count } == 1)
        #expect(replica.state.withLock { $0.outbox.count } == 1)
    }

    /// The server holds one of the writes' identities with another value (another member pushed
    /// it first): the writes are stamped anew once and pushed again; a second refusal is an error
    /// that keeps the outbox.
    @Test func anIdentityConflictRestampsThePendingWritesOnceThenPushesThemAgain() async throws {
        let conflict = SyncError.server(status: 409, code: "identity_conflict", message: "stored with another value")
        let replica = MemoryReplica(pending: [Self.op("Milk", ms: 10), Self.op("Tea", ms: 11)])
        let report = try await SyncEngine(syncing: replica, transport: ScriptedServer(pushAnswers: [conflict]))
            .sync(Self.list)
        #expect(replica.state.withLock { $0.restamps } == 1)
        #expect(report.reclaimed == 2 && report.pushed == 2)
        #expect(replica.state.withLock { $0.outbox.isEmpty })
        let stubborn = MemoryReplica(pending: [Self.op("Milk", ms: 10)])
        await #expect(throws: SyncError.self) {
            try await SyncEngine(syncing: stubborn, transport: ScriptedServer(pushAnswers: [conflict, conflict]))
                .sync(Self.list)
        }
        #expect(stubborn.state.withLock { ($0.restamps, $0.outbox.count) } == (1, 1))
    }

    /// A replica that synced once with a server whose log holds Eggs.
    static func syncedOnce(pending: [Op] = []) async throws -> (MemoryReplica, ScriptedServer, SyncEngine) {
        let replica = MemoryReplica(pending: pending)
        let server = ScriptedServer(log: [op("Eggs", ms: 5)])
        let engine = SyncEngine(syncing: replica, transport: server)
        _ = try await engine.sync(list)
        return (replica, server, engine)
    }

    @Test func aNewEpochPushesEverythingAgainAndPullsFromTheStart() async throws {
        let (replica, server, engine) = try await Self.syncedOnce()
        // The server is restored from a backup that lost Eggs: a new epoch, an empty log.
        server.state.withLock {
            $0.epoch = "e2"
            $0.log = []
        }
        let report = try await engine.sync(Self.list)
        #expect(report.epochChanged && report.rebuilds == 1)
        #expect(server.state.withLock { $0.log.map(\.value) } == [.text("Eggs")])  // rebuilt from this device
        #expect(try replica.syncState(of: Self.list).epoch == "e2")
        #expect(server.state.withLock { $0.pulls.last } == 0)
    }

    /// A page stamped ahead of this device's clock: the clock takes the server's time once and
    /// the page is applied.
    @Test func aPullAheadOfThisClockCorrectsItOnceAndApplies() async throws {
        let replica = MemoryReplica(pending: [])
        replica.state.withLock { $0.clockLimit = 100 }
        let server = ScriptedServer(log: [Self.op("Eggs", ms: 900_000)])
        server.state.withLock { $0.serverTime = 900_001 }
        let report = try await SyncEngine(syncing: replica, transport: server).sync(Self.list)
        #expect(replica.state.withLock { $0.corrections } == [900_001])
        #expect(report.pulled == 1)
        #expect(try replica.syncState(of: Self.list).cursor == 1)
    }

    /// A failure between two pages keeps the first page and its cursor: the next sync goes on
    /// from there, not from the start.
    @Test func aFailureBetweenPagesKeepsTheFirstPageAndResumesAfterIt() async throws {
        let replica = MemoryReplica(pending: [])
        let server = ScriptedServer(log: (0..<5).map { Self.op("Item \($0)", ms: UInt64(10 + $0)) })
        server.state.withLock {
            $0.pageSize = 2
            $0.pullErrors = [1: SyncError.unreachable("the network went away")]
        }
        let engine = SyncEngine(syncing: replica, transport: server)
        await #expect(throws: SyncError.unreachable("the network went away")) { try await engine.sync(Self.list) }
        #expect(replica.state.withLock { $0.applied.count } == 2)
        #expect(try replica.syncState(of: Self.list).cursor == 2)
        let report = try await engine.sync(Self.list)
        #expect(report.pulled == 3)
        #expect(server.state.withLock { $0.pulls } == [0, 2, 2, 4])
        #expect(replica.state.withLock { $0.applied.count } == 5)
    }

    /// A long-poll answered with `more`: the round pulls the rest before it returns.
    @Test func aWatchRoundAnsweredWithMorePullsTheRest() async throws {
        let replica = MemoryReplica(pending: [])
        let server = ScriptedServer(log: (0..<5).map { Self.op("Item \($0)", ms: UInt64(10 + $0)) })
        server.state.withLock { $0.pageSize = 2 }
        let engine = SyncEngine(syncing: replica, transport: server)
        let report = try await engine.watchOnce(Self.list, wait: 25)
        #expect(report.pulled == 5)
        #expect(server.state.withLock { $0.pulls } == [0, 2, 4])
        #expect(try replica.syncState(of: Self.list).cursor == 5)
    }

    /// A new epoch seen by a watch round: everything is pushed again, then pulled from the start.
    @Test func aNewEpochDuringAWatchRebuildsTheServerAndPullsFromTheStart() async throws {
        let (replica, server, engine) = try await Self.syncedOnce(pending: [Self.op("Milk", ms: 10)])
        server.state.withLock {
            $0.epoch = "e2"
            $0.log = []
        }
        let report = try await engine.watchOnce(Self.list, wait: 25)
        #expect(report.epochChanged && report.rebuilds == 1)
        #expect(Set(server.state.withLock { $0.log.map(\.value) }) == [.text("Eggs"), .text("Milk")])
        #expect(try replica.syncState(of: Self.list).epoch == "e2")
        #expect(try replica.syncState(of: Self.list).cursor == 2)
    }

    /// A viewer after a new epoch: its rebuild push is refused (the writers rebuild the server);
    /// its unsent changes stay in the outbox, and it pulls the new log from the start.
    @Test func aViewerRefusedDuringARebuildKeepsItsOutboxAndPullsFromTheStart() async throws {
        let (replica, server, engine) = try await Self.syncedOnce()
        // Demoted to viewer, with a change made offline; then the server is restored.
        replica.state.withLock {
            $0.outbox = [PendingOperation(sequence: 9, operation: Self.op("Tea", ms: 20))]
        }
        server.state.withLock {
            $0.viewer = true
            $0.epoch = "e2"
            $0.log = [Self.op("Bread", ms: 30)]
        }
        let report = try await engine.sync(Self.list)
        #expect(report.refusedPending == 1)
        #expect(replica.state.withLock { $0.outbox.map(\.operation.value) } == [.text("Tea")])
        #expect(server.state.withLock { $0.log.map(\.value) } == [.text("Bread")])
        #expect(try replica.syncState(of: Self.list).epoch == "e2")
        #expect(replica.state.withLock { $0.applied.map(\.value) }.last == .text("Bread"))
        #expect(server.state.withLock { $0.pulls }.last == 0)
    }

    /// A list this account was removed from while it was registered: nothing is sent or
    /// received, the report says so and counts the unsent changes, which stay here.
    @Test func aListRemovedWhileRegisteredIsReportedAndKept() async throws {
        let replica = MemoryReplica(pending: [])
        let server = ScriptedServer(log: [Self.op("Eggs", ms: 5)])
        let engine = SyncEngine(syncing: replica, transport: server)
        _ = try await engine.syncAll()
        replica.state.withLock {
            $0.outbox = [PendingOperation(sequence: 3, operation: Self.op("Tea", ms: 20))]
        }
        server.state.withLock { $0.member = false }
        let pullsBefore = server.state.withLock { $0.pulls.count }
        let reports = try await engine.syncAll()
        #expect(reports.count == 1)
        #expect(reports.first?.noLongerMember == true && reports.first?.unsent == 1)
        #expect(server.state.withLock { $0.pulls.count } == pullsBefore)
        #expect(server.state.withLock { $0.pushed.flatMap { $0 }.map(\.value) } == [])
        #expect(replica.state.withLock { $0.outbox.count } == 1)
    }
}
