/// How many terminal columns text takes: 2 for East Asian wide and fullwidth characters (CJK,
/// Hangul, fullwidth Latin, most emoji), 0 for combining marks and joiners, 1 otherwise. Item
/// names come from any device, in any script; a row cut by characters instead of columns wraps
/// on the screen and pushes the prompt off the top.
enum DisplayWidth {
    /// Ranges of East Asian Width W and F (Unicode's EastAsianWidth.txt), merged where adjacent.
    static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0,
        0x23F3...0x23F3, 0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F,
        0x2693...0x2693, 0x26A1...0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
        0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA, 0x26F2...0x26F3, 0x26F5...0x26F5,
        0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B, 0x2728...0x2728,
        0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
        0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
        0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0xA4CF, 0xA960...0xA97F,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
        0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004...0x1F004,
        0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F320,
        0x1F32D...0x1F335, 0x1F337...0x1F37C, 0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3,
        0x1F3E0...0x1F3F0, 0x1F3F4...0x1F3F4, 0x1F3F8...0x1F43E, 0x1F440...0x1F440, 0x1F442...0x1F4FC,
        0x1F4FF...0x1F53D, 0x1F54B...0x1F54E, 0x1F550...0x1F567, 0x1F57A...0x1F57A, 0x1F595...0x1F596,
        0x1F5A4...0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5, 0x1F6CC...0x1F6CC, 0x1F6D0...0x1F6D2,
        0x1F6D5...0x1F6D7, 0x1F6DC...0x1F6DF, 0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB,
        0x1F7F0...0x1F7F0, 0x1F90C...0x1F93A, 0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// The columns of one scalar.
    static func columns(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x300 { return value < 0x20 || (0x7F..<0xA0).contains(value) ? 0 : 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if value == 0x200B || (0x1160...0x11FF).contains(value) { return 0 }
        var low = 0
        var high = wide.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if value < wide[middle].lowerBound {
                high = middle - 1
            } else if value > wide[middle].upperBound {
                low = middle + 1
            } else {
                return 2
            }
        }
        return 1
    }

    /// The columns of a text.
    static func columns(of text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + columns(of: $1) }
    }

    /// `text` if it fits in `width` columns; otherwise as many whole characters as fit with
    /// "…" after them (never more than `width` columns).
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if columns(of: text) <= width { return text }
        var result = ""
        var used = 0
        for character in text {
            let cost = columns(of: String(character))
            if used + cost > width - 1 { break }
            result.append(character)
            used += cost
        }
        return result + "…"
    }

    /// `text` in lines of at most `width` columns, broken after a space where one is near and
    /// between characters where none is: every character kept, in order.
    static func wrap(_ text: String, to width: Int) -> [String] {
        guard width > 0, columns(of: text) > width else { return [text] }
        var lines: [String] = []
        var line = ""
        var used = 0
        for character in text {
            let cost = columns(of: String(character))
            if used + cost > width, !line.isEmpty {
                // Carry the last word over when the line has a space in its second half.
                if let space = line.lastIndex(of: " "), columns(of: line[..<space]) >= width / 2 {
                    let rest = String(line[line.index(after: space)...])
                    lines.append(String(line[...space]))
                    line = rest
                } else {
                    lines.append(line)
                    line = ""
                }
                used = columns(of: line)
            }
            line.append(character)
            used += cost
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// `text` if it fits in `width` columns; otherwise "…" and as many whole characters of its
    /// end as fit (what is being typed stays in view).
    static func truncateHead(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if columns(of: text) <= width { return text }
        var kept: [Character] = []
        var used = 0
        for character in text.reversed() {
            let cost = columns(of: String(character))
            if used + cost > width - 1 { break }
            kept.append(character)
            used += cost
        }
        return "…" + String(kept.reversed())
    }
}
