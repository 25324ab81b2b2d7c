/// Searches one keystroke after another over one ``SearchIndex``: when the new query only
/// extends the previous one (more letters, more words, no tokens), only the entries that could
/// still match are visited. Not thread-safe: one per interactive session.
public final class SearchSession {
    public let index: SearchIndex
    private var previous: (text: String, passed: [Int32])?

    public init(index: SearchIndex) { self.index = index }

    public func search(_ text: String, limit: Int) -> SearchResult {
        let query = Query(text)
        var candidates: [Int32]?
        if let previous, Self.isPlain(text), Self.isPlain(previous.text), text.hasPrefix(previous.text),
            !previous.text.isEmpty
        {
            candidates = previous.passed
        }
        let (result, passed) = index.search(query, limit: limit, among: candidates)
        previous = (text, passed)
        return result
    }

    /// Only words: extending it can only narrow what matches.
    static func isPlain(_ text: String) -> Bool {
        !text.contains { $0 == "\"" || $0 == ":" || $0 == "-" || $0 == "!" || $0 == "^" }
    }
}

@available(*, unavailable)
extension SearchSession: Sendable {}
