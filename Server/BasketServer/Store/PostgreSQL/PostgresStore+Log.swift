public import BasketCore
import Foundation
import Postgres
import Synchronization

extension PostgresStore {
    // MARK: The log

    public func append(
        _ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits, pusher: Int64?
    ) throws -> AppendResult {
        // Hashed before any lock is taken.
        let hashed = operations.map { ListLogs.Hashed(ListLogs.Identity($0)) }
        if let result = try appendInOneStatement(operations, hashed, list, receivedAt, limits, pusher) {
            pushesByWay.withLock { $0.oneStatement += 1 }
            announce(result, of: list)
            return result
        }
        pushesByWay.withLock { $0.locked += 1 }
        let result = try appendInTransaction(operations, hashed, list, receivedAt, limits, pusher)
        announce(result, of: list)
        return result
    }

    /// Tells the other instances of a committed push. A push that was all duplicates is told
    /// too: it is most often a client's retry of a push whose answer it never got, through
    /// another instance, and the instance that committed it may have died before it told anyone.
    private func announce(_ result: AppendResult, of list: ListID) {
        guard result.accepted > 0 || result.duplicates > 0 else { return }
        #if DEBUG
            // The test switch for a kill -9 between a commit and its notification (docs/reliability.md).
            if result.accepted > 0, Self.diesBeforeNotifying(list) { kill(getpid(), SIGKILL) }
        #endif
        notifier.committed(list, head: result.cursor)
    }

    #if DEBUG
        /// Debug builds only: an instance started with `BASKET_TEST_DIE_BEFORE_NOTIFY` set to a
        /// list id (hex) kills itself (SIGKILL) right after committing a push to that list, before
        /// telling any other instance, so a test can show that the push still reaches them.
        static func diesBeforeNotifying(_ list: ListID) -> Bool {
            dieBeforeNotifying == Hex.encode(list.raw.bytes)
        }
        private static let dieBeforeNotifying = ProcessInfo.processInfo.environment["BASKET_TEST_DIE_BEFORE_NOTIFY"]
    #endif

    /// A push in a transaction under the list's lock, its log's bookkeeping kept or taken back
    /// with it.
    private func appendInTransaction(
        _ operations: [Op], _ hashed: [ListLogs.Hashed], _ list: ListID, _ receivedAt: Int64, _ limits: ListLimits,
        _ pusher: Int64?
    ) throws -> AppendResult {
        try connected { db in
            var push: ListLogs.Push?
            do {
                let result = try db.transaction {
                    try appendLocked(operations, hashed, list, receivedAt, limits, pusher, db, &push)
                }
                if let push {
                    logs.withLock {
                        $0.close(push, kept: true)
                        $0.trim()
                    }
                }
                return result
            } catch {
                if let push { logs.withLock { $0.close(push, kept: false) } }
                throw error
            }
        }
    }

    /// One push as one statement, without a transaction of its own, when this instance's log of
    /// the list can decide it alone: the list's number is known, no operation of the push may be
    /// one the log holds (no stored value to compare), and every replica's owner is known to be
    /// the pusher. The statement locks the list's row only if its head is still the log's (no
    /// other instance pushed since), the epoch unchanged and the quotas kept, and then writes the
    /// push and moves the head (``CommitNotifier`` tells the others). One round trip instead of
    /// four (BEGIN, the locking read, the write, COMMIT). Nil when it could not decide (nothing
    /// was written; the push is taken back): ``appendInTransaction`` then does it under the lock.
    private func appendInOneStatement(
        _ operations: [Op], _ hashed: [ListLogs.Hashed], _ list: ListID, _ receivedAt: Int64, _ limits: ListLimits,
        _ pusher: Int64?
    ) throws -> AppendResult? {
        // A member with a share to keep within (not an owner) goes the locked way, which counts it.
        guard !operations.isEmpty, pusher == nil || !limits.countsPusher, let known = numbers.withLock({ $0[list] })
        else { return nil }
        var push = logs.withLock { $0.take(known.no) }
        var kept = false
        defer {
            logs.withLock {
                $0.close(push, kept: kept)
                if kept { $0.trim() }
            }
        }
        let head = push.through
        guard head > 0, !hashed.contains(where: push.mayHold) else { return nil }
        guard let admitted = try? push.admit(operations, hashed, after: head, stored: { _ in nil }),
            admitted.count > 0, admitted.count == operations.count
        else { return nil }
        if let pusher {
            guard (try? push.unknownOwners(of: admitted.replicas, pusher: pusher))?.isEmpty == true
            else { return nil }
        }
        let addedItems = Int64(push.newItems)
        let seq = head + Int64(admitted.count)
        let rows = try connected { db in
            try db.prepared(
                """
                WITH head AS (
                    SELECT no, epoch FROM lists
                    WHERE no = $1 AND id = $9 AND last_seq = $10 AND epoch_started = $11
                        AND items + $7 <= $12 AND bytes + $8 <= $13 AND push_epoch <= $14 AND key_epoch >= $15
                        AND encrypted = $16
                    FOR UPDATE),
                stored AS (
                    INSERT INTO pushes(list, last_seq, first_seq, count, received, ops)
                    SELECT no, $2::bigint, $3::bigint, $4::int, $5::bigint, $6::bytea FROM head),
                moved AS (
                    UPDATE lists SET last_seq = $2, items = items + $7, bytes = bytes + $8
                    WHERE no = (SELECT no FROM head))
                SELECT epoch FROM head
                """,
                binding: [
                    .text("\(known.no)"), .text("\(seq)"), .text("\(head + 1)"), .text("\(admitted.count)"),
                    .text("\(receivedAt)"), .binary(admitted.records), .text("\(addedItems)"),
                    .text("\(admitted.bytes)"), .binary(list.raw.bytes), .text("\(head)"),
                    .text("\(known.epochStarted)"),
                    // A push that only shrinks the list may use the reserve; any other must fit under
                    // the quota (a mixed one the statement refuses goes the locked way, exactly).
                    .text("\(limits.maxItems)"),
                    .text(
                        "\(admitted.shrinkingBytes == admitted.bytes ? limits.maxBytes &+ limits.reserveBytes : limits.maxBytes)"
                    ),
                    // Key epochs the list takes (a plain list's are 0): one it does not goes the locked
                    // way, which says why. A rotation commits on the row this locks, so a push waiting
                    // on it reads the new epochs.
                    .text("\(limits.keyEpochs?.lowerBound ?? 0)"), .text("\(limits.keyEpochs?.upperBound ?? 0)"),
                    // A plain push to a list converted since it was read goes the locked way too.
                    .text(limits.sealed ? "true" : "false"),
                ])
        }
        guard rows.count == 1 else {
            pushesByWay.withLock { $0.missed += 1 }
            return nil
        }
        kept = true
        return AppendResult(accepted: admitted.count, duplicates: 0, cursor: seq, epoch: rows.string(0, 0) ?? "")
    }

    /// One push, in its transaction: the list's row locked (pushes to the list from every
    /// instance wait here, so sequence numbers have no gaps), its log in `ListLogs` caught up
    /// with what other instances pushed, operations it has dropped, the rest written as one row.
    /// The other instances are told after the commit (``CommitNotifier``).
    private func appendLocked(
        _ operations: [Op], _ hashed: [ListLogs.Hashed], _ list: ListID, _ receivedAt: Int64, _ limits: ListLimits,
        _ pusher: Int64?, _ db: PostgresConnection, _ push: inout ListLogs.Push?
    ) throws -> AppendResult {
        let head = try db.prepared(
            """
            SELECT no, last_seq, epoch, items, bytes, epoch_started, key_epoch, push_epoch, encrypted FROM lists
            WHERE id = $1 FOR UPDATE
            """, [Self.listParameter(list)])
        guard head.count == 1 else { throw StoreError.noSuchList }
        try limits.checkKeys(
            keyEpoch: head.int64(0, 6), pushEpoch: head.int64(0, 7), encrypted: head.bool(0, 8) == true)
        let no = head.int64(0, 0)
        let lastSeq = head.int64(0, 1)
        let epoch = head.string(0, 2) ?? ""
        numbers.withLock { numbers in
            // Bounded: past the bound, lists are simply learnt again by their next push.
            if numbers.count >= Self.maxKnownNumbers { numbers.removeAll(keepingCapacity: true) }
            numbers[list] = (no, head.int64(0, 5))
        }
        push = logs.withLock { $0.take(no) }
        try push!.catchUp(to: lastSeq) { after, visit in
            let rows = try db.prepared(
                "SELECT ops FROM pushes WHERE list = $1 AND last_seq > $2 ORDER BY last_seq",
                binding: [.text("\(no)"), .text("\(after)")], binaryResults: true)
            try PushRecords.read(rows, column: 0) { record, _ in
                if record.seq > after { visit(record.seq, record.identity) }
            }
        }
        // The stored operations this push's may be (the same keys), read in one query: a push
        // sent again finds all of its own.
        var wanted: [Int64] = []
        for op in hashed { wanted += push!.candidates(op).filter { $0 <= lastSeq } }
        var stored: [Int64: ListLogs.Stored] = [:]
        if !wanted.isEmpty {
            let rows = try db.prepared(
                """
                SELECT DISTINCT ON (p.last_seq) p.ops FROM unnest($2::bigint[]) s(seq)
                    CROSS JOIN LATERAL (
                        SELECT last_seq, ops FROM pushes WHERE list = $1 AND last_seq >= s.seq ORDER BY last_seq LIMIT 1) p
                """, binding: [.text("\(no)"), .text("{" + Set(wanted).map(String.init).joined(separator: ",") + "}")],
                binaryResults: true)
            let candidates = Set(wanted)
            try PushRecords.read(rows, column: 0) { record, bytes in
                guard candidates.contains(record.seq) else { return }
                stored[record.seq] = ListLogs.Stored(identity: record.identity, value: record.value(in: bytes))
            }
        }
        let admitted = try push!.admit(operations, hashed, after: lastSeq) { stored[$0] }
        // Past a quota the whole push is refused (its transaction is rolled back by the caller).
        let addedItems = Int64(push!.newItems)
        if addedItems > 0 && head.int64(0, 3) + addedItems > limits.maxItems { throw StoreError.tooManyItems }
        try limits.checkBytes(held: head.int64(0, 4), adding: admitted.bytes, shrinking: admitted.shrinkingBytes)
        let growing = admitted.bytes - admitted.shrinkingBytes
        if let pusher, limits.countsPusher, addedItems > 0 || growing > 0 {
            // A member's share: what its pushes added, kept per list and account (under the
            // list's row lock, as every push to the list is).
            let used = try db.prepared(
                "SELECT items, bytes FROM member_usage WHERE list = $1 AND account = $2", ["\(no)", "\(pusher)"])
            try limits.checkShare(
                held: used.count == 1 ? (used.int64(0, 0), used.int64(0, 1)) : (0, 0), items: addedItems,
                bytes: growing)
            _ = try db.prepared(
                """
                INSERT INTO member_usage(list, account, items, bytes) VALUES ($1, $2, $3, $4)
                ON CONFLICT (list, account) DO UPDATE
                SET items = member_usage.items + EXCLUDED.items, bytes = member_usage.bytes + EXCLUDED.bytes
                """, ["\(no)", "\(pusher)", "\(addedItems)", "\(growing)"])
        }
        if let pusher {
            // Only replica ids this instance does not know the owner of yet cost a round trip.
            let replicas = try push!.unknownOwners(of: admitted.replicas, pusher: pusher)
            if !replicas.isEmpty {
                // Counts those bound to someone else (refused), and binds to the pusher the unbound
                // ones stamped since the epoch began. Under the list's row lock, so no other push
                // to the list binds meanwhile.
                let bindable = Array(
                    ListLogs.Push.toBind(
                        replicas, of: admitted.replicas, since: StoredOps.epochColumn(head.int64(0, 5))))
                func array(_ ids: [Int64]) -> String { "{" + ids.map(String.init).joined(separator: ",") + "}" }
                // Those bound to someone else, the bindable ones bound to nobody, and the limits'
                // counts (index ranges bounded by the limits themselves).
                let counts = try db.prepared(
                    """
                    WITH wanted(replica) AS (SELECT unnest($2::bigint[]))
                    SELECT (SELECT count(*) FROM replicas r JOIN wanted w ON r.replica = w.replica
                            WHERE r.list = $1 AND r.account <> $3),
                        (SELECT count(*) FROM unnest($4::bigint[]) b(replica)
                            WHERE NOT EXISTS (SELECT 1 FROM replicas r WHERE r.list = $1 AND r.replica = b.replica)),
                        (SELECT count(*) FROM replicas WHERE list = $1),
                        (SELECT count(*) FROM replicas WHERE list = $1 AND account = $3)
                    """, ["\(no)", array(replicas), "\(pusher)", array(bindable)])
                if counts.int64(0, 0) > 0 { throw StoreError.replicaTaken }
                try limits.checkReplicas(
                    adding: counts.int64(0, 1), mine: counts.int64(0, 3), onList: counts.int64(0, 2))
                if !bindable.isEmpty {
                    _ = try db.prepared(
                        """
                        INSERT INTO replicas(list, replica, account) SELECT $1, unnest($2::bigint[]), $3
                        ON CONFLICT (list, replica) DO NOTHING
                        """, ["\(no)", array(bindable), "\(pusher)"])
                    push!.own(bindable, by: pusher, bound: true)
                }
            }
        }
        let seq = lastSeq + Int64(admitted.count)
        if seq != lastSeq {
            _ = try db.prepared(
                """
                WITH stored AS (
                    INSERT INTO pushes(list, last_seq, first_seq, count, received, ops) VALUES ($1, $2, $3, $4, $5, $6)),
                moved AS (UPDATE lists SET last_seq = $2, items = items + $7, bytes = bytes + $8 WHERE no = $1)
                SELECT 1
                """,
                binding: [
                    .text("\(no)"), .text("\(seq)"), .text("\(lastSeq + 1)"), .text("\(admitted.count)"),
                    .text("\(receivedAt)"), .binary(admitted.records), .text("\(addedItems)"),
                    .text("\(admitted.bytes)"),
                ])
        }
        return AppendResult(
            accepted: admitted.count, duplicates: operations.count - admitted.count, cursor: seq, epoch: epoch)
    }

    public func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, member: Int64?) throws -> LogPage
    {
        try connected { db in
            // One statement, one snapshot: the list's head and the page agree. Rows are read until
            // their records hold `maxBytes` (a record is smaller than its encoded line), so the
            // database never sends much more than the page needs.
            let rows = try db.prepared(
                """
                SELECT l.last_seq, l.epoch, l.compacted_through, p.ops
                FROM lists l LEFT JOIN LATERAL (
                    SELECT * FROM (
                        SELECT last_seq, ops, sum(octet_length(ops)) OVER (ORDER BY last_seq) - octet_length(ops) AS before
                        FROM (SELECT last_seq, ops FROM pushes WHERE pushes.list = l.no AND pushes.last_seq > $2
                            ORDER BY last_seq LIMIT $3) q
                    ) w WHERE w.before < $4) p ON true
                WHERE l.id = $1
                    AND ($5::bigint IS NULL OR EXISTS (SELECT 1 FROM members m WHERE m.list = l.no AND m.account = $5))
                ORDER BY p.last_seq
                """,
                binding: [
                    .binary(list.raw.bytes), .text("\(cursor)"), .text("\(limit)"), .text("\(maxBytes)"),
                    .text(member.map { "\($0)" }),
                ], binaryResults: true)
            guard rows.count > 0 else { throw StoreError.noSuchList }
            var page = PageBuilder(list: list, after: cursor, head: rows.int64(0, 0), maxBytes: maxBytes)
            var count = 0
            for row in 0..<rows.count where !rows.isNull(row, 3) {
                try PushRecords.read(rows, row: row, column: 3) { record, bytes in
                    guard record.seq > cursor, count < limit, !page.isFull else { return }
                    page.append(
                        seq: record.seq, item: record.identity.item, field: record.identity.field,
                        value: record.value(in: bytes), timestamp: record.identity.timestamp,
                        replica: record.identity.replica)
                    count += 1
                }
            }
            return page.page(epoch: rows.string(0, 1) ?? "", compactedThrough: rows.int64(0, 2))
        }
    }

    public func usage(of list: ListID) throws -> (items: Int64, bytes: Int64) {
        try connected { db in
            let rows = try db.prepared("SELECT items, bytes FROM lists WHERE id = $1", [Self.listParameter(list)])
            guard rows.count == 1 else { throw StoreError.noSuchList }
            return (rows.int64(0, 0), rows.int64(0, 1))
        }
    }

    public func head(of list: ListID) throws -> (cursor: Int64, epoch: String) {
        try connected { db in
            let rows = try db.prepared("SELECT last_seq, epoch FROM lists WHERE id = $1", [Self.listParameter(list)])
            guard rows.count == 1 else { throw StoreError.noSuchList }
            return (rows.int64(0, 0), rows.string(0, 1) ?? "")
        }
    }

    public func heads(of lists: [ListID]) throws -> [ListID: LogHead] {
        var heads: [ListID: LogHead] = [:]
        for chunk in stride(from: 0, to: lists.count, by: headsPerStatement) {
            let asked = lists[chunk..<min(chunk + headsPerStatement, lists.count)]
            // Hex digits need no quoting in an array literal.
            let array = "{" + asked.map { Hex.encode($0.raw.bytes) }.joined(separator: ",") + "}"
            try connected { db in
                let rows = try db.prepared(
                    """
                    SELECT encode(id, 'hex'), last_seq, epoch, compacted_through FROM lists
                    WHERE id = ANY(SELECT decode(h, 'hex') FROM unnest($1::text[]) h)
                    """, [array])
                for row in 0..<rows.count {
                    guard let hex = rows.string(row, 0), let bytes = Hex.bytes(hex), let id = ID128(bytes: bytes) else {
                        continue
                    }
                    heads[ListID(raw: id)] = LogHead(
                        cursor: rows.int64(row, 1), epoch: rows.string(row, 2) ?? "",
                        compactedThrough: rows.int64(row, 3))
                }
            }
        }
        return heads
    }

    // MARK: Compaction

    /// Drops every operation a later one of its register has superseded, received before
    /// `before`; list by list, each under its row's lock (pushes to other lists go on).
    public func compact(receivedBefore before: Int64) throws -> Int {
        let lists = try connected { db in
            let rows = try db.prepared("SELECT DISTINCT list FROM pushes WHERE received < $1", ["\(before)"])
            return (0..<rows.count).map { rows.int64($0, 0) }
        }
        var dropped = 0
        for no in lists {
            dropped += try connected { db in try db.transaction { try compact(no, receivedBefore: before, db) } }
        }
        return dropped
    }

    /// Compacts list `no`'s log; returns the operations dropped.
    private func compact(_ no: Int64, receivedBefore before: Int64, _ db: PostgresConnection) throws -> Int {
        // Locked as a push locks it: another instance compacting at the same time waits, then
        // finds nothing left to drop.
        guard try db.prepared("SELECT 1 FROM lists WHERE no = $1 FOR UPDATE", ["\(no)"]).count == 1 else { return 0 }
        let rows = try db.prepared(
            "SELECT last_seq, received, ops FROM pushes WHERE list = $1 ORDER BY last_seq",
            binding: [.text("\(no)")], binaryResults: true)
        let compaction = try PushRecords.compact(
            (0..<rows.count).map { row in
                PushRecords.StoredRow(
                    lastSeq: rows.int64(row, 0), received: rows.int64(row, 1), ops: rows.bytes(row, 2) ?? [])
            }, receivedBefore: before)
        for (lastSeq, ops, count) in compaction.rewritten {
            if let ops {
                _ = try db.prepared(
                    "UPDATE pushes SET ops = $3, count = $4 WHERE list = $1 AND last_seq = $2",
                    binding: [.text("\(no)"), .text("\(lastSeq)"), .binary(ops), .text("\(count)")])
            } else {
                _ = try db.prepared("DELETE FROM pushes WHERE list = $1 AND last_seq = $2", ["\(no)", "\(lastSeq)"])
            }
        }
        if compaction.dropped > 0 {
            _ = try db.prepared(
                """
                UPDATE lists SET compacted_through = greatest(compacted_through, $2), dropped = dropped + $3,
                    bytes = bytes - $4, items = items - $5 WHERE no = $1
                """,
                ["\(no)", "\(compaction.top)", "\(compaction.dropped)", "\(compaction.bytes)", "\(compaction.items)"])
        }
        for (replica, freed) in compaction.freed {
            _ = try db.prepared(
                PostgresStore.freeMemberUsageSQL, ["\(no)", "\(replica)", "\(freed.items)", "\(freed.bytes)"])
        }
        // Items dropped whole: this instance's table of the list's items is read again (other
        // instances' count such an item, added again, as known: at most once each, until their
        // own tables are read again).
        if compaction.items > 0 { logs.withLock { $0.forget(no) } }
        return compaction.dropped
    }
}

extension PushRecords {
    /// Calls `visit` with every record of column `column` of every row of `rows`.
    static func read(
        _ rows: Rows, column: Int, _ visit: (Record, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        for row in 0..<rows.count { try read(rows, row: row, column: column, visit) }
    }

    /// Calls `visit` with every record of column `column` of row `row` of `rows`.
    static func read(
        _ rows: Rows, row: Int, column: Int, _ visit: (Record, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard let bytes = rows.bytes(row, column) else { throw damaged }
        try bytes.withUnsafeBytes { try read($0, visit) }
    }
}
