import BasketCore
import Testing

@testable import BasketServer

/// What the SQLite writer knows of lists' logs, alone: operations are told apart by their whole
/// identity even when every hash collides, a push not kept leaves nothing behind, and the lists
/// kept stay within the capacity.
struct ListLogsTests {
    typealias Identity = ListLogs.Identity

    static func identity(_ n: Int, item: Int = 0) -> Identity {
        Identity(
            item: ItemID(raw: ID128(high: 1, low: UInt64(item))), field: 0, timestamp: Int64(n), replica: 9)
    }

    /// A log in memory standing for the store's rows: sequence number → identity.
    final class Rows {
        var rows: [Int64: Identity] = [:]
        var last: Int64 = 0
        func stored(_ seq: Int64) -> Identity? { rows[seq] }
    }

    /// Admits `identities` into list `no` as a push would, storing the new ones after `rows`'s last.
    static func push(_ identities: [Identity], _ logs: inout ListLogs, _ rows: Rows, list no: Int64 = 1)
        -> (accepted: Int, journal: ListLogs.Journal)
    {
        var journal = logs.load(no, expected: rows.rows.count) { visit in
            for (seq, identity) in rows.rows.sorted(by: { $0.key < $1.key }) { visit(seq, identity) }
        }
        var accepted = 0
        for identity in identities {
            let seq = rows.last + 1
            if logs.admit(identity, at: seq, journal: &journal, stored: rows.stored) {
                rows.rows[seq] = identity
                rows.last = seq
                accepted += 1
            }
        }
        return (accepted, journal)
    }

    @Test(arguments: [false, true]) func duplicatesAreFoundAndNewOperationsKept(collide: Bool) {
        var logs = ListLogs(capacity: 1_000, key: collide ? { _ in 7 } : \.key)
        let rows = Rows()
        let first = (0..<50).map { Self.identity($0, item: $0 % 5) }
        #expect(Self.push(first, &logs, rows).accepted == 50)
        #expect(Self.push(first, &logs, rows).accepted == 0)
        // Half known, half new, and one new operation twice in the same push.
        let mixed = (25..<75).map { Self.identity($0, item: $0 % 5) } + [Self.identity(74, item: 4)]
        let (accepted, journal) = Self.push(mixed, &logs, rows)
        #expect(accepted == 25)
        #expect(journal.items.isEmpty)  // items 0…4 were all held before
        #expect(logs.count == 75 + 5)
    }

    @Test(arguments: [false, true]) func aLogReadAgainKnowsItsOperations(collide: Bool) {
        let rows = Rows()
        var before = ListLogs(capacity: 1_000, key: collide ? { _ in 7 } : \.key)
        _ = Self.push((0..<20).map { Self.identity($0) }, &before, rows)
        var after = ListLogs(capacity: 1_000, key: collide ? { _ in 7 } : \.key)
        #expect(Self.push((0..<20).map { Self.identity($0) }, &after, rows).accepted == 0)
        #expect(Self.push([Self.identity(20)], &after, rows).accepted == 1)
    }

    @Test(arguments: [false, true]) func aPushTakenBackLeavesNothing(collide: Bool) {
        var logs = ListLogs(capacity: 1_000, key: collide ? { _ in 7 } : \.key)
        let rows = Rows()
        _ = Self.push((0..<10).map { Self.identity($0) }, &logs, rows)
        let saved = rows.rows
        let (accepted, journal) = Self.push((10..<20).map { Self.identity($0, item: $0) }, &logs, rows)
        #expect(accepted == 10 && journal.items.count == 10)
        // The store rolled the push back: its rows are gone, and so must its entries be.
        rows.rows = saved
        rows.last = 10
        logs.takeBack(journal)
        #expect(logs.count == 10 + 1)
        let (again, journalAgain) = Self.push((10..<20).map { Self.identity($0, item: $0) }, &logs, rows)
        #expect(again == 10 && journalAgain.items.count == 10)
    }

    /// Compaction dropped the row a hash named: the operation is new again (as with an index), and
    /// taking that push back names the old row again.
    @Test func anEntryWhoseRowIsGoneIsNew() {
        var logs = ListLogs(capacity: 1_000)
        let rows = Rows()
        _ = Self.push([Self.identity(1), Self.identity(2)], &logs, rows)
        rows.rows[1] = nil
        let (accepted, journal) = Self.push([Self.identity(1)], &logs, rows)
        #expect(accepted == 1 && rows.rows[3] == Self.identity(1))
        rows.rows[3] = nil
        rows.last = 2
        logs.takeBack(journal)
        #expect(logs.count == 2 + 1)
        #expect(Self.push([Self.identity(1), Self.identity(2)], &logs, rows).accepted == 1)
    }

    @Test func listsPushedToLeastRecentlyAreForgottenFirst() {
        var logs = ListLogs(capacity: 100)
        var lists: [Int64: Rows] = [:]
        for no in Int64(1)...3 {
            lists[no] = Rows()
            _ = Self.push((0..<30).map { Self.identity($0, item: $0) }, &logs, lists[no]!, list: no)
        }
        _ = Self.push([], &logs, lists[1]!, list: 1)  // list 1 used again: list 2 is the oldest
        #expect(logs.count == 180)
        logs.trim()  // down to nine tenths of 100: lists 2 and 3 go
        #expect(logs.count == 60)
        // List 2 is read again from its rows, and still knows them.
        #expect(Self.push((0..<30).map { Self.identity($0, item: $0) }, &logs, lists[2]!, list: 2).accepted == 0)
        // A list larger than the capacity is kept whole while it is the one pushed to.
        let large = Rows()
        _ = Self.push((0..<200).map { Self.identity($0) }, &logs, large, list: 9)
        logs.trim()
        #expect(logs.count == 201)
        #expect(Self.push((0..<200).map { Self.identity($0) }, &logs, large, list: 9).accepted == 0)
    }
}
