import BasketCore
import Foundation

/// Where a command writes: stdout and stderr, kept apart so tests and scripts can read each.
package final class Console {
    private var out = Data()
    private let stdout: FileHandle
    private let stderr: FileHandle

    /// What a capturing console was given, instead of writing it (`basket-lab replay` reads it).
    package private(set) var capturedOutput: String?
    package private(set) var capturedErrors: String?

    init(stdout: FileHandle = .standardOutput, stderr: FileHandle = .standardError) {
        self.stdout = stdout
        self.stderr = stderr
    }

    /// A console that keeps what commands print.
    package static func capturing() -> Console {
        let console = Console()
        console.capturedOutput = ""
        console.capturedErrors = ""
        return console
    }

    /// Whether this console keeps what it is given (`basket-lab replay`'s): no one reads a prompt.
    var isCapturing: Bool { capturedOutput != nil }

    /// Whether standard output is a terminal a person reads (not a pipe, a file or a capture):
    /// long values are wrapped to fit on one, and given whole otherwise.
    var isTerminal: Bool { !isCapturing && isatty(1) == 1 }

    /// Whether reports are left out (`-q`): ``print(_:)`` writes nothing; errors and JSON still go.
    var isQuiet = false

    /// Set for a `--json` run: standard output then carries JSON only. What a command says in
    /// words is kept (``messages``) and, at the end (``finishJSON()``), becomes the answer
    /// `{"messages": [...]}` of a command with no JSON shape of its own, or goes to standard
    /// error beside one that printed its JSON.
    var isJSON = false
    /// What a `--json` run said in words.
    private(set) var messages: [String] = []
    /// How many JSON values a `--json` run printed (more than one only for a stream).
    private(set) var jsonValues = 0

    func print(_ line: String = "") {
        if isQuiet { return }
        if isJSON {
            messages.append(line)
            return
        }
        out.append(contentsOf: Array((Printable.escaped(line, keepingLines: true) + "\n").utf8))
        if out.count > 64 * 1024 { flush() }
    }

    func error(_ line: String) {
        let line = Printable.escaped(line, keepingLines: true)
        flush()
        if capturedErrors != nil {
            capturedErrors! += line + "\n"
            return
        }
        stderr.write(Data((line + "\n").utf8))
    }

    package func flush() {
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

    /// Ends a `--json` run that succeeded: a command that printed no JSON answers with what it
    /// said, `{"messages": [...]}`; one that did sends its words to standard error.
    func finishJSON() throws {
        guard isJSON else { return }
        let said = messages
        messages = []
        if jsonValues == 0 {
            try json(Messages(messages: said))
        } else {
            for line in said { error(line) }
        }
        flush()
    }

    /// A `--json` run that failed: its words go to standard error with the error.
    func abandonJSON() {
        let said = messages
        messages = []
        for line in said { error(line) }
    }

    /// The answer of a command with no JSON shape of its own (docs/cli-json.md).
    struct Messages: Encodable { var messages: [String] }

    /// Writes bytes as they are (JSON made by hand, ``ListingJSON``).
    func raw(_ bytes: [UInt8]) {
        jsonValues += 1
        out.append(contentsOf: bytes)
        if out.count > 64 * 1024 { flush() }
    }

    /// Prints a JSON value with sorted keys (stable output for scripts and tests).
    func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        jsonValues += 1
        out.append(data)
        out.append(UInt8(ascii: "\n"))
    }
}
