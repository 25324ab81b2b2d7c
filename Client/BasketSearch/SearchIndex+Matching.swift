import BasketCore
import Foundation
import Synchronization

/// The tier tests, the typo distance and the byte search behind ``SearchIndex``.
extension SearchIndex {
    func passesFilters(_ entry: UnsafePointer<Entry>, _ query: Query) -> Bool {
        switch query.state {
        case .checked?: if !entry.pointee.item.isChecked { return false }
        case .unchecked?: if entry.pointee.item.isChecked { return false }
        case nil: break
        }
        if let category = query.category {
            guard let own = entry.pointee.item.category,
                Array(ItemKey.normalize(own).utf8).starts(with: category)
            else { return false }
        }
        for phrase in query.phrases where Self.find(phrase, in: entry.pointee.key) == nil { return false }
        for anchor in query.anchors where !entry.pointee.key.starts(with: anchor) { return false }
        for word in query.excluded where Self.find(word, in: entry.pointee.key) != nil { return false }
        return true
    }

    /// The first position where every word starts a word of `key` (the earliest of them).
    func wordPrefixPosition(_ key: UnsafeBufferPointer<UInt8>, _ words: [[UInt8]]) -> Int? {
        guard !words.isEmpty else { return nil }
        var first = Int.max
        for word in words {
            let position: Int? = word.withUnsafeBufferPointer { needle in
                var from = 0
                while from < key.count {
                    let rest = UnsafeBufferPointer(rebasing: key[from...])
                    guard let offset = Self.find(needle, in: rest) else { return nil }
                    let at = from + offset
                    if at == 0 || Self.isSeparator(key[at - 1]) { return at }
                    from = at + 1
                }
                return nil
            }
            guard let position else { return nil }
            first = min(first, position)
        }
        return first
    }

    func substringPosition(
        _ key: UnsafeBufferPointer<UInt8>, _ compact: UnsafeBufferPointer<UInt8>, _ words: [[UInt8]]
    ) -> Int? {
        guard !words.isEmpty else { return nil }
        var first = Int.max
        for word in words {
            let position = word.withUnsafeBufferPointer { needle in
                Self.find(needle, in: key) ?? (needle.count >= 2 ? Self.find(needle, in: compact) : nil)
            }
            guard let position else { return nil }
            first = min(first, position)
        }
        return first
    }

    /// The entries in `range` that have every letter of the query (`mask`) and, for each two
    /// consecutive letters of a fuzzy word (3+ bytes), an occurrence of the first before the last
    /// occurrence of the second: a superset of the fuzzy matches. The letter test rejects most
    /// entries with one load; the order test reads two bytes per letter pair of those left.
    func orderedCandidates(_ mask: UInt64, _ words: [[UInt8]], in range: Range<Int>, excluding isHit: [Bool]) -> [Int32]
    {
        // Per letter pair: the row of first positions of a and the row of last positions of b.
        var rows: [(first: Int, last: Int)] = []
        for word in words where word.count >= 3 {
            for i in 0..<(word.count - 1) {
                if let a = Self.symbol(word[i]), let b = Self.symbol(word[i + 1]) {
                    rows.append((a * entries.count, (36 + b) * entries.count))
                }
            }
        }
        var result: [Int32] = []
        masks.withUnsafeBufferPointer { masks in
            isHit.withUnsafeBufferPointer { isHit in
                letterSpans.withUnsafeBufferPointer { spans in
                    rows.withUnsafeBufferPointer { rows in
                        next: for index in range where masks[index] & mask == mask && !isHit[index] {
                            for row in rows {
                                let first = spans[row.first + index]
                                let last = spans[row.last + index]
                                if first >= last || last == 255 { continue next }
                            }
                            result.append(Int32(index))
                        }
                    }
                }
            }
        }
        return result
    }

    /// fzf-like: every word of 3+ letters in order with gaps; bonuses at word starts and for
    /// consecutive letters, a penalty per gap. Shorter words must be substrings. `words` holds
    /// the query words back to back; word k ends at `ends[k]`.
    func fuzzyScore(
        _ key: UnsafeBufferPointer<UInt8>, _ words: UnsafeBufferPointer<UInt8>, _ ends: [Int]
    ) -> (Int, Int)? {
        var total = 0
        var first = Int.max
        var start = 0
        for end in ends {
            let word = UnsafeBufferPointer(rebasing: words[start..<end])
            start = end
            if word.count < 3 {
                guard let position = Self.find(word, in: key) else { return nil }
                first = min(first, position)
                total += 2 * word.count
                continue
            }
            var i = 0
            var score = 0
            var previous = -2
            for byte in word {
                while i < key.count && key[i] != byte { i += 1 }
                guard i < key.count else { return nil }
                first = min(first, i)
                score += 16
                if i == 0 || Self.isSeparator(key[i - 1]) { score += 8 }  // a word start
                if i == previous + 1 { score += 6 } else if previous >= 0 { score -= min(i - previous - 1, 6) }
                previous = i
                i += 1
            }
            total += score
        }
        return (total, first)
    }

    /// Entries whose words are each within the allowed edits of a query word; the last query word
    /// may be the beginning of a word. Per query word, the entries are a bitset; words intersect.
    func typoMatches(_ queryWords: [[UInt8]]) -> [(Int, Int)] {
        // The vocabulary's words are split at every separator ("d'auvergne" is "d" and
        // "auvergne", "pb&j" is "pb" and "j"): the query's words are split the same way.
        let words = queryWords.flatMap { $0.split(whereSeparator: Self.isSeparator).map(Array.init) }
        guard !words.isEmpty else { return [] }
        let wordCount = (entries.count + 63) / 64
        var all: [UInt64]?
        var editsOf = [UInt8](repeating: 0, count: entries.count)
        for (w, word) in words.enumerated() {
            let isLast = w == words.count - 1
            let allowed = word.count >= 8 ? 2 : word.count >= 4 ? 1 : 0
            var bits = [UInt64](repeating: 0, count: wordCount)
            var matched = false
            func consider(_ candidates: [(word: [UInt8], entries: [Int32])], sameFirst: Bool) {
                for (candidate, list) in candidates {
                    if !sameFirst && candidate[0] == word[0] { continue }  // seen in the first pass
                    var edits: Int?
                    if sameFirst && (candidate.starts(with: word) || Self.find(word, in: candidate) != nil) {
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
                    matched = true
                    for entry in list {
                        bits[Int(entry) >> 6] |= 1 << UInt64(entry & 63)
                        if edits > 0 { editsOf[Int(entry)] = max(editsOf[Int(entry)], UInt8(edits)) }
                    }
                }
            }
            consider(vocabulary[word[0]] ?? [], sameFirst: true)
            // Nothing with the same first letter: the slip may be in the first letter. Swapped or
            // added in front ("rfuit", "xfruit"): words starting with the query's second letter;
            // replaced or missing ("dream", "ream"): words whose second letter is the query's
            // second or first.
            if !matched && allowed > 0 && word.count >= 4 {
                consider(vocabulary[word[1]] ?? [], sameFirst: false)
                consider(vocabularyBySecond[word[1]] ?? [], sameFirst: false)
                if word[0] != word[1] { consider(vocabularyBySecond[word[0]] ?? [], sameFirst: false) }
            }
            if var current = all {
                for i in 0..<wordCount { current[i] &= bits[i] }
                all = current
            } else {
                all = bits
            }
        }
        guard let all else { return [] }
        var result: [(Int, Int)] = []
        for (i, word) in all.enumerated() where word != 0 {
            var remaining = word
            while remaining != 0 {
                let bit = remaining.trailingZeroBitCount
                remaining &= remaining - 1
                let entry = Int32(i * 64 + bit)
                if editsOf[Int(entry)] > 0 { result.append((Int(entry), Int(editsOf[Int(entry)]))) }
            }
        }
        return result
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

    /// The first position of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty else { return 0 }
        guard needle.count <= haystack.count else { return nil }
        return needle.withUnsafeBufferPointer { n in
            haystack.withUnsafeBufferPointer { h in find(n, in: h) }
        }
    }

    static func find(_ n: UnsafeBufferPointer<UInt8>, in h: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !n.isEmpty else { return 0 }
        guard n.count <= h.count else { return nil }
        // memchr for the first byte, memcmp for the rest (glibc's memmem is not exported to Swift).
        guard let hb = h.baseAddress, let nb = n.baseAddress else { return nil }
        var start = 0
        let last = h.count - n.count
        while start <= last {
            guard let hit = memchr(hb + start, Int32(nb[0]), last - start + 1) else { return nil }
            let offset = UnsafeRawPointer(hit) - UnsafeRawPointer(hb)
            if memcmp(hb + offset, nb, n.count) == 0 { return offset }
            start = offset + 1
        }
        return nil
    }
}

/// Query words back to back, for scoring without an array per word.
struct FuzzyWords {
    let bytes: [UInt8]
    /// Where each word ends in `bytes`.
    let ends: [Int]

    init(_ words: [[UInt8]]) {
        bytes = words.flatMap { $0 }
        var ends: [Int] = []
        var end = 0
        for word in words {
            end += word.count
            ends.append(end)
        }
        self.ends = ends
    }
}

/// "Item 2" before "Item 10": a sort key where every run of digits is prefixed by its length,
/// so byte order is natural order.
enum NaturalOrder {
    static func key(_ folded: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(folded.count + 4)
        var i = 0
        while i < folded.count {
            if folded[i] >= 0x30 && folded[i] <= 0x39 {
                var end = i
                while end < folded.count && folded[end] >= 0x30 && folded[end] <= 0x39 { end += 1 }
                var start = i
                while start < end - 1 && folded[start] == 0x30 { start += 1 }
                out.append(UInt8(min(end - start, 255)))
                out.append(contentsOf: folded[start..<end])
                i = end
            } else {
                out.append(folded[i])
                i += 1
            }
        }
        return out
    }
}

/// The answers of a ``SearchIndex`` to one-letter queries and to common two-letter ones, filled
/// once while the index is built.
final class ShortAnswers: Sendable {
    /// How many ranked hits are kept per query.
    static let depth = 200
    /// A pair held by at least this many entries has its answer kept.
    static let commonPair = 2_000
    private let answers = Mutex<[[UInt8]: [SearchIndex.Hit]]>([:])

    func store(_ key: [UInt8], hits: [SearchIndex.Hit]) {
        answers.withLock { $0[key] = hits }
    }

    func answer(_ key: [UInt8]) -> [SearchIndex.Hit]? {
        answers.withLock { $0[key] }
    }
}
