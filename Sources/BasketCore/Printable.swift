/// Text as it may be shown on a terminal: control characters (C0, DEL, C1) and bidirectional
/// controls written as `\u{1b}`, never obeyed. Shared by everything the client prints, its own output and what a
/// server says, so an escape sequence from another member or a hostile server stays text.
public enum Printable {
    /// `text` with its control characters escaped; newline and tab are kept when `keepingLines`.
    public static func escaped(_ text: String, keepingLines: Bool = false) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            if keepingLines && (scalar == "\n" || scalar == "\t") { return false }
            return scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
                || ItemName.isBidiControl(scalar.value)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
