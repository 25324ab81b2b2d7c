public import BasketCore

/// How an item matched, best first.
public enum Tier: Int, Hashable, Comparable, Sendable, CaseIterable {
    /// The item's key is the query's key.
    case exact
    /// The item's key starts with the query.
    case prefix
    /// Every query word starts a word of the item ("gr yog" → "Greek yogurt").
    case wordPrefix
    /// Every query word appears in the item (also with separators removed: "cocacola" → "Coca-Cola").
    case substring
    /// Every query word of 3+ letters appears in order, with gaps (scored like fzf).
    case fuzzy
    /// Every query word is within a few edits of a word of the item (only when the tiers before
    /// found fewer than 3 items).
    case typo

    public static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }

    public var name: String {
        switch self {
        case .exact: "exact"
        case .prefix: "prefix"
        case .wordPrefix: "word-prefix"
        case .substring: "substring"
        case .fuzzy: "fuzzy"
        case .typo: "typo"
        }
    }
}

/// Items folded once for searching many times (one keystroke after another).
///
/// Building costs one ``ItemKey/normalize(_:)`` per item; a search is one pass over the entries
/// with a letter-set filter, plus a fuzzy pass when the earlier tiers leave room under the limit and
/// a typo pass over the distinct words when they found fewer than 3 items.
public final class SearchIndex: Sendable {
    struct Entry: Sendable {
        let item: Item
        let key: [UInt8]
        /// The key with separators (spaces, punctuation) removed.
        let compact: [UInt8]
        let wordStarts: [Int32]
        /// Which of a–z and 0–9 the key contains.
        let mask: UInt64
    }

    let entries: [Entry]
    /// Keys of every item, to decide the offer.
    let keys: Set<[UInt8]>
    /// Distinct words → entries containing them, by first byte (for the typo tier).
    let vocabulary: [UInt8: [(word: [UInt8], entries: [Int32])]]

    public init(items: [Item]) {
        var entries: [Entry] = []
        entries.reserveCapacity(items.count)
        var keys = Set<[UInt8]>()
        var words: [[UInt8]: [Int32]] = [:]
        for item in items {
            let key = Array(ItemKey.normalize(item.name).utf8)
            keys.insert(key)
            var starts: [Int32] = []
            var compact: [UInt8] = []
            compact.reserveCapacity(key.count)
            var previousIsSeparator = true
            for (i, byte) in key.enumerated() {
                let separator = Self.isSeparator(byte)
                if !separator {
                    if previousIsSeparator { starts.append(Int32(i)) }
                    compact.append(byte)
                }
                previousIsSeparator = separator
            }
            let index = Int32(entries.count)
            for word in key.split(whereSeparator: Self.isSeparator) {
                words[Array(word), default: []].append(index)
            }
            entries.append(Entry(item: item, key: key, compact: compact, wordStarts: starts, mask: Self.mask(key)))
        }
        var vocabulary: [UInt8: [(word: [UInt8], entries: [Int32])]] = [:]
        for (word, list) in words { vocabulary[word[0], default: []].append((word, list)) }
        self.entries = entries
        self.keys = keys
        self.vocabulary = vocabulary
    }

    public var count: Int { entries.count }

    static func isSeparator(_ byte: UInt8) -> Bool {
        byte < 0x80 && !(byte >= 0x30 && byte <= 0x39) && !(byte >= 0x61 && byte <= 0x7A) && !(byte >= 0x41 && byte <= 0x5A)
    }

    static func mask(_ bytes: [UInt8]) -> UInt64 {
        var mask: UInt64 = 0
        for byte in bytes {
            if byte >= 0x61 && byte <= 0x7A {
                mask |= 1 << UInt64(byte - 0x61)
            } else if byte >= 0x30 && byte <= 0x39 {
                mask |= 1 << UInt64(26 + byte - 0x30)
            }
        }
        return mask
    }

    /// Searches; see ``Search`` for the ranking.
    public func search(_ query: Query, limit: Int = .max) -> SearchResult {
        let offer: String? =
            query.freeText.isEmpty || keys.contains(query.key) ? nil : try? ItemName.clean(query.freeText)
        var hits: [SearchMatch] = []
        var fuzzyCandidates: [Int] = []
        let queryKey = query.key
        let words = query.words
        let queryMask = Self.mask(words.flatMap { $0 })
        for index in entries.indices {
            let entry = entries[index]
            guard passesFilters(entry, query) else { continue }
            if !query.hasText {
                hits.append(SearchMatch(item: entry.item, isExact: false, position: 0, tier: .substring, score: 0))
                continue
            }
            if entry.key == queryKey {
                hits.append(SearchMatch(item: entry.item, isExact: true, position: 0, tier: .exact, score: 0))
                continue
            }
            guard entry.mask & queryMask == queryMask else { continue }
            if !queryKey.isEmpty && entry.key.starts(with: queryKey) {
                hits.append(SearchMatch(item: entry.item, isExact: false, position: 0, tier: .prefix, score: 0))
                continue
            }
            if let position = wordPrefixPosition(entry, words) {
                hits.append(SearchMatch(item: entry.item, isExact: false, position: position, tier: .wordPrefix, score: 0))
                continue
            }
            if let position = substringPosition(entry, words) {
                hits.append(SearchMatch(item: entry.item, isExact: false, position: position, tier: .substring, score: 0))
                continue
            }
            fuzzyCandidates.append(index)
        }
        if hits.count < limit && words.contains(where: { $0.count >= 3 }) {
            for index in fuzzyCandidates {
                if let (score, position) = fuzzyScore(entries[index], words) {
                    hits.append(
                        SearchMatch(item: entries[index].item, isExact: false, position: position, tier: .fuzzy, score: score))
                }
            }
        }
        if hits.count < 3 && !words.isEmpty {
            let found = Set(hits.map(\.item.id))
            for (index, edits) in typoMatches(words) where !found.contains(entries[index].item.id) {
                let entry = entries[index]
                guard passesFilters(entry, query) else { continue }
                hits.append(SearchMatch(item: entry.item, isExact: false, position: 0, tier: .typo, score: -edits))
            }
        }
        if hits.count > limit {
            // Only the best `limit` need sorting.
            hits.sort(by: Self.ranking)
            hits.removeSubrange(limit...)
        } else {
            hits.sort(by: Self.ranking)
        }
        return SearchResult(query: query.freeText, offer: offer, matches: hits)
    }

    func passesFilters(_ entry: Entry, _ query: Query) -> Bool {
        switch query.state {
        case .checked?: if !entry.item.isChecked { return false }
        case .unchecked?: if entry.item.isChecked { return false }
        case nil: break
        }
        for phrase in query.phrases where Self.find(phrase, in: entry.key) == nil { return false }
        for anchor in query.anchors where !entry.key.starts(with: anchor) { return false }
        for word in query.excluded where Self.find(word, in: entry.key) != nil { return false }
        return true
    }

    func wordPrefixPosition(_ entry: Entry, _ words: [[UInt8]]) -> Int? {
        guard !words.isEmpty else { return nil }
        var first = Int.max
        for word in words {
            var found = false
            for start in entry.wordStarts {
                let s = Int(start)
                if s + word.count <= entry.key.count && entry.key[s..<(s + word.count)].elementsEqual(word) {
                    first = min(first, s)
                    found = true
                    break
                }
            }
            if !found { return nil }
        }
        return first
    }

    func substringPosition(_ entry: Entry, _ words: [[UInt8]]) -> Int? {
        guard !words.isEmpty else { return nil }
        var first = Int.max
        for word in words {
            if let position = Self.find(word, in: entry.key) {
                first = min(first, position)
            } else if word.count >= 2, let position = Self.find(word, in: entry.compact) {
                first = min(first, position)
            } else {
                return nil
            }
        }
        return first
    }

    /// fzf-like: every word of 3+ letters in order with gaps; bonuses at word starts and for
    /// consecutive letters, a penalty per gap. Shorter words must be substrings.
    func fuzzyScore(_ entry: Entry, _ words: [[UInt8]]) -> (Int, Int)? {
        var total = 0
        var first = Int.max
        let starts = Set(entry.wordStarts.map(Int.init))
        for word in words {
            if word.count < 3 {
                guard let position = Self.find(word, in: entry.key) else { return nil }
                first = min(first, position)
                total += 2 * word.count
                continue
            }
            var i = 0
            var score = 0
            var previous = -2
            for byte in word {
                while i < entry.key.count && entry.key[i] != byte { i += 1 }
                guard i < entry.key.count else { return nil }
                if first == Int.max || i < first { first = min(first, i) }
                score += 16
                if starts.contains(i) { score += 8 }
                if i == previous + 1 { score += 6 } else if previous >= 0 { score -= min(i - previous - 1, 6) }
                previous = i
                i += 1
            }
            total += score
        }
        return (total, first)
    }

    /// Entries whose words are each within the allowed edits of a query word; the last query word
    /// may be the beginning of a word.
    func typoMatches(_ words: [[UInt8]]) -> [(Int, Int)] {
        var perWord: [[Int32: Int]] = []
        for (w, word) in words.enumerated() {
            let isLast = w == words.count - 1
            let allowed = word.count >= 9 ? 2 : word.count >= 5 ? 1 : 0
            var matches: [Int32: Int] = [:]
            for (candidate, list) in vocabulary[word[0]] ?? [] {
                var edits: Int?
                if candidate.starts(with: word) || Self.find(word, in: candidate) != nil {
                    edits = 0
                } else if allowed > 0 {
                    if abs(candidate.count - word.count) <= allowed {
                        edits = Self.damerauLevenshtein(word, candidate, limit: allowed)
                    }
                    if edits == nil && isLast && candidate.count > word.count {
                        edits = Self.damerauLevenshtein(word, Array(candidate.prefix(word.count)), limit: allowed)
                    }
                }
                guard let edits else { continue }
                for entry in list where (matches[entry] ?? .max) > edits { matches[entry] = edits }
            }
            perWord.append(matches)
        }
        guard var result = perWord.first else { return [] }
        for matches in perWord.dropFirst() {
            var next: [Int32: Int] = [:]
            for (entry, edits) in result { if let more = matches[entry] { next[entry] = edits + more } }
            result = next
        }
        return result.filter { $0.value > 0 }.map { (Int($0.key), $0.value) }
    }

    /// The optimal-string-alignment distance, or nil when above `limit`.
    static func damerauLevenshtein(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int? {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) <= limit ? max(a.count, b.count) : nil }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMin = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
                rowMin = min(rowMin, value)
            }
            if rowMin > limit { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty ? 0 : nil }
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        outer: while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count {
                    if haystack[i + j] != needle[j] {
                        i += 1
                        continue outer
                    }
                    j += 1
                }
                return i
            }
            i += 1
        }
        return nil
    }

    /// Tier; score (higher first); earlier match; shorter name; unchecked first; natural order; id.
    static func ranking(_ a: SearchMatch, _ b: SearchMatch) -> Bool {
        if a.tier != b.tier { return a.tier < b.tier }
        if a.score != b.score { return a.score > b.score }
        if a.position != b.position { return a.position < b.position }
        let (la, lb) = (a.item.name.utf8.count, b.item.name.utf8.count)
        if la != lb { return la < lb }
        if a.item.isChecked != b.item.isChecked { return !a.item.isChecked }
        let natural = NaturalOrder.compare(a.item.name, b.item.name)
        if natural != 0 { return natural < 0 }
        return a.item.id < b.item.id
    }
}

/// "Item 2" before "Item 10": digit runs compare by value, the rest by folded bytes.
enum NaturalOrder {
    static func compare(_ a: String, _ b: String) -> Int {
        let x = Array(a.lowercased().utf8)
        let y = Array(b.lowercased().utf8)
        var i = 0
        var j = 0
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                var ei = i
                while ei < x.count && isDigit(x[ei]) { ei += 1 }
                var ej = j
                while ej < y.count && isDigit(y[ej]) { ej += 1 }
                let na = x[i..<ei].drop { $0 == 0x30 }
                let nb = y[j..<ej].drop { $0 == 0x30 }
                if na.count != nb.count { return na.count < nb.count ? -1 : 1 }
                if !na.elementsEqual(nb) { return na.lexicographicallyPrecedes(nb) ? -1 : 1 }
                i = ei
                j = ej
                continue
            }
            if x[i] != y[j] { return x[i] < y[j] ? -1 : 1 }
            i += 1
            j += 1
        }
        return (x.count - i) - (y.count - j) < 0 ? -1 : ((x.count - i) == (y.count - j) ? 0 : 1)
    }
}
