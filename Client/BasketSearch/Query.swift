import BasketCore

/// A parsed search query.
///
/// Syntax: free words (all must match, in any order); `is:checked` / `is:done` and
/// `is:unchecked` / `is:todo` filter by state; `-word` or `!word` excludes items containing it;
/// `"a phrase"` must appear as typed (folded); `^word` must start the name; `in:dairy` keeps
/// items whose category starts with "dairy" (folded; a dash for a space: `in:frozen-food`). Any
/// other `x:y` is plain text.
public struct Query: Hashable, Sendable {
    /// The state `is:` asks for.
    public enum State: Hashable, Sendable {
        /// `is:checked` / `is:done`: bought items only.
        case checked
        /// `is:unchecked` / `is:todo`: items still to buy.
        case unchecked
    }

    /// The free text as typed, without tokens: what the offer would add.
    public var freeText: String
    /// Folded free words.
    public var words: [[UInt8]]
    /// Folded phrases (quoted).
    public var phrases: [[UInt8]]
    /// Folded words that must start the name (`^word`).
    public var anchors: [[UInt8]]
    /// Folded words that exclude an item containing them (`-word`, `!word`).
    public var excluded: [[UInt8]]
    /// The state asked for with `is:`; nil for any.
    public var state: State?
    /// The folded category asked for with `in:` (a prefix of the item's category); nil for any.
    public var category: [UInt8]?

    /// The folded key of the free text (what an exact match must equal).
    public var key: [UInt8] { Array(ItemKey.normalize(freeText).utf8) }

    /// Parses `text` as typed.
    public init(_ text: String) {
        var free: [String] = []
        var words: [[UInt8]] = []
        var phrases: [[UInt8]] = []
        var anchors: [[UInt8]] = []
        var excluded: [[UInt8]] = []
        var state: State?
        var category: [UInt8]?
        var rest = Substring(text)
        while let first = rest.first {
            if first.isWhitespace {
                rest = rest.dropFirst()
                continue
            }
            if first == "\"" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                let phrase = String(body[..<end])
                let folded = Array(ItemKey.normalize(phrase).utf8)
                if !folded.isEmpty {
                    phrases.append(folded)
                    free.append(phrase)
                }
                rest = end < body.endIndex ? body[body.index(after: end)...] : body[end...]
                continue
            }
            let end = rest.firstIndex(where: \.isWhitespace) ?? rest.endIndex
            let token = String(rest[..<end])
            rest = rest[end...]
            let lower = token.lowercased()
            switch lower {
            case "is:checked", "is:done":
                state = .checked
                continue
            case "is:unchecked", "is:todo":
                state = .unchecked
                continue
            default: break
            }
            if lower.hasPrefix("in:") && token.count > 3 {
                let folded = Array(ItemKey.normalize(String(token.dropFirst(3))).utf8)
                if !folded.isEmpty {
                    category = folded
                    continue
                }
            }
            if token.count > 1 && (token.hasPrefix("-") || token.hasPrefix("!")) {
                let folded = Array(ItemKey.normalize(String(token.dropFirst())).utf8)
                if !folded.isEmpty { excluded.append(folded) }
                continue
            }
            if token.count > 1 && token.hasPrefix("^") {
                let folded = Array(ItemKey.normalize(String(token.dropFirst())).utf8)
                if !folded.isEmpty {
                    anchors.append(folded)
                    free.append(String(token.dropFirst()))
                }
                continue
            }
            let folded = ItemKey.normalize(token)
            free.append(token)
            for word in folded.split(separator: " ") where !word.isEmpty { words.append(Array(word.utf8)) }
        }
        self.freeText = free.joined(separator: " ")
        self.words = words
        self.phrases = phrases
        self.anchors = anchors
        self.excluded = excluded
        self.state = state
        self.category = category
    }

    /// Whether the query has any text to match (beyond filters).
    public var hasText: Bool { !words.isEmpty || !phrases.isEmpty || !anchors.isEmpty }

    /// Whether the query filters beyond its words (state, phrases, anchors, exclusions).
    public var hasFilters: Bool {
        state != nil || category != nil || !phrases.isEmpty || !anchors.isEmpty || !excluded.isEmpty
    }
}
