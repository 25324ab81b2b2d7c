import Foundation

/// Where a command writes: stdout and stderr, kept apart so tests and scripts can read each.
final class Console {
    private var out = Data()
    private let stdout: FileHandle
    private let stderr: FileHandle

    /// What a capturing console was given, instead of writing it (the scenario runner reads it).
    private(set) var capturedOutput: String?
    private(set) var capturedErrors: String?

    init(stdout: FileHandle = .standardOutput, stderr: FileHandle = .standardError) {
        self.stdout = stdout
        self.stderr = stderr
    }

    /// A console that keeps what commands print.
    static func capturing() -> Console {
        let console = Console()
        console.capturedOutput = ""
        console.capturedErrors = ""
        return console
    }

    /// `text` safe for a terminal: control characters other than newline and tab (an escape
    /// sequence from another member's note, say) are shown as `\u{1b}`, not obeyed.
    static func printable(_ text: String, keepingLines: Bool = true) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0, keepingLines) }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar, keepingLines) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar, _ keepingLines: Bool) -> Bool {
        if keepingLines && (scalar == "\n" || scalar == "\t") { return false }
        return scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
    }

    func print(_ line: String = "") {
        out.append(contentsOf: Array((Self.printable(line) + "\n").utf8))
        if out.count > 64 * 1024 { flush() }
    }

    func error(_ line: String) {
        let line = Self.printable(line)
        flush()
        if capturedErrors != nil {
            capturedErrors! += line + "\n"
            return
        }
        stderr.write(Data((line + "\n").utf8))
    }

    func flush() {
        if capturedOutput != nil {
            capturedOutput! += String(decoding: out, as: UTF8.self)
            out.removeAll(keepingCapacity: true)
            return
        }
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
