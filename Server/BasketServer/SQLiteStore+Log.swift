public import BasketCore
import Foundation
import SQLite
import Synchronization

/// The log of the embedded store: pushes (group commit, with what the writer knows of each list's
/// log in ``ListLogs``), pages and heads.
extension SQLiteStore {
    /// Stores a push. Pushes are written by one writer thread, and those that wait for it share
    /// one transaction and one commit (group commit): each push in its own savepoint, so one bad
    /// push fails alone, and the fsync is paid once for all of them.
    ///
    /// One thread writes, not the first pusher to arrive: the writer's working set (the hot pages
    /// of the log's B-tree, the lists' tables in ``ListLogs``) then stays in one core's cache.
    /// When the pushing threads took turns, a push's writing took half as long again as the same
    /// writes from one thread. The thread ends after a second without pushes.
    public func append(
        _ operations: [Op], to list: ListID, receivedAt: Int64, limits: ListLimits
    ) throws -> AppendResult {
        let request = PendingAppend(operations: operations, list: list, receivedAt: receivedAt, limits: limits)
        let start: Bool = queue.withLock { queue in
            queue.pending.append(request)
            if queue.writerRunning { return false }
            queue.writerRunning = true
            return true
        }
        if start {
            let writer = Thread { [self] in writePushes() }
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
            let batch: [PendingAppend] = queue.withLock { queue in
                defer { queue.pending.removeAll() }
                return queue.pending
            }
            if !batch.isEmpty {
                write(batch)
                continue
            }
            if writerWake.wait(timeout: .now() + 1) == .success { continue }
            // Stop, unless a push came meanwhile (it saw the writer running and only signalled).
            let stop: Bool = queue.withLock { queue in
                guard queue.pending.isEmpty else { return false }
                queue.writerRunning = false
                return true
            }
            if stop { return }
        }
    }

    /// Writes one batch of pushes in one transaction and answers them.
    private func write(_ batch: [PendingAppend]) {
        // The body keeps every failure in the requests' results, so `locked` has none to throw.
        try? locked { db in
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
                "SELECT no, last_seq, epoch, items, bytes, dropped FROM lists WHERE id = ?",
                .blob(request.list.raw.bytes),
                map: {
                    ($0.int64(0), $0.int64(1), $0.string(2) ?? "", $0.int64(3), $0.int64(4), $0.int64(5))
                }
            ).first
        else { throw StoreError.noSuchList }
        let (no, lastSeq, epoch, items, bytes, dropped) = row
        var addedBytes: Int64 = 0
        push = try logs.open(no, expected: Int(clamping: lastSeq - dropped)) { visit in
            let scan = try db.prepare("SELECT seq, item, field, ts, replica FROM ops WHERE list = ?")
            try scan.bind(no, at: 1)
            while let row = try scan.step() {
                visit(row.int64(0), Self.identity(row, from: 1))
            }
        }
        // New operations are written up to 64 rows a statement: a statement's own cost (its step,
        // the opening and closing of its program) is paid once for them.
        var waiting: [Int] = []  // indices in `request.operations`, numbered after `written`
        waiting.reserveCapacity(Self.rowsPerInsert.last!)
        var written = lastSeq
        func flush() throws {
            var start = 0
            while start < waiting.count {
                let rows = Self.rowsPerInsert.last { $0 <= waiting.count - start }!
                let insert = try db.cached(Self.insertSQL(rows: rows))
                for row in 0..<rows {
                    let op = request.operations[waiting[start + row]]
                    let identity = request.hashed[waiting[start + row]].identity
                    let base = Int32(row * 8)
                    try insert.bind(no, at: base + 1)
                    try insert.bind(written + Int64(start + row) + 1, at: base + 2)
                    try withUnsafeBytes(of: (op.item.raw.high.bigEndian, op.item.raw.low.bigEndian)) {
                        try insert.bind($0, at: base + 3)
                    }
                    try insert.bind(identity.field, at: base + 4)
                    try insert.bind(identity.timestamp, at: base + 5)
                    try insert.bind(identity.replica, at: base + 6)
                    switch op.value {
                    case .null: try insert.bindNull(at: base + 7)
                    case .bool(let b): try insert.bind(b ? 1 : 0, at: base + 7)
                    case .text(let text): try insert.bind(text, at: base + 7)
                    }
                    try insert.bind(request.receivedAt, at: base + 8)
                }
                try insert.runToCompletion()
                start += rows
            }
            written += Int64(waiting.count)
            waiting.removeAll(keepingCapacity: true)
        }
        let stored = try db.cached("SELECT item, field, ts, replica FROM ops WHERE list = ?1 AND seq = ?2")
        for (index, hashed) in request.hashed.enumerated() {
            let new = try push!.admit(hashed, at: written + Int64(waiting.count) + 1) { earlier in
                if earlier > written { try flush() }  // it may be one of those waiting
                try stored.bind(no, at: 1)
                try stored.bind(earlier, at: 2)
                defer { stored.reset() }
                return try stored.step().map { Self.identity($0, from: 0) }
            }
            guard new else { continue }
            waiting.append(index)
            if waiting.count == Self.rowsPerInsert.last! { try flush() }
            addedBytes += ListLimits.bytes(of: request.operations[index].value)
        }
        try flush()
        let seq = written
        // Past a quota the whole push is refused (its savepoint is rolled back by the caller).
        let addedItems = Int64(push!.newItems)
        if addedItems > 0 && items + addedItems > request.limits.maxItems { throw StoreError.tooManyItems }
        if addedBytes > 0 && bytes + addedBytes > request.limits.maxBytes { throw StoreError.listTooLarge }
        if seq != lastSeq {
            try db.run(
                "UPDATE lists SET last_seq = ?, items = items + ?, bytes = bytes + ? WHERE no = ?", .integer(seq),
                .integer(addedItems), .integer(addedBytes), .integer(no))
        }
        let accepted = Int(seq - lastSeq)
        return AppendResult(
            accepted: accepted, duplicates: request.operations.count - accepted, cursor: seq, epoch: epoch)
    }

    /// The sizes of the statements that write operations, the largest last.
    static let rowsPerInsert = [1, 2, 4, 8, 16, 32, 64]

    /// The statement that writes `rows` operations.
    static func insertSQL(rows: Int) -> String {
        insertSQLs[rowsPerInsert.firstIndex(of: rows)!]
    }

    private static let insertSQLs = rowsPerInsert.map { rows in
        "INSERT INTO ops(list, seq, item, field, ts, replica, value, received) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// An operation's identity from four columns of a row: item, field, ts, replica.
    private static func identity(_ row: Row, from column: Int32) -> ListLogs.Identity {
        ListLogs.Identity(
            item: ItemID(raw: ID128(row.blob128(column))), field: row.int64(column + 1),
            timestamp: row.int64(column + 2), replica: row.int64(column + 3))
    }

    public func page(of list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, member: Int64?) throws -> Page {
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
                SELECT l.no, l.last_seq, l.epoch, l.compacted_through, m.role FROM lists l
                LEFT JOIN members m ON m.list = l.no AND m.account = ?2 WHERE l.id = ?1
                """, .blob(list.raw.bytes), member.map { .integer($0) } ?? .null,
                map: {
                    (
                        ListHead(
                            no: $0.int64(0), cursor: $0.int64(1), epoch: $0.string(2) ?? "",
                            compactedThrough: $0.int64(3)),
                        $0.string(4).flatMap(Role.init(rawValue:))
                    )
                }
            ).first
        else { throw StoreError.noSuchList }
        return row
    }

    private func page(
        _ db: Connection, _ list: ListID, after cursor: Int64, limit: Int, maxBytes: Int, _ member: Int64?
    ) throws -> Page {
        let (head, role) = try head(db, list, member)
        if member != nil && role == nil { throw StoreError.noSuchList }
        var page = PageBuilder(list: list, after: cursor, head: head.cursor, maxBytes: maxBytes)
        let statement = try db.cached(
            "SELECT seq, item, field, ts, replica, value FROM ops WHERE list = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
        )
        try statement.bind(head.no, at: 1)
        try statement.bind(cursor, at: 2)
        try statement.bind(Int64(limit), at: 3)
        while !page.isFull, let row = try statement.step() {
            let value: Value
            if row.isNull(5) {
                value = .null
            } else if let text = row.string(5), !row.isInteger(5) {
                value = .text(text)
            } else {
                value = .bool(row.int64(5) != 0)
            }
            page.append(
                seq: row.int64(0), item: ItemID(raw: ID128(row.blob128(1))), field: row.int64(2), value: value,
                timestamp: row.int64(3), replica: row.int64(4))
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
    let done = DispatchSemaphore(value: 0)
    var result: Result<AppendResult, any Error>?

    init(operations: [Op], list: ListID, receivedAt: Int64, limits: ListLimits) {
        self.operations = operations
        hashed = operations.map { ListLogs.Hashed(ListLogs.Identity($0)) }
        self.limits = limits
        self.list = list
        self.receivedAt = receivedAt
    }
}
