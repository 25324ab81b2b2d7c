/// JSON string literals written by hand, for answers too large to build through `String`
/// (``Wire/Page/jsonBytes()``, the CLI's `ls --json`). They are the bytes `JSONEncoder` writes:
/// `"` and `\` escaped, `\b \f \n \r \t`, other control characters as `\u00XX`, everything
/// else (slashes, non-ASCII) as it is.
public enum JSONText {
    /// Appends UTF-8 `bytes` as a JSON string literal (quotes included) to `out`.
    public static func appendQuoted(bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { appendQuoted(buffer: $0, to: &out) }
    }

    /// Appends `text` as a JSON string literal (quotes included) to `out`, reading its UTF-8 in place.
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendQuoted(buffer: $0, to: &out) }
    }

    static func appendQuoted(buffer: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + buffer.count + buffer.count / 8 + 2)
        out.append(UInt8(ascii: "\""))
        for byte in buffer {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string literal.
    public static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        appendQuoted(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
