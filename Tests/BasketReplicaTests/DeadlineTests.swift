import Foundation
import Synchronization
import Testing

@testable import BasketReplica

/// `result(within:of:)`, the client's one wait with a deadline (a command's last send, `ls`'s
/// pull first), and `runBlocking(within:)` on it.
struct DeadlineTests {
    struct Refused: Error, Equatable {}

    /// Work that ends only when told: a deadline must not wait for it.
    final class Gate: Sendable {
        let opened = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let isOpen = Mutex(false)
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = isOpen.withLock { open -> Bool in
                    if open { return true }
                    opened.withLock { $0 = continuation }
                    return false
                }
                if now { continuation.resume() }
            }
        }
        func open() {
            isOpen.withLock { $0 = true }
            opened.withLock { $0 }?.resume()
        }
    }

    @Test func theWorkFinishingFirstGivesItsResultWithoutWaitingForTheDeadline() async throws {
        let started = ContinuousClock.now
        let value = await result(within: 600) { 42 }
        #expect(try value?.get() == 42)
        #expect(ContinuousClock.now - started < .seconds(300))  // not the 600 s deadline
        let failed = await result(within: 600) { () async throws -> Int in throw Refused() }
        #expect(throws: Refused.self) { try failed?.get() }
    }

    @Test func theDeadlineComingFirstGivesNilAndLeavesTheWorkRunning() async throws {
        let gate = Gate()
        let done = Gate()
        let value = await result(within: 0.05) {
            await gate.wait()
            done.open()
            return 1
        }
        #expect(value == nil)
        #expect(!done.isOpen.withLock { $0 })
        gate.open()
        // The work goes on after the deadline: it ends once let through.
        await done.wait()
    }

    /// `runBlocking` blocks its thread: called from a thread of its own, as the CLI's main thread
    /// calls it, never from a task on the pool the work needs.
    @Test func runBlockingWithinWaitsTheSameWay() async throws {
        let gate = Gate()
        let answers = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let finished = try? runBlocking(within: 600, { "done" })?.get()
                let timedOut = runBlocking(within: 0.05, { await gate.wait() }) == nil
                continuation.resume(returning: (finished, timedOut))
            }
        }
        gate.open()
        #expect(answers.0 == "done" && answers.1)
    }
}
