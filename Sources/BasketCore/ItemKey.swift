/// The identity of an item's name: two names with the same key are the same item.
///
/// Version 1 is defined by data pinned to Unicode 15.0.0, so every client on every platform
/// computes the same key (docs/encoding.md has the rules; `Scripts/make-itemkey.py` generates
/// the table from the Unicode Character Database, for this code and for the web client's). In
/// short, each code point is replaced by what the table says, in this order of rules:
/// 1. every white space (NBSP and the ideographic space included) and every dash
///    (`-`, `‐`, `–`, `—`, `－`, …) becomes a space, so "Coca-Cola" and "coca cola" are one item;
///    typographic apostrophes (`’ ‘ ʼ ´ ′`) become `'`; controls and format characters go;
/// 2. case, diacritics and width are folded: "Crème" → "creme", "Ｍｉｌｋ" → "milk". Letters of
///    the Latin, Greek and Cyrillic scripts lose their marks; other scripts keep theirs
///    (が, 가 and क़ stay as they are);
/// 3. the letters that folding leaves are mapped: ß→ss, ı→i, ø→o, ł→l, æ→ae, œ→oe, đ→d, ð→d, þ→th;
///
/// then runs of spaces collapse to one and leading and trailing spaces are removed.
///
/// Other punctuation is kept ("7up" and "7-up" differ from "7 up" only by the dash rule:
/// "7-up" = "7 up", "7up" is another key). Search (BasketSearch) also matches across separators.
public enum ItemKey {
    /// Changing the rules changes item ids, so they are versioned; ids hash the version in.
    public static let version = 1

    /// The key of `name` (see the type's documentation for the rules).
    public static func normalize(_ name: String) -> String {
        // Fast path: printable ASCII without dashes only needs lowercasing and space collapsing.
        var asciiOnly = true
        for byte in name.utf8 where byte >= 0x7F || byte < 0x20 {
            asciiOnly = false
            break
        }
        if asciiOnly { return collapse(asciiLowered(name)) }

        var out = KeyBuilder(capacity: name.utf8.count)
        let table = Table.shared
        for scalar in name.unicodeScalars {
            let value = scalar.value
            if value >= 0x20 && value < 0x7F {
                out.append(value >= 0x41 && value <= 0x5A ? value + 32 : value == 0x2D ? 0x20 : value)
            } else if let range = table.replacement(of: value) {
                for index in range { out.append(tableValues[index]) }
            } else {
                out.append(value)
            }
        }
        return out.string
    }

    /// The generated table in a form that is quick to search: the code points, and where each
    /// one's replacement starts in ``tableValues``.
    private struct Table: Sendable {
        static let shared = Table()
        let starts: [Int]

        init() {
            var starts: [Int] = []
            starts.reserveCapacity(tableLengths.count + 1)
            var offset = 0
            for length in tableLengths {
                starts.append(offset)
                offset += Int(length)
            }
            starts.append(offset)
            self.starts = starts
        }

        /// The indices in ``tableValues`` of what `value` becomes; nil when it stays itself.
        func replacement(of value: UInt32) -> Range<Int>? {
            var low = 0
            var high = tableScalars.count
            while low < high {
                let middle = (low + high) / 2
                let candidate = tableScalars[middle]
                if candidate == value { return starts[middle]..<starts[middle + 1] }
                if candidate < value { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// UTF-8 of a key, with runs of spaces collapsed and the ends trimmed as it is built.
    private struct KeyBuilder {
        var bytes: [UInt8] = []
        var pendingSpace = false

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func append(_ value: UInt32) {
            if value == 0x20 {
                pendingSpace = !bytes.isEmpty
                return
            }
            if pendingSpace { bytes.append(0x20) }
            pendingSpace = false
            guard let scalar = Unicode.Scalar(value) else { return }
            bytes.append(contentsOf: scalar.utf8)
        }

        var string: String { String(decoding: bytes, as: UTF8.self) }
    }

    private static func asciiLowered(_ s: String) -> String {
        var bytes = Array(s.utf8)
        for i in bytes.indices {
            let b = bytes[i]
            if b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") {
                bytes[i] = b + 32
            } else if b == UInt8(ascii: "-") || b == UInt8(ascii: "\t") {
                bytes[i] = UInt8(ascii: " ")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Collapses runs of spaces and trims them at both ends.
    private static func collapse(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var pendingSpace = false
        for byte in s.utf8 {
            if byte == UInt8(ascii: " ") || (byte >= 0x09 && byte <= 0x0D) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(UInt8(ascii: " ")) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Rules for every text value a list holds: item names and list titles, quantities, notes and
/// categories. Every writer shares them (local edits, imports, pushes, the server), so what one
/// replica accepts, every other one and the server accept too.
///
/// A value is cleaned (white space collapsed and trimmed, the user's casing kept), holds no
/// control character (C0, C1, DEL, U+0000) nor bidirectional control (Unicode's Bidi_Control:
/// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which can make a name display as
/// another, reversed or run into what follows it), no character with more than
/// ``maxCombiningMarks`` combining marks in a row, and fits its field's limits: ``Field/maxBytes``
/// bytes of UTF-8 and, for names and titles, ``maxLength`` characters. A one-letter name with
/// 1.8 million accents is one character but 3.6 MB: bytes are what cost memory, so bytes are
/// what is bounded.
public enum ItemName {
    /// Names and titles longer than this many characters (grapheme clusters) are refused.
    public static let maxLength = 500
    /// Combining marks in a row at most (Unicode's Stream-Safe Text Format allows 30); more is
    /// an accent flood, not a word.
    public static let maxCombiningMarks = 30

    /// Why a text is not a valid value of its field.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Nothing left after cleaning white space.
        case empty
        /// The value has this many characters, over ``ItemName/maxLength``.
        case tooLong(Int)
        /// The value has this many UTF-8 bytes, over the field's `limit`.
        case tooManyBytes(Int, limit: Int)
        /// More than ``ItemName/maxCombiningMarks`` combining marks in a row.
        case tooManyCombiningMarks
        /// A control character other than white space (an escape, a NUL, DEL).
        case controlCharacter
        /// White space that a cleaned value would not have (on the wire, values travel cleaned).
        case notCleaned
        /// Bytes that are not UTF-8.
        case invalidUTF8

        public var description: String {
            switch self {
            case .empty: return "an item name cannot be empty"
            case .tooLong(let n):
                return "an item name can have at most \(ItemName.maxLength) characters (this one has \(n))"
            case .tooManyBytes(let n, let limit):
                return "a value can have at most \(limit) bytes of UTF-8 (this one has \(n))"
            case .tooManyCombiningMarks:
                return "a character can carry at most \(ItemName.maxCombiningMarks) accents or other combining marks"
            case .controlCharacter:
                return "a value cannot contain control characters (tabs, escapes, bidirectional controls, …)"
            case .notCleaned: return "a value travels with its white space collapsed and trimmed"
            case .invalidUTF8: return "an item name must be valid UTF-8"
            }
        }
    }

    /// Whether `scalar` is one of Unicode's 12 bidirectional controls (the Bidi_Control property,
    /// the same set since Unicode 6.3; listed here, not read from a platform).
    public static func isBidiControl(_ scalar: UInt32) -> Bool {
        scalar == 0x061C || scalar == 0x200E || scalar == 0x200F || (0x202A...0x202E).contains(scalar)
            || (0x2066...0x2069).contains(scalar)
    }

    /// The display name for `raw`: white space collapsed and trimmed, the user's casing kept.
    /// - Throws: ``Problem`` for an empty name, one over ``maxLength`` characters or
    ///   ``Field/maxBytes`` bytes, or one with control characters or an accent flood.
    public static func clean(_ raw: String) throws(Problem) -> String {
        try clean(raw, for: .name)
    }

    /// `raw` cleaned as a value of `field` (a text field: name, title, quantity, note, category).
    /// Names and titles also need a character that gives them a key.
    public static func clean(_ raw: String, for field: Field) throws(Problem) -> String {
        let maxBytes = field.maxBytes
        let isName = field == .name || field == .title || field == .shop
        if let name = try cleanASCII(raw, maxBytes: maxBytes, isName: isName) { return name }
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        var bytes = 0
        var combiningRun = 0
        for scalar in raw.unicodeScalars {
            let isASCII = scalar.value < 0x80
            if isASCII
                ? (scalar == " " || (scalar.value >= 0x09 && scalar.value <= 0x0D)) : scalar.properties.isWhitespace
            {
                pendingSpace = !scalars.isEmpty
                combiningRun = 0
                continue
            }
            if isASCII
                ? (scalar.value < 0x20 || scalar.value == 0x7F)
                : (scalar.properties.generalCategory == .control || Self.isBidiControl(scalar.value))
            {
                throw .controlCharacter
            }
            if !isASCII && scalar.properties.canonicalCombiningClass != .notReordered {
                combiningRun += 1
                if combiningRun > maxCombiningMarks { throw .tooManyCombiningMarks }
            } else {
                combiningRun = 0
            }
            if pendingSpace {
                scalars.append(" ")
                bytes += 1
            }
            pendingSpace = false
            scalars.append(scalar)
            bytes += scalar.utf8.count
            // Stop early: a 3.6 MB value is refused after reading a limit's worth of it.
            if bytes > maxBytes { throw .tooManyBytes(raw.utf8.count, limit: maxBytes) }
        }
        let name = String(scalars)
        if name.isEmpty { throw .empty }
        if isName && name.utf8.count > maxLength {  // a character has at least one byte: count only when needed
            let count = name.count
            if count > maxLength { throw .tooLong(count) }
        }
        // A name of only dashes, combining marks and the like has an empty key: no item can have it.
        if isName {
            let hasASCIIKeyCharacter = name.utf8.contains { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "-") }
            if !hasASCIIKeyCharacter && ItemKey.normalize(name).isEmpty { throw .empty }
        }
        return name
    }

    /// Whether `value` is a valid value of `field` as it travels: cleaned, within the limits.
    public static func check(_ value: String, for field: Field) throws(Problem) {
        let cleaned = try clean(value, for: field)
        // Values travel cleaned (white space collapsed and trimmed); anything else is not ours.
        if cleaned != value { throw .notCleaned }
    }

    /// The common case without Unicode tables: printable ASCII, already trimmed and collapsed.
    /// Returns nil when the slow path must decide.
    private static func cleanASCII(_ raw: String, maxBytes: Int, isName: Bool) throws(Problem) -> String? {
        var previousSpace = true
        var hasKeyCharacter = false
        var count = 0
        for byte in raw.utf8 {
            guard byte >= 0x20 && byte < 0x7F else { return nil }
            let isSpace = byte == UInt8(ascii: " ")
            if isSpace && previousSpace { return nil }
            previousSpace = isSpace
            if !isSpace && byte != UInt8(ascii: "-") { hasKeyCharacter = true }
            count += 1
            if count > maxBytes { throw .tooManyBytes(raw.utf8.count, limit: maxBytes) }
        }
        if count == 0 || previousSpace || (isName && !hasKeyCharacter) { return nil }
        if isName && count > maxLength { throw .tooLong(count) }
        return raw
    }

    /// Decodes bytes as UTF-8 and cleans them; invalid UTF-8 is refused.
    public static func clean(bytes: some Collection<UInt8>) throws(Problem) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return try clean(text)
    }
}
