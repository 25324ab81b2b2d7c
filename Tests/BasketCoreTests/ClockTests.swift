import BasketCore
import Testing

struct ClockTests {
    @Test func timestampsPackMillisecondsAndCounter() {
        let t = HybridTimestamp(milliseconds: 1_764_400_000_123, counter: 7)
        #expect(t.milliseconds == 1_764_400_000_123)
        #expect(t.counter == 7)
        #expect(HybridTimestamp(milliseconds: 5, counter: 65535) < HybridTimestamp(milliseconds: 6, counter: 0))
    }

    @Test func nowIsStrictlyIncreasingEvenWhenTheWallClockStandsStillOrGoesBack() {
        var clock = HybridClock()
        var last = HybridTimestamp.zero
        for wall: UInt64 in [1000, 1000, 1000, 999, 500, 1001, 1001] {
            let t = clock.now(wallMilliseconds: wall)
            #expect(t > last)
            last = t
        }
        #expect(last.milliseconds == 1001 && last.counter == 1)
    }

    @Test func counterOverflowMovesToTheNextMillisecond() {
        var clock = HybridClock(last: HybridTimestamp(milliseconds: 10, counter: .max))
        let t = clock.now(wallMilliseconds: 10)
        #expect(t == HybridTimestamp(milliseconds: 11, counter: 0))
    }

    @Test func receivingMovesTheClockPastTheRemoteTimestamp() throws {
        var clock = HybridClock()
        let remote = HybridTimestamp(milliseconds: 2000 + 60_000, counter: 3)
        try clock.receive(remote, wallMilliseconds: 2000)
        #expect(clock.now(wallMilliseconds: 2000) > remote)
    }

    @Test func timestampsMoreThanFiveMinutesAheadAreRefusedWithTheOffset() {
        var clock = HybridClock()
        let wall: UInt64 = 1_000_000
        let remote = HybridTimestamp(milliseconds: wall + 5 * 60_000 + 1, counter: 0)
        #expect(throws: ClockSkewError(offsetMilliseconds: 300_001, receiverMilliseconds: wall)) {
            try clock.receive(remote, wallMilliseconds: wall)
        }
        #expect(clock.last == .zero)
        let error = ClockSkewError(offsetMilliseconds: 600_000, receiverMilliseconds: wall)
        #expect(error.description.contains("clock_skew"))
        #expect(error.description.contains("10 min"))
        // Exactly five minutes ahead is still accepted.
        #expect(throws: Never.self) {
            try clock.receive(HybridTimestamp(milliseconds: wall + 300_000, counter: 0), wallMilliseconds: wall)
        }
    }

    @Test func versionsOrderByTimestampThenReplica() {
        let t = HybridTimestamp(milliseconds: 5, counter: 0)
        let a = Version(timestamp: t, replica: ReplicaID(rawValue: 1))
        let b = Version(timestamp: t, replica: ReplicaID(rawValue: 2))
        let c = Version(timestamp: HybridTimestamp(milliseconds: 5, counter: 1), replica: ReplicaID(rawValue: 1))
        #expect(a < b && b < c && a < c)
    }
}
