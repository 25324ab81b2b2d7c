import Foundation

/// Where a command writes: stdout and stderr, kept apart so tests and scripts can read each.
final class Console {
    private var out = Data()
    private let stdout: FileHandle
    private let stderr: FileHandle

    init(stdout: FileHandle = .standardOutput, stderr: FileHandle = .standardError) {
        self.stdout = stdout
        self.stderr = stderr
    }

    func print(_ line: String = "") {
        out.append(contentsOf: Array((line + "\n").utf8))
        if out.count > 64 * 1024 { flush() }
    }

    func error(_ line: String) {
        flush()
        stderr.write(Data((line + "\n").utf8))
    }

    func flush() {
        if !out.isEmpty {
            stdout.write(out)
            out.removeAll(keepingCapacity: true)
        }
    }

    /// Prints a JSON value with sorted keys (stable output for scripts and tests).
    func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        out.append(data)
        out.append(UInt8(ascii: "\n"))
    }
}
