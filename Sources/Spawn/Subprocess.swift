public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid on its own pid: the one
/// way the tests, and `basket-lab replay`, start processes.
///
/// Foundation's `Process` is not used: on Linux its `waitUntilExit()` can miss the exit
/// of a short-lived child when many are spawned at once and then waits forever (a CI run hung in it,
/// on `sh -c "tmux new-session -d …"`). Here every wait has a deadline, output pipes are created
/// close-on-exec (a concurrent spawn never inherits another child's pipe), and reading stops a
/// little after the child exits even when a grandchild still holds the pipe.
public final class Subprocess: @unchecked Sendable {
    // `@unchecked Sendable`: `pid` is immutable; everything that changes is behind a Mutex.

    /// Where a child's standard output or error goes.
    public enum Destination: Sendable, Equatable {
        /// Dropped (/dev/null).
        case discard
        /// Into a buffer (``stdout``, ``stderr``).
        case capture
        /// Into a file, created 0600 or truncated.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case mergeWithOutput
    }

    /// How a child ended.
    public struct Termination: Sendable, Equatable {
        /// The exit status, or the signal number when a signal ended the child.
        public var status: Int32
        /// Whether a signal ended the process (`status` is then the signal's number).
        public var signaled: Bool
        /// The most memory the child held at once (its peak resident set), in KiB.
        public var peakResidentKiB = 0
    }

    /// The process could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The child's process id.
    public let pid: pid_t
    /// A critical section with no data of its own: an NSLock, not a Mutex.
    private static let spawning = NSLock()
    /// The command line, for messages.
    public let command: String
    private let ended = Mutex<Termination?>(nil)
    private let streams = Streams()

    /// What the reading thread shares with the process (not the process itself, so dropping it kills the child).
    private final class Streams: Sendable {
        let stdout = Mutex(Data())
        let stderr = Mutex(Data())
        let stop = Mutex(false)
        let done = DispatchSemaphore(value: 0)
    }

    /// Starts `executable` with `arguments`; `environment` replaces the parent's when given.
    /// `stdin` is written to the child's standard input and closed (nil: /dev/null).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil,
        stdout: Destination = .capture, stderr: Destination = .capture
    ) throws {
        command = ([executable] + arguments).joined(separator: " ")
        // A child that exits before reading all of its stdin must not kill the parent with SIGPIPE:
        // the write fails with EPIPE instead, and the child's exit status tells the story.
        if stdin != nil { _ = Glibc.signal(SIGPIPE, SIG_IGN) }
        // One spawn at a time: a pipe is close-on-exec only after fcntl, and a concurrent spawn in
        // between would hand its child the other child's pipe (whose reader would then wait for both).
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        var parentEnds: [Int32] = []  // closed here after the spawn
        var childEnds: [Int32] = []
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw SpawnError(description: "pipe: \(errno)") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        var inputWriter: Int32 = -1
        if stdin != nil {
            let p = try makePipe()
            posix_spawn_file_actions_adddup2(&actions, p.read, 0)
            childEnds.append(p.read)
            inputWriter = p.write
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        /// Sends file descriptor `fd` to `destination`; returns the parent's end of a capturing pipe.
        func route(_ fd: Int32, to destination: Destination) throws -> Int32 {
            switch destination {
            case .capture:
                let p = try makePipe()
                childEnds.append(p.write)
                posix_spawn_file_actions_adddup2(&actions, p.write, fd)
                return p.read
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .mergeWithOutput where fd == 2:
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            case .discard, .mergeWithOutput:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            }
            return -1
        }
        let outputReader = try route(1, to: stdout)
        let errorReader = try route(2, to: stderr)
        parentEnds = [inputWriter, outputReader, errorReader].filter { $0 >= 0 }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        for fd in childEnds { close(fd) }
        guard rc == 0 else {
            for fd in parentEnds { close(fd) }
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child

        let readers = [outputReader, errorReader]
        let input = stdin ?? Data()
        let streams = self.streams
        let writer = inputWriter
        let thread = Thread {
            Self.pump(input: writer, input, outputs: readers, into: streams)
            streams.done.signal()
        }
        thread.start()
    }

    /// Writes the input and reads the outputs until every pipe is closed or reading is stopped.
    private static func pump(input writer: Int32, _ data: Data, outputs: [Int32], into streams: Streams) {
        var writer = writer
        var written = 0
        if writer >= 0 { _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK) }
        if writer >= 0 && data.isEmpty {
            close(writer)
            writer = -1
        }
        var open = outputs
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var fds: [pollfd] = []
            if writer >= 0 { fds.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
            for fd in open where fd >= 0 { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            if fds.isEmpty || streams.stop.withLock({ $0 }) { break }
            let ready = poll(&fds, nfds_t(fds.count), 100)
            if ready <= 0 { continue }
            for entry in fds where entry.revents != 0 {
                if entry.fd == writer {
                    let count = data.withUnsafeBytes { bytes in
                        Glibc.write(writer, bytes.baseAddress! + written, bytes.count - written)
                    }
                    if count > 0 { written += count }
                    if count < 0 && errno != EAGAIN || written == data.count {
                        close(writer)
                        writer = -1
                    }
                    continue
                }
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    let chunk = Data(buffer[0..<count])
                    if entry.fd == outputs[0] {
                        streams.stdout.withLock { $0.append(chunk) }
                    } else {
                        streams.stderr.withLock { $0.append(chunk) }
                    }
                } else if count == 0 || errno != EINTR && errno != EAGAIN {
                    close(entry.fd)
                    open = open.map { $0 == entry.fd ? -1 : $0 }
                }
            }
        }
        if writer >= 0 { close(writer) }
        for fd in open where fd >= 0 { close(fd) }
    }

    /// Standard output so far (with standard error when merged).
    public var stdoutData: Data { streams.stdout.withLock { $0 } }
    /// What the process wrote to standard output so far, as UTF-8.
    public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    /// What the process wrote to standard error so far, as UTF-8.
    public var stderr: String { String(decoding: streams.stderr.withLock { $0 }, as: UTF8.self) }

    /// The termination, reaping the child if it has ended; nil while it runs.
    public var termination: Termination? {
        ended.withLock { ended in
            if ended == nil {
                var status: Int32 = 0
                var usage = rusage()
                if wait4(pid, &status, WNOHANG, &usage) == pid {
                    let signal = status & 0x7F
                    ended =
                        signal == 0
                        ? Termination(status: (status >> 8) & 0xFF, signaled: false)
                        : Termination(status: signal, signaled: true)
                    ended?.peakResidentKiB = usage.ru_maxrss
                }
            }
            return ended
        }
    }

    /// Whether the process has not ended yet.
    public var isRunning: Bool { termination == nil }

    /// Sends signal `number` to the process, if it still runs.
    public func signal(_ number: Int32) {
        if isRunning { _ = Glibc.kill(pid, number) }
    }

    /// Waits up to `timeout` seconds for the child to end; nil if it is still running.
    @discardableResult
    public func wait(timeout: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(timeout)
        var pause: UInt32 = 200
        while true {
            if let termination {
                // The pipes close when the child exits, unless a grandchild inherited them.
                if streams.done.wait(timeout: .now() + 3) == .timedOut {
                    streams.stop.withLock { $0 = true }
                } else {
                    streams.done.signal()
                }
                return termination
            }
            if Date() >= deadline { return nil }
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
    }

    /// Waits for the child; after `timeout` seconds it is killed and the wait is an error.
    @discardableResult
    public func finish(timeout: Double = 120) throws -> Termination {
        if let termination = wait(timeout: timeout) { return termination }
        _ = Glibc.kill(pid, SIGKILL)
        _ = wait(timeout: 10)
        throw SpawnError(
            description: "\(command) ran longer than \(Int(timeout)) s and was killed; output: \(stdout) \(stderr)")
    }

    /// SIGKILL, then reaps the child.
    public func kill() {
        signal(SIGKILL)
        _ = wait(timeout: 10)
    }

    deinit {
        if ended.withLock({ $0 == nil }) {
            _ = Glibc.kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
        streams.stop.withLock { $0 = true }
    }
}
