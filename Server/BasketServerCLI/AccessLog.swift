import Foundation
import HTTPServer
import Synchronization

/// The access log: one line per request. It never holds a token (they travel in headers) or an
/// invite code (the code segment of a path is replaced), and it escapes control characters and
/// cuts long paths, so a request cannot write escape sequences or fake lines into it.
enum AccessLog {
    static func line(_ request: HTTPListener.CompletedRequest) -> String {
        let milliseconds = (request.seconds * 10_000).rounded() / 10
        return "\(timestamp()) \"\(escaped(request.method)) \(escaped(redacted(request.path)))\" \(request.status)"
            + " \(request.responseBytes) \(milliseconds)ms\(request.completed ? "" : " (client gone)")\n"
    }

    /// Now in UTC as `2026-12-02T15:46:57Z` (what `Date().formatted(.iso8601)` wrote, at a
    /// fraction of its cost: it is paid on every request).
    static func timestamp(_ seconds: time_t = time(nil)) -> String {
        var now = seconds
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Lines waiting for standard output: written whole, in order, once `flushBytes` are waiting
    /// or within `flushMilliseconds`, whichever comes first.
    final class Buffer: @unchecked Sendable {
        // `@unchecked Sendable`: the timer is only set up in init and cancelled in deinit; the
        // lines live in Mutexes.
        private let pending = Mutex<[UInt8]>([])
        /// One writer at a time, so batches keep their order.
        private let writing = Mutex(())
        let flushBytes: Int
        private let timer: any DispatchSourceTimer

        init(flushBytes: Int, flushMilliseconds: Int) {
            self.flushBytes = flushBytes
            timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "basket-server.access-log"))
            timer.schedule(
                deadline: .now() + .milliseconds(flushMilliseconds), repeating: .milliseconds(flushMilliseconds))
            timer.setEventHandler { [weak self] in self?.flush() }
            timer.resume()
        }

        deinit { timer.cancel() }

        func append(_ line: String) {
            let full = pending.withLock { bytes in
                bytes.append(contentsOf: line.utf8)
                return bytes.count >= flushBytes
            }
            if full { flush() }
        }

        /// Writes what is waiting now.
        func flush() {
            writing.withLock { _ in
                let bytes = pending.withLock { bytes in
                    defer { bytes = [] }
                    return bytes
                }
                guard !bytes.isEmpty else { return }
                bytes.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                        if n < 0 && errno == EINTR { continue }
                        guard n > 0 else { return }  // a closed or full log loses lines, never a request
                        offset += n
                    }
                }
            }
        }
    }

    /// The path with secrets replaced: invite codes (`/v1/invites/CODE`).
    static func redacted(_ path: String) -> String {
        guard path.utf8.starts(with: "/v1/invites/".utf8) else { return path }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[1] == "v1", parts[2] == "invites" else { return path }
        return (["", "v1", "invites", "…"] + parts.dropFirst(4).map(String.init)).joined(separator: "/")
    }

    /// Control characters, quotes and backslashes as `\xNN` (two hex digits: a newline is
    /// `\x0a`), and the invisible characters that reorder or hide text (bidirectional controls
    /// such as U+202E, zero-width and other format characters, line and paragraph separators) as
    /// `\u{XXXX}`, so a line reads as what it holds; at most 512 bytes of text.
    static func escaped(_ text: String) -> String {
        // Most paths are short printable ASCII: nothing to change.
        if text.utf8.count <= 512, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x5C && $0 != 0x22 }) {
            return text
        }
        var out = ""
        var bytes = 0
        for scalar in text.unicodeScalars {
            if bytes >= 512 {
                out += "…"
                break
            }
            let category = scalar.properties.generalCategory
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\\" || scalar == "\"" {
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else if category == .control || category == .format || category == .lineSeparator
                || category == .paragraphSeparator
            {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            bytes += scalar.utf8.count
        }
        return out
    }
}
