import Foundation

/// The terminal in raw mode, restored on every way out (normal exit, Ctrl-C, SIGTERM, SIGHUP).
enum Terminal {
    // Written once before raw mode is entered, read by the signal handler: a plain global is the
    // only thing a C signal handler may touch.
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var isRaw = false

    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    static func enterRawMode() {
        guard !isRaw else { return }
        tcgetattr(0, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutablePointer(to: &raw.c_cc) { pointer in
            pointer.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 1  // reads return after 100 ms: the loop can notice remote changes
            }
        }
        tcsetattr(0, TCSAFLUSH, &raw)
        isRaw = true
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { signal(number, restoreAndExit) }
        write("\u{1B}[?1049h\u{1B}[?25l")  // alternate screen, hide the cursor
    }

    static func restore() {
        guard isRaw else { return }
        tcsetattr(0, TCSAFLUSH, &saved)
        isRaw = false
        write("\u{1B}[?25h\u{1B}[?1049l")
    }

    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            offset += n
        }
    }

    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    /// Reads what is available (at most after 100 ms); empty when nothing was typed.
    static func readBytes() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        return n > 0 ? Array(buffer[0..<n]) : []
    }
}

/// Restores the terminal and exits: the handler for signals while in raw mode.
private func restoreAndExit(_ signal: Int32) {
    if Terminal.isRaw {
        tcsetattr(0, TCSAFLUSH, &Terminal.saved)
        let reset = "\u{1B}[?25h\u{1B}[?1049l"
        _ = reset.withCString { Glibc.write(1, $0, strlen($0)) }
    }
    _exit(128 + signal)
}

/// A key, decoded from the bytes a terminal sends.
enum Key: Equatable {
    case character(String)
    case up, down, enter, tab, backspace, clear, escape, interrupt, undo, scope

    /// Decodes every key in `bytes`.
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        var text: [UInt8] = []
        func flushText() {
            if !text.isEmpty, let string = String(validating: text, as: UTF8.self) {
                for character in string { keys.append(.character(String(character))) }
            }
            text.removeAll()
        }
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x1B:
                flushText()
                if i + 2 < bytes.count && (bytes[i + 1] == 0x5B || bytes[i + 1] == 0x4F) {
                    switch bytes[i + 2] {
                    case 0x41: keys.append(.up)
                    case 0x42: keys.append(.down)
                    default: break
                    }
                    i += 3
                    // Skip the rest of longer sequences (ESC [ 1 ; 5 A and the like).
                    while i < bytes.count && bytes[i - 1] >= 0x30 && bytes[i - 1] <= 0x3F { i += 1 }
                    continue
                }
                keys.append(.escape)
            case 0x0D, 0x0A: flushText(); keys.append(.enter)
            case 0x09: flushText(); keys.append(.tab)
            case 0x7F, 0x08: flushText(); keys.append(.backspace)
            case 0x15: flushText(); keys.append(.clear)
            case 0x1A: flushText(); keys.append(.undo)  // Ctrl-Z (raw mode: no suspend)
            case 0x13: flushText(); keys.append(.scope)  // Ctrl-S (raw mode: no flow control)
            case 0x03: flushText(); keys.append(.interrupt)
            case 0x04: flushText(); keys.append(.escape)  // Ctrl-D: the end, as in a shell
            case 0x10: flushText(); keys.append(.up)  // Ctrl-P
            case 0x0E: flushText(); keys.append(.down)  // Ctrl-N
            case 0..<0x20: flushText()
            default: text.append(byte)
            }
            i += 1
        }
        flushText()
        return keys
    }
}
