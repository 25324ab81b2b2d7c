internal import CMicroHTTPD
import Foundation
import Synchronization

/// One libmicrohttpd daemon and the thread that runs it. The thread waits on the daemon's epoll
/// descriptor itself, with the daemon's own timeout, and then lets the daemon work without
/// waiting (`MHD_run`): libmicrohttpd never blocks inside, so nothing it has already been told
/// about waits for a later event (see ``HTTPListener/start()`` for what did).
///
/// A resumed long-poll wakes the thread through `wake` (``resumed()``), as do ``quiesce()`` and
/// ``finish()``. The daemon's own inter-thread channel is not enough: `MHD_run` takes in resumed
/// connections first and then empties that channel, so a resume that comes in between would
/// wait for the next event.
final class EventLoop: @unchecked Sendable {
    // `@unchecked Sendable`: `daemon` is used by the loop's thread only, except in finish(),
    // which runs after that thread has left its loop; `phase` is atomic and `wake` is an eventfd.
    let daemon: OpaquePointer
    private let epoll: Int32
    private let wake: Int32
    /// An epoll of the suspended connections' sockets, for their clients hanging up
    /// (``watchHangUp(of:)``).
    private let hangups: Int32
    /// The suspended requests whose sockets `hangups` watches, by socket. Touched on the loop's
    /// thread only (suspending, resuming and completing a request all happen in `MHD_run`).
    private var watched: [Int32: RequestContext] = [:]
    private let name: String
    /// 0 serving, 1 quiesce (accept no more), 2 stop.
    private let phase = Atomic(0)
    private let quiesced = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Whether a resume has written `wake` that the loop has not yet read.
    private let resumeSignalled = Atomic(false)
    private var started = false

    /// The longest the thread waits without an event (milliseconds): what a lost wake-up would cost.
    private let idleMilliseconds: Int32

    /// Nil when the daemon has no epoll descriptor or no eventfd can be made.
    init?(daemon: OpaquePointer, name: String, idleMilliseconds: Int = 1_000) {
        let epoll = basket_mhd_epoll_fd(daemon)
        let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        let hangups = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0, wake >= 0, hangups >= 0 else {
            if wake >= 0 { close(wake) }
            if hangups >= 0 { close(hangups) }
            return nil
        }
        self.daemon = daemon
        self.epoll = epoll
        self.wake = wake
        self.hangups = hangups
        self.name = name
        self.idleMilliseconds = Int32(clamping: idleMilliseconds)
    }

    func start() {
        started = true
        let thread = Thread { [self] in run() }
        thread.name = name
        // Handlers run on this thread: give it a process's usual stack, not a secondary thread's.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func run() {
        var didQuiesce = false
        var fds = [
            pollfd(fd: epoll, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            pollfd(fd: hangups, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let now = phase.load(ordering: .acquiring)
            if now >= 1 && !didQuiesce {
                // The listening socket is shared and stays open: the listener closes it.
                _ = MHD_quiesce_daemon(daemon)
                didQuiesce = true
                quiesced.signal()
            }
            if now >= 2 { break }
            var timeout: UInt64 = 0
            // At most a second by default: a lost wake-up costs a second, never the connection timeout.
            let milliseconds =
                MHD_get_timeout(daemon, &timeout) == MHD_Result.YES
                ? Int32(clamping: min(timeout, UInt64(idleMilliseconds))) : idleMilliseconds
            fds[0].revents = 0
            fds[1].revents = 0
            fds[2].revents = 0
            _ = poll(&fds, 3, milliseconds)
            if fds[2].revents != 0 { answerHangUps() }
            if fds[1].revents != 0 {
                // Read, then cleared, then the run: a resume after the clearing writes again, and
                // one before it is taken in by this run (it resumed its connection before it
                // found the flag set). Cleared before the read, a resume in between had its
                // write read here while the flag it set stayed: later resumes wrote nothing,
                // and waited for the loop's one-second timeout.
                var value: UInt64 = 0
                _ = read(wake, &value, 8)
                resumeSignalled.store(false, ordering: .sequentiallyConsistent)
            }
            MHD_run(daemon)
        }
        finished.signal()
    }

    /// Watches the socket of `context`'s connection, just suspended, for its client hanging up.
    /// A suspended connection is not in libmicrohttpd's epoll: without this, a long-poll whose
    /// client went away held its connection, its descriptor and its place among the watchers
    /// until its wait ran out (30 s), and devices reconnecting at 1 % a second piled up
    /// thousands of them. Call on the loop's thread.
    func watchHangUp(of context: RequestContext) {
        let fd = basket_mhd_connection_fd(context.connection)
        guard fd >= 0 else { return }
        var event = epoll_event()
        event.events = EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
        event.data.fd = fd
        guard epoll_ctl(hangups, EPOLL_CTL_ADD, fd, &event) == 0 else { return }
        context.watchedSocket = fd
        watched[fd] = context
    }

    /// Stops watching `context`'s socket (it was resumed or completed). On the loop's thread.
    func unwatchHangUp(of context: RequestContext) {
        guard context.watchedSocket >= 0 else { return }
        let fd = context.watchedSocket
        context.watchedSocket = -1
        if watched[fd] === context { watched[fd] = nil }
        var event = epoll_event()
        _ = epoll_ctl(hangups, EPOLL_CTL_DEL, fd, &event)
    }

    /// Tells each suspended request whose client hung up: its responder's hang-up handler runs
    /// (the long-poll leaves the watchers) and an answer resumes the connection, which
    /// libmicrohttpd then finds closed and completes.
    private func answerHangUps() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        let count = epoll_wait(hangups, &events, Int32(events.count), 0)
        guard count > 0 else { return }
        for event in events.prefix(Int(count)) {
            guard let context = watched[event.data.fd] else { continue }
            unwatchHangUp(of: context)
            // For the access log, whether or not the answer is queued before the close is seen.
            context.status = 499
            context.responder.hangUp()
        }
    }

    /// Call after `MHD_resume_connection` on one of this loop's connections. Writes the eventfd
    /// only when no resume has since the loop last looked: waking 10,000 watchers of a list
    /// would otherwise cost 10,000 writes, where a handful of wake-ups serve them all.
    func resumed() {
        if !resumeSignalled.exchange(true, ordering: .sequentiallyConsistent) { signal() }
    }

    private func signal() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// Stops accepting connections; returns once the loop has (or after a second).
    func quiesce() {
        guard started else { return }
        phase.store(1, ordering: .releasing)
        signal()
        _ = quiesced.wait(timeout: .now() + 1)
    }

    /// Stops the loop's thread, then the daemon (which closes its connections).
    func finish() {
        if started {
            phase.store(2, ordering: .releasing)
            signal()
            finished.wait()
        } else {
            _ = MHD_quiesce_daemon(daemon)
        }
        MHD_stop_daemon(daemon)
        close(wake)
        close(hangups)
        watched = [:]
    }
}

/// Open connections, over every daemon: libmicrohttpd counts (and limits) per daemon only.
/// A connection is admitted when both counts are under their limits (the accept policy) and
/// counted once the daemon has it (the connection notice), so nothing is counted for a connection
/// the daemon then drops; daemons accepting at the same instant may pass a limit by one each.
final class ConnectionCounts: Sendable {
    struct Address: Hashable {
        var high: UInt64
        var low: UInt64

        /// The IPv6 /56 network of an IPv6 /64 key (the whole of one home with most providers),
        /// nil for an IPv4 address: a home holds 256 /64s, and at 256 connections each 79 of them
        /// filled the server's whole connection limit.
        var network: Address? {
            guard low == 0, high != 0 else { return nil }  // IPv4 and IPv4-mapped keys keep `low`
            return Address(high: high & ~0xFF, low: 1)
        }
    }
    private struct State {
        var open = 0
        var byAddress: [Address: Int] = [:]
        var byNetwork: [Address: Int] = [:]
    }
    private let state = Mutex(State())
    let total: Int
    /// 0 for no limit per address.
    let perAddress: Int
    /// The most connections of one IPv6 /56 network: four addresses' worth.
    var perNetwork: Int { perAddress * Self.addressesPerNetwork }
    /// How many /64s' worth of connections one /56 may hold.
    static let addressesPerNetwork = 4

    init(total: Int, perAddress: Int) {
        self.total = total
        self.perAddress = max(0, perAddress)
    }

    var open: Int { state.withLock { $0.open } }

    func admits(_ address: Address?) -> Bool {
        state.withLock { state in
            guard state.open < total else { return false }
            guard perAddress > 0, let address else { return true }
            if let network = address.network, state.byNetwork[network, default: 0] >= perNetwork { return false }
            return state.byAddress[address, default: 0] < perAddress
        }
    }

    func opened(_ address: Address?) {
        state.withLock { state in
            state.open += 1
            guard perAddress > 0, let address else { return }
            state.byAddress[address, default: 0] += 1
            if let network = address.network { state.byNetwork[network, default: 0] += 1 }
        }
    }

    func closed(_ address: Address?) {
        state.withLock { state in
            state.open -= 1
            guard perAddress > 0, let address else { return }
            if let count = state.byAddress[address] { state.byAddress[address] = count > 1 ? count - 1 : nil }
            if let network = address.network, let count = state.byNetwork[network] {
                state.byNetwork[network] = count > 1 ? count - 1 : nil
            }
        }
    }
}
