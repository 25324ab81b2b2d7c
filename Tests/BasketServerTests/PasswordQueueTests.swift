import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BasketServer

/// The password queue and the sign-in limiter alone: sign-ins before signups, addresses in
/// turns, a share per address, attempts counted before they are checked, IPv6 by /64.
struct PasswordQueueTests {
    /// One thread, held busy; then jobs of two classes from three addresses. They run sign-ins
    /// first, each class's addresses in turns, and an address past its share is refused.
    @Test func signInsGoFirstAndAddressesTakeTurns() {
        let pool = WorkPool(name: "test", threads: 1, queueLimit: 4, perKeyLimit: 2)
        defer { pool.close() }
        let hold = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let ran = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        #expect(
            pool.submit(key: "busy") {
                started.signal(); hold.wait()
            } == .queued)
        started.wait()
        func job(_ name: String) -> @Sendable () -> Void {
            {
                ran.withLock { $0.append(name) }; done.signal()
            }
        }
        #expect(pool.submit(key: "a", priority: .later, job("a1")) == .queued)
        #expect(pool.submit(key: "a", priority: .later, job("a2")) == .queued)
        #expect(pool.submit(key: "a", priority: .later, job("a3")) == .keyFull)
        #expect(pool.submit(key: "b", priority: .later, job("b1")) == .queued)
        #expect(pool.submit(key: "b", priority: .later, job("b2")) == .queued)
        // The signups' class is full; a sign-in still has room.
        #expect(pool.submit(key: "c", priority: .later, job("c0")) == .full)
        #expect(pool.submit(key: "c", priority: .first, job("c1")) == .queued)
        #expect(pool.waiting == 5)
        hold.signal()
        for _ in 0..<5 { done.wait() }
        #expect(ran.withLock { $0 } == ["c1", "a1", "b1", "a2", "b2"])
        // Finished jobs leave the address's share.
        #expect(pool.submit(key: "a", priority: .later, job("a4")) == .queued)
        done.wait()
    }

    /// 17 wrong passwords sent at once for one name: 3 are let through (the free failures), the
    /// rest refused before any is checked; after they fail, the delay holds.
    @Test func attemptsUnderWayCountBeforeTheyAreChecked() {
        let limiter = LoginLimiter(perAddress: 20)
        let admitted = (0..<17).filter { _ in limiter.attempt("alice", "10.0.0.1", now: 1_000) == nil }.count
        #expect(admitted == 3)
        #expect(limiter.attempt("alice", "10.0.0.1", now: 1_000) == .name(seconds: 1))
        // Another address is not held up by them, nor another name from this one.
        #expect(limiter.attempt("alice", "10.0.0.2", now: 1_000) == nil)
        #expect(limiter.attempt("bob", "10.0.0.1", now: 1_000) == nil)
        limiter.abandoned("bob", "10.0.0.1")
        for _ in 0..<3 { limiter.failed("alice", "10.0.0.1", now: 1_000) }
        #expect(limiter.attempt("alice", "10.0.0.1", now: 1_500) == .name(seconds: 1))
        #expect(limiter.attempt("alice", "10.0.0.1", now: 2_000) == nil)
        limiter.succeeded("alice", "10.0.0.1")
        #expect(limiter.attempt("alice", "10.0.0.1", now: 2_000) == nil)
        // Attempts under way count against the address too.
        let busy = LoginLimiter(perAddress: 5)
        let names = (0..<8).filter { busy.attempt("name\($0)", "10.0.0.3", now: 0) == nil }
        #expect(names.count == 5)
        #expect(busy.attempt("other", "10.0.0.3", now: 0) == .address(seconds: 1))
    }

    @Test func ipv6AddressesAreGroupedBySlash64() {
        #expect(AddressGroup.of("2001:db8:1:2:aaaa::1") == AddressGroup.of("2001:db8:1:2:ffff:1:2:3"))
        #expect(AddressGroup.of("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(AddressGroup.of("2001:db8:1:3::1") != AddressGroup.of("2001:db8:1:2::1"))
        #expect(AddressGroup.of("::ffff:192.0.2.7") == "192.0.2.7")
        #expect(AddressGroup.of("192.0.2.7") == "192.0.2.7")
        #expect(AddressGroup.of("::1") == "0:0:0:0::/64")
        #expect(AddressGroup.of("not an address") == "not an address")
    }
}
