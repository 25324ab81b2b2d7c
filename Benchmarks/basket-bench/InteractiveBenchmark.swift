import Foundation

/// `basket` alone on a terminal with a list of 5,000 items: from the process's start to its first
/// screen ("Search or add items"), through a real pseudo-terminal, as a person opening it waits.
/// Baselines from the same run and the same replica: `basket --version` (a process's start and
/// end) and `basket ls` (the same list read and printed, without a screen).
struct InteractiveBenchmark {
    var items = 5_000
    var runs = 15

    init(arguments: [String]) throws {
        try parseNumericOptions(arguments) { name, value in
            switch name {
            case "--items": items = value
            case "--runs": runs = value
            default: return false
            }
            return true
        }
    }

    /// The release `basket` next to this program.
    var basket: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("basket").path
    }

    /// Grocery names: the quality corpus's everyday names, then its products (as the web
    /// benchmark takes them), numbered past the corpus.
    func names() throws -> [String] {
        var seen: Set<String> = []
        var out: [String] = []
        for (file, column) in [("Benchmarks/quality/everyday.tsv", -1), ("Benchmarks/quality/products.txt", 0)] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                let name = String(column < 0 ? fields[fields.count - 1] : fields[0]).trimmingCharacters(
                    in: .whitespaces)
                guard !name.isEmpty, !name.contains(","), name.count < 60, seen.insert(name.lowercased()).inserted
                else { continue }
                out.append(name)
                if out.count == items { return out }
            }
        }
        while out.count < items { out.append("Item \(out.count)") }
        return out
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "basket-bench-interactive-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let listFile = folder.appendingPathComponent("names.txt").path
        try Data((try names().joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: listFile))
        let db = folder.appendingPathComponent("replica").path
        _ = try Terminal.run(basket, ["--db", db, "add", "--from", listFile], until: nil)

        var version: [Double] = []
        var listing: [Double] = []
        var screen: [Double] = []
        // Interleaved, so that each sees the same minutes of this shared machine.
        for _ in 0..<runs {
            version.append(try Terminal.run(basket, ["--version"], until: nil))
            listing.append(try Terminal.run(basket, ["--db", db, "ls"], until: nil))
            screen.append(try Terminal.run(basket, ["--db", db], until: "Search or add items"))
        }
        let base = median(listing)
        var table = Table(
            title: "Interactive start: \(items) items, through a pseudo-terminal (median of \(runs))",
            header: ["measure", "median", "p90", "vs basket ls"])
        for (name, samples) in [
            ("basket --version (a process's start)", version), ("basket ls (baseline: the list printed)", listing),
            ("basket, to its first screen (target ≤ 100 ms)", screen),
        ] {
            let sorted = samples.sorted()
            table.add(
                name, formatMillis(median(samples)), formatMillis(sorted[min(sorted.count - 1, sorted.count * 9 / 10)]),
                String(format: "%.2fx", median(samples) / base))
        }
        print(table.render())
    }

    /// A program run on a pseudo-terminal of 80×24.
    enum Terminal {
        /// Starts `program` with a pseudo-terminal as its stdin, stdout and stderr; returns the
        /// seconds until `until` appears in what it writes (then Escape is typed and it ends), or
        /// until it exits when `until` is nil. Fails after 30 s.
        static func run(_ program: String, _ arguments: [String], until: String?) throws -> Double {
            // posix_openpt, grantpt, unlockpt and ptsname are not in Swift's Glibc module: /dev/ptmx and their ioctls
            // (Linux's TIOCSPTLCK and TIOCGPTN, from <asm-generic/ioctls.h>).
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlocked: Int32 = 0
            var number: UInt32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431, &unlocked) == 0, ioctl(master, 0x8004_5430, &number) == 0
            else { throw BenchError("no pseudo-terminal") }
            defer { close(master) }
            let name = "/dev/pts/\(number)"
            var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(master, UInt(TIOCSWINSZ), &size)
            let slave = open(name, O_RDWR | O_NOCTTY)
            guard slave >= 0 else { throw BenchError("cannot open \(name)") }
            // posix_spawn, not Foundation's Process: the terminal's other end must be closed here
            // for the end of the program to be seen at once.
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for fd: Int32 in 0...2 { posix_spawn_file_actions_adddup2(&actions, slave, fd) }
            posix_spawn_file_actions_addclose(&actions, slave)
            posix_spawn_file_actions_addclose(&actions, master)
            let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
            let environment = ["NO_COLOR=1", "TERM=xterm", "HOME=\(NSTemporaryDirectory())"]
            let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let start = DispatchTime.now().uptimeNanoseconds
            let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
            close(slave)
            guard spawned == 0 else { throw BenchError("cannot start \(program): \(spawned)") }
            var seen: [UInt8] = []
            var elapsed: Double?
            var exited = false
            let deadline = start + 30_000_000_000
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while DispatchTime.now().uptimeNanoseconds < deadline {
                var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 5) > 0 {
                    let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                    if n <= 0 { break }  // the program ended: its terminal closed
                    seen.append(contentsOf: buffer[0..<n])
                    if seen.count > 1 << 22 { seen.removeFirst(seen.count - (1 << 20)) }
                    if let until, elapsed == nil, String(decoding: seen, as: UTF8.self).contains(until) {
                        elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                        _ = [UInt8(0x1B)].withUnsafeBytes { write(master, $0.baseAddress, 1) }
                    }
                    continue
                }
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    exited = true
                    if elapsed == nil && until == nil {
                        elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    }
                    break
                }
            }
            if !exited {
                var status: Int32 = 0
                if elapsed == nil && until == nil {
                    elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                }
                if waitpid(pid, &status, WNOHANG) != pid {
                    kill(pid, SIGKILL)
                    waitpid(pid, &status, 0)
                }
            }
            guard let elapsed else { throw BenchError("\(program) never showed '\(until ?? "")'") }
            return elapsed
        }
    }
}
