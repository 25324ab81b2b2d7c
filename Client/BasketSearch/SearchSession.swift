/// Searches one keystroke after another over one ``SearchIndex`` (what the interactive mode
/// holds while the user types). Each keystroke visits only the entries of the index's shortest
/// letter-pair or letter-triple list for the query, so no state from the previous keystroke is
/// needed; a repeated query is given the last result again. Not thread-safe: one per session.
public final class SearchSession {
    /// The index searched.
    public let index: SearchIndex
    private var previous: (text: String, limit: Int, result: SearchResult)?

    /// A session over `index`.
    public init(index: SearchIndex) { self.index = index }

    /// The first `limit` matches of `text` as typed so far; the same text and limit again are
    /// given the last result again.
    public func search(_ text: String, limit: Int) -> SearchResult {
        if let previous, previous.text == text, previous.limit == limit { return previous.result }
        let result = index.search(Query(text), limit: limit)
        previous = (text, limit, result)
        return result
    }
}

@available(*, unavailable)
extension SearchSession: Sendable {}
