public import BasketCore
import Foundation
import SQLite
import Synchronization

/// The log of the embedded store: pushes (group commit, with what the writer knows of each list's
/// log in `ListLogs`), pages and heads.
extension SQLiteStore {
    /// Stores a push. Pushes are written by one writer thread, and those that wait for it share
    /// one transaction and one commit (group commit): each push in its own savepoint, so one bad
    /// push fails alone, and the fsync is paid once for all of them.
    ///
    /// One thread writes, not the first pusher to arrive: the writer's working set (the hot pages
    /// of the log's B-tree, the lists' tables in `ListLogs`) then stays in one core's cache.
    /// When the pushing threads took turns, a push's writing took half as long again as the same
    /// writes from one thread. The thread ends after a second without pushes.
    public func append(
        _ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits, pusher: Int64?
    ) throws -> AppendResult {
        let request = PendingAppend(
            operations: operations, list: list, receivedAt: receivedAt, limits: limits, pusher: pusher)
        let start: Bool = try queue.withLock { queue in
            guard !isClosed.load(ordering: .acquiring) else { throw StoreError.unavailable }
            queue.pending.append(request)
            if queue.writerRunning { return false }
            queue.writerRunning = true
            writerThreads.enter()
            return true
        }
        if start {
            let writer = Thread { [self] in
                writePushes()
                writerThreads.leave()
            }
            writer.name = "basket-sqlite-writer"
            writer.start()
        } else {
            writerWake.signal()
        }
        request.done.wait()
        return try Self.translatingErrors { try request.result!.get() }
    }

    /// The writer thread: writes what is queued, batch after batch, until a second passes with
    /// nothing queued.
    private func writePushes() {
        while true {
            let batch: [PendingAppend] = queue.withLock { Self.fairBatch(&$0.pending) }
            if !batch.isEmpty {
                write(batch)
                continue
            }
            if !isClosed.load(ordering: .acquiring), writerWake.wait(timeout: .now() + 1) == .success { continue }
            // Stop, unless a push came meanwhile (it saw the writer running and only signalled).
            let stop: Bool = queue.withLock { queue in
                guard queue.pending.isEmpty else { return false }
                queue.writerRunning = false
                return true
            }
            if stop { return }
        }
    }

    /// The most pushes of one account in one batch (``fairBatch(_:)``).
    static let pushesPerAccountInBatch = 4

    /// Takes the next batch out of `pending`, in arrival order, with at most
    /// ``pushesPerAccountInBatch`` pushes of any one account; the rest wait for the next batch.
    /// One account pushing from 24 threads at once queued 24 pushes ahead of every other
    /// family's, each of which then waited for all of them: now it waits for four at most.
    static func fairBatch(_ pending: inout [PendingAppend]) -> [PendingAppend] {
        var taken: [Int64?: Int] = [:]
        var batch: [PendingAppend] = []
        var rest: [PendingAppend] = []
        for push in pending {
            if taken[push.pusher, default: 0] < pushesPerAccountInBatch {
                taken[push.pusher, default: 0] += 1
                batch.append(push)
            } else {
                rest.append(push)
            }
        }
        pending = rest
        return batch
    }

    /// Writes one batch of pushes in one transaction and answers them.
    private func write(_ batch: [PendingAppend]) {
        // The body keeps every failure in the requests' results: `locked` throws only when the
        // store is closed, and then nothing of the batch was written.
        do {
            try locked { db in
                do {
                    try db.transaction {
                        // Another connection wrote the file since this one last did (a second
                        // server on it, or a subcommand run by hand): what `logs` holds may be old.
                        let version = try db.scalar("PRAGMA data_version")?.integerValue
                        if version != dataVersion {
                            logs.forget()
                            dataVersion = version
                        }
                        for pending in batch {
                            try db.execute("SAVEPOINT push")
                            // The list's log in `logs`, out of it while the push is written.
                            var push: ListLogs.Push?
                            var kept = false
                            do {
                                pending.result = .success(try appendLocked(pending, db, push: &push))
                                try db.execute("RELEASE push")
                                kept = true
                            } catch {
                                pending.result = .failure(error)
                                if let push { logs.close(push, kept: false) }
                                try db.execute("ROLLBACK TO push; RELEASE push")
                            }
                            if kept, let push { logs.close(push, kept: true) }
                        }
                    }
                    logs.trim()
                } catch {
                    for pending in batch { pending.result = .failure(error) }
                    // The logs hold operations of the commit that failed.
                    logs.forget()
                }
            }
        } catch {
            for pending in batch { if case .none = pending.result { pending.result = .failure(error) } }
        }
        // Committed: pulls answered from memory see the new heads before any push is answered.
        for pending in batch {
            if case .success(let result)? = pending.result { heads.advanced(pending.list, to: result.cursor) }
        }
        for pending in batch { pending.done.signal() }
    }

    /// One push inside the commit's transaction. Operations and items new to the list are
    /// recorded in its log from `logs`, taken out as `push` (for the caller to put back, kept or not).
    private func appendLocked(
        _ request: PendingAppend, _ db: Connection, push: inout ListLogs.Push?
    ) throws -> AppendResult {
        guard
            let row = try db.query(
                """
                SELECT no, last_seq, epoch, items, bytes, dropped, epoch_started, key_epoch, push_epoch, encrypted
                FROM lists WHERE id = ?
                """,
                .blob(request.list.raw.bytes),
                map: {
                    (
                        $0.int64(0), $0.int64(1), $0.string(2) ?? "", $0.int64(3), $0.int64(4), $0.int64(5),
                        $0.int64(6), $0.int64(7), $0.int64(8), $0.int64(9) != 0
                    )
                }
            ).first
        else { throw StoreError.noSuchList }
        let (no, lastSeq, epoch, items, bytes, dropped, epochStarted, keyEpoch, pushEpoch, encrypted) = row
        try request.limits.checkKeys(keyEpoch: keyEpoch, pushEpoch: pushEpoch, encrypted: encrypted)
        push = try logs.open(no, expected: Int(clamping: lastSeq - dropped)) { visit in
            let scan = try db.prepare("SELECT ops FROM pushes WHERE list = ?")
            try scan.bind(no, at: 1)
            while let row = try scan.step() {
                try row.withBlob(0) { try PushRecords.read($0) { record, _ in visit(record.seq, record.identity) } }
            }
        }
        // A hash that matches is confirmed against the stored record: its row is read once for
        // all the operations of the push that fall in it (a push sent again finds its own there).
        let find = try db.cached(
            "SELECT first_seq, ops FROM pushes WHERE list = ?1 AND last_seq >= ?2 ORDER BY last_seq LIMIT 1")
        var found: (seqs: ClosedRange<Int64>, identities: [Int64: ListLogs.Stored])?
        func stored(_ seq: Int64) throws -> ListLogs.Stored? {
            if let found, found.seqs.contains(seq) { return found.identities[seq] }
            try find.bind(no, at: 1)
            try find.bind(seq, at: 2)
            defer { find.reset() }
            guard let row = try find.step() else { return nil }
            var identities: [Int64: ListLogs.Stored] = [:]
            var last = seq
            try row.withBlob(1) {
                try PushRecords.read($0) { record, bytes in
                    identities[record.seq] = ListLogs.Stored(identity: record.identity, value: record.value(in: bytes))
                    last = max(last, record.seq)
                }
            }
            found = (min(row.int64(0), seq)...last, identities)
            return identities[seq]
        }
        let admitted = try push!.admit(request.operations, request.hashed, after: lastSeq, stored: stored)
        let seq = lastSeq + Int64(admitted.count)
        // Past a quota the whole push is refused (its savepoint is rolled back by the caller).
        let addedItems = Int64(push!.newItems)
        if addedItems > 0 && items + addedItems > request.limits.maxItems { throw StoreError.tooManyItems }
        try request.limits.checkBytes(held: bytes, adding: admitted.bytes, shrinking: admitted.shrinkingBytes)
        let growing = admitted.bytes - admitted.shrinkingBytes
        if let pusher = request.pusher, request.limits.countsPusher, addedItems > 0 || growing > 0 {
            // A member's share: what its pushes added, kept per list and account.
            let held =
                try db.query(
                    "SELECT items, bytes FROM member_usage WHERE list = ? AND account = ?", .integer(no),
                    .integer(pusher), map: { ($0.int64(0), $0.int64(1)) }
                ).first ?? (0, 0)
            try request.limits.checkShare(held: held, items: addedItems, bytes: growing)
            try db.run(
                """
                INSERT INTO member_usage(list, account, items, bytes) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(list, account) DO UPDATE SET items = items + ?3, bytes = bytes + ?4
                """, .integer(no), .integer(pusher), .integer(addedItems), .integer(growing))
        }
        if let pusher = request.pusher {
            // Replica ids the log does not know the owner of yet: read, or bound to the pusher.
            let unknown = try push!.unknownOwners(of: admitted.replicas, pusher: pusher)
            let bindable = ListLogs.Push.toBind(
                unknown, of: admitted.replicas, since: StoredOps.epochColumn(epochStarted))
            let owner = try db.cached("SELECT account FROM replicas WHERE list = ? AND replica = ?")
            var unbound: [Int64] = []
            for replica in unknown {
                try owner.bind(no, at: 1)
                try owner.bind(replica, at: 2)
                let found = try owner.step().map { $0.int64(0) }
                owner.reset()
                if let found {
                    push!.own([replica], by: found, bound: false)
                    if found != pusher { throw StoreError.replicaTaken }
                    continue
                }
                if bindable.contains(replica) { unbound.append(replica) }
            }
            if !unbound.isEmpty {
                // Bounded by the limits themselves: index ranges of at most that many rows.
                let counted = try db.query(
                    """
                    SELECT (SELECT count(*) FROM replicas WHERE list = ?1),
                        (SELECT count(*) FROM replicas WHERE list = ?1 AND account = ?2)
                    """, .integer(no), .integer(pusher), map: { ($0.int64(0), $0.int64(1)) })
                try request.limits.checkReplicas(
                    adding: Int64(unbound.count), mine: counted.first?.1 ?? 0, onList: counted.first?.0 ?? 0)
                let bind = try db.cached("INSERT INTO replicas(list, replica, account) VALUES (?, ?, ?)")
                for replica in unbound {
                    try bind.bind(no, at: 1)
                    try bind.bind(replica, at: 2)
                    try bind.bind(pusher, at: 3)
                    try bind.runToCompletion()
                }
                push!.own(unbound, by: pusher, bound: true)
            }
        }
        if seq != lastSeq {
            try Self.insert(
                [
                    PushRecords.PackedRow(
                        list: no, firstSeq: lastSeq + 1, lastSeq: seq, count: admitted.count,
                        received: request.receivedAt, ops: admitted.records)
                ], db)
            try db.run(
                "UPDATE lists SET last_seq = ?, items = items + ?, bytes = bytes + ? WHERE no = ?", .integer(seq),
                .integer(addedItems), .integer(admitted.bytes), .integer(no))
        }
        return AppendResult(
            accepted: admitted.count, duplicates: request.operations.count - admitted.count, cursor: seq, epoch: epoch)
    }

    public func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, member: Int64?) throws -> LogPage
    {
        // Most pulls find nothing new: the list's head alone answers them, from memory when known.
        if let member {
            let head = try memberHead(list, member).head
            if cursor >= head.cursor {
                return PageBuilder(list: list, after: cursor, head: head.cursor, maxBytes: maxBytes)
                    .page(epoch: head.epoch, compactedThrough: head.compactedThrough)
            }
        }
        return try reading(snapshot: true) { db in
            try page(db, list, after: cursor, limit: limit, maxBytes: maxBytes, member)
        }
    }

    /// The list's head, and `member`'s role in it (nil when it is not one, or none was asked).
    func head(_ db: Connection, _ list: ListID, _ member: Int64?) throws -> (ListHead, Role?) {
        guard
            let row = try db.query(
                """
                SELECT l.no, l.last_seq, l.epoch, l.compacted_through, m.role, l.encrypted FROM lists l
                LEFT JOIN members m ON m.list = l.no AND m.account = ?2 WHERE l.id = ?1
                """, .blob(list.raw.bytes), member.map { .integer($0) } ?? .null,
                map: {
                    (
                        ListHead(
                            no: $0.int64(0), cursor: $0.int64(1), epoch: $0.string(2) ?? "",
                            compactedThrough: $0.int64(3), encrypted: $0.int64(5) != 0),
                        $0.string(4).flatMap(Role.init(rawValue:))
                    )
                }
            ).first
        else { throw StoreError.noSuchList }
        return row
    }

    private func page(
        _ db: Connection, _ list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, _ member: Int64?
    ) throws -> LogPage {
        let (head, role) = try head(db, list, member)
        if member != nil && role == nil { throw StoreError.noSuchList }
        var page = PageBuilder(list: list, after: cursor, head: head.cursor, maxBytes: maxBytes)
        // Rows from the one that holds the sequence number after `cursor`; a row's records are
        // read in place.
        let statement = try db.cached("SELECT ops FROM pushes WHERE list = ?1 AND last_seq > ?2 ORDER BY last_seq")
        try statement.bind(head.no, at: 1)
        try statement.bind(cursor, at: 2)
        var count = 0
        while !page.isFull, count < limit, let row = try statement.step() {
            try row.withBlob(0) {
                try PushRecords.read($0) { record, bytes in
                    guard record.seq > cursor, count < limit, !page.isFull else { return }
                    let id = record.identity
                    page.append(
                        seq: record.seq, item: id.item, field: id.field, value: record.value(in: bytes),
                        timestamp: id.timestamp, replica: id.replica)
                    count += 1
                }
            }
        }
        statement.reset()
        return page.page(epoch: head.epoch, compactedThrough: head.compactedThrough)
    }

    public func usage(of list: ListID) throws -> (items: Int64, bytes: Int64) {
        try locked { db in
            guard
                let row = try db.query(
                    "SELECT items, bytes FROM lists WHERE id = ?", .blob(list.raw.bytes),
                    map: { ($0.int64(0), $0.int64(1)) }
                ).first
            else { throw StoreError.noSuchList }
            return row
        }
    }

    public func head(of list: ListID) throws -> (cursor: Int64, epoch: String) {
        try reading { db in
            guard
                let head = try db.query(
                    "SELECT last_seq, epoch FROM lists WHERE id = ?", .blob(list.raw.bytes),
                    map: {
                        ($0.int64(0), $0.string(1) ?? "")
                    }
                ).first
            else { throw StoreError.noSuchList }
            return head
        }
    }

    public func heads(of lists: [ListID]) throws -> [ListID: LogHead] {
        var heads: [ListID: LogHead] = [:]
        // One read for all of them: each a lookup of the lists' primary key in this process.
        for chunk in stride(from: 0, to: lists.count, by: headsPerStatement) {
            try reading { db in
                for list in lists[chunk..<min(chunk + headsPerStatement, lists.count)] {
                    let found = try db.query(
                        "SELECT last_seq, epoch, compacted_through FROM lists WHERE id = ?", .blob(list.raw.bytes),
                        map: { LogHead(cursor: $0.int64(0), epoch: $0.string(1) ?? "", compactedThrough: $0.int64(2)) })
                    if let head = found.first { heads[list] = head }
                }
            }
        }
        return heads
    }
}

/// One push waiting in the group commit queue.
final class PendingAppend: @unchecked Sendable {
    // `@unchecked Sendable`: `result` is written by the writing thread before `done` is signalled
    // and read by the waiting thread after it.
    let operations: [Op]
    /// The operations' identities and keys, made by the pushing thread, not under the writer's lock.
    let hashed: [ListLogs.Hashed]
    let limits: ListLimits
    let list: ListID
    let receivedAt: Int64
    /// The account pushing (its replica ids are checked and bound), nil for none.
    let pusher: Int64?
    let done = DispatchSemaphore(value: 0)
    var result: Result<AppendResult, any Error>?

    init(operations: [Op], list: ListID, receivedAt: Int64, limits: ListLimits, pusher: Int64?) {
        self.pusher = pusher
        self.operations = operations
        hashed = operations.map { ListLogs.Hashed(ListLogs.Identity($0)) }
        self.limits = limits
        self.list = list
        self.receivedAt = receivedAt
    }
}
