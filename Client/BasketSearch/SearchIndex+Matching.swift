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

    /// Where every word occurs in `key` (the earliest of them), or in `compact` (the key without
    /// separators), and the closeness (``Closeness``) of their first occurrences: a word start, a
    /// whole word, or inside a word; found only once separators are removed costs more.
    func substringMatch(
        _ key: UnsafeBufferPointer<UInt8>, _ compact: UnsafeBufferPointer<UInt8>, _ words: [[UInt8]]
    ) -> (position: Int, score: Int)? {
        guard !words.isEmpty else { return nil }
        var first = Int.max
        var score = 0
        for word in words {
            let found: (Int, Int)? = word.withUnsafeBufferPointer { needle in
                if let at = Self.find(needle, in: key) {
                    let start = at == 0 || Self.isSeparator(key[at - 1])
                    let end = at + needle.count
                    let whole = start && (end == key.count || Self.isSeparator(key[end]))
                    return (at, Closeness.word(needle.count, cost: 0, start: start, whole: whole))
                }
                guard needle.count >= 2, let at = Self.find(needle, in: compact) else { return nil }
                return (
                    at, Closeness.word(needle.count, cost: 0, start: false, whole: false) - Closeness.acrossSeparators
                )
            }
            guard let (position, wordScore) = found else { return nil }
            first = min(first, position)
            score += wordScore
        }
        return (first, score)
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
    /// consecutive letters, a penalty per gap (``Closeness``). Shorter words must be substrings.
    /// Letters scattered by chance are not a match: a word whose letters fall in more of the
    /// item's words than half its letters, or over several words in too many short runs (one or
    /// two letters) inside them (more than one, two from 6 letters), was not what was typed.
    /// "bttrmlk" is "Buttermilk" and "brdcrm" "Bread crumbs"; "cpgmpl" is not "Comstock, Pie
    /// Filling & Topping, Simply Cherry". `words` holds the query words back to back; word k
    /// ends at `ends[k]`.
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
                total += Closeness.word(word.count, cost: 0, start: false, whole: false)
                continue
            }
            var i = 0
            var score = 0
            var previous = -2
            // The current run of consecutive letters: its length and whether it starts a word.
            var run = 0
            var runAtStart = false
            var weakRuns = 0
            var itemWords = 0
            var lastWordStart = -1
            for byte in word {
                while i < key.count && key[i] != byte { i += 1 }
                guard i < key.count else { return nil }
                first = min(first, i)
                score += Closeness.letter
                let atStart = i == 0 || Self.isSeparator(key[i - 1])
                if atStart { score += Closeness.wordStart }
                var wordStart = i
                while wordStart > 0 && !Self.isSeparator(key[wordStart - 1]) { wordStart -= 1 }
                if wordStart != lastWordStart {
                    itemWords += 1
                    lastWordStart = wordStart
                }
                if i == previous + 1 {
                    score += Closeness.consecutive
                    run += 1
                } else {
                    if previous >= 0 { score -= min(i - previous - 1, 6) }
                    if run > 0 && run <= 2 && !runAtStart { weakRuns += 1 }
                    run = 1
                    runAtStart = atStart
                }
                previous = i
                i += 1
            }
            if run <= 2 && !runAtStart { weakRuns += 1 }
            if itemWords > (word.count + 1) / 2 || (itemWords > 1 && weakRuns > (word.count >= 6 ? 2 : 1)) {
                return nil
            }
            total += score
        }
        return (total, first)
    }

    /// Entries whose words are each close to a query word, with at least one slip among them, and
    /// their closeness (``Closeness``): per query word the best of the entry's words, summed, and
    /// the bonus for the share of the entry's letters those words cover.
    ///
    /// A query word may be ``EditDistance/allowance(_:)`` away from a word of the entry, or from
    /// the beginning of one when it is the last word (it may be unfinished). In a query of several
    /// words a word of 5 or more letters may have two slips, as long as the whole query stays
    /// within the sum of its words' allowances: the other words vouch for it. The candidate words
    /// are those with the query word's first letter, and, when no word holds it as typed, those
    /// where the slip is in the first letter. Only when that finds nothing, and `mayWiden` (the
    /// caller found nothing else either), the wider search: every query word with a slip in its
    /// first letter too, and the two slips beside other words (they touch many more entries).
    func typoMatches(_ queryWords: [[UInt8]], mayWiden: Bool = true) -> [(entry: Int, score: Int)] {
        // The vocabulary's words are split at every separator ("d'auvergne" is "d" and
        // "auvergne", "pb&j" is "pb" and "j"): the query's words are split the same way.
        let words = queryWords.flatMap { $0.split(whereSeparator: Self.isSeparator).map(Array.init) }
        guard !words.isEmpty, words.count < 255 else { return [] }
        // The wider search only when the narrow one finds nothing: it touches many more entries.
        let found = typoMatches(words, widened: false)
        return found.isEmpty && mayWiden ? typoMatches(words, widened: true) : found
    }

    /// `widened`: slips in the first letter for every word, and two slips from 5 letters in a
    /// query of several words.
    private func typoMatches(_ words: [[UInt8]], widened: Bool) -> [(entry: Int, score: Int)] {
        // Per query word, the entries with a word a slip or two away. An entry is a typo hit when
        // it has such a word for one query word at least and holds every other as typed, which
        // its key says directly.
        var slipped: [Slips] = []
        let budget = words.reduce(0) { $0 + EditDistance.allowance(EditDistance.characters($1)) }
        for (w, word) in words.enumerated() {
            let length = EditDistance.characters(word)
            let allowed =
                widened && words.count > 1 && length >= 5
                ? max(2 * EditDistance.edit, EditDistance.allowance(length)) : EditDistance.allowance(length)
            slipped.append(
                slips(of: word, allowed: allowed, unfinished: w == words.count - 1, alwaysFirstLetter: widened))
        }
        var result: [(entry: Int, score: Int)] = []
        for (s, slips) in slipped.enumerated() {
            next: for entry in slips.touched {
                if words.count > 1 {
                    // Looked at already from an earlier word's slips.
                    if slipped[..<s].contains(where: { $0.match(entry).score >= 0 }) { continue }
                }
                var total = Match(score: 0, covered: 0, cost: 0)
                for (w, word) in words.enumerated() {
                    let slip = slipped[w].match(entry)
                    let asTyped = w == s ? nil : typedScore(Int(entry), word)
                    let chosen: Match
                    if let asTyped, asTyped >= slip.score {
                        chosen = Match(score: Int32(asTyped), covered: Int32(word.count), cost: 0)
                    } else if slip.score >= 0 {
                        chosen = slip
                    } else {
                        continue next
                    }
                    total.score += chosen.score
                    total.covered += chosen.covered
                    total.cost += chosen.cost
                }
                guard total.cost > 0 && total.cost <= budget else { continue }
                let letters = Int(compactLength[Int(entry)])
                result.append((Int(entry), Int(total.score) + Closeness.covering(Int(total.covered), of: letters)))
            }
        }
        return result
    }

    /// A query word's match in one entry: its closeness, the letters it covers, its slips.
    struct Match {
        var score: Int32
        var covered: Int32
        var cost: Int32
    }

    /// One query word's slips: the best match per entry (score -1: none; empty when no entry
    /// has one, so a word without slips allocates nothing) and the entries that have one.
    struct Slips {
        var best: [Match]
        var touched: [Int32] = []

        func match(_ entry: Int32) -> Match {
            best.isEmpty ? Match(score: -1, covered: 0, cost: 0) : best[Int(entry)]
        }
    }

    /// The entries with a word (or, for the `unfinished` last word, the beginning of one) a slip
    /// or more but at most `allowed` away from `word`, with the best such match of each.
    func slips(of word: [UInt8], allowed: Int, unfinished: Bool, alwaysFirstLetter: Bool) -> Slips {
        var best: [Match] = []
        var touched: [Int32] = []
        guard allowed > 0 else { return Slips(best: best) }
        var heldAsTyped = false
        let mask = Self.mask(word)
        func consider(_ candidates: [VocabularyWord], sameFirst: Bool) {
            for vocabularyWord in candidates {
                let candidate = vocabularyWord.word
                if !sameFirst && candidate[0] == word[0] { continue }  // seen in the first pass
                if sameFirst && (candidate.starts(with: word) || Self.find(word, in: candidate) != nil) {
                    heldAsTyped = true
                    continue
                }
                // Each letter of one missing from the other costs 3 at least (a replacement on a
                // neighbouring key, or a doubled letter dropped twice); the letters after an
                // unfinished word's end are free.
                let missing = max(
                    (mask & ~vocabularyWord.mask).nonzeroBitCount,
                    unfinished ? 0 : (vocabularyWord.mask & ~mask).nonzeroBitCount)
                if missing * EditDistance.neighbour > allowed { continue }
                var match: Match?
                if let edits = EditDistance.distance(word, candidate, limit: allowed) {
                    let score = Closeness.word(word.count, cost: edits, start: true, whole: true)
                    match = Match(score: Int32(score), covered: Int32(candidate.count), cost: Int32(edits))
                } else if unfinished && candidate.count > word.count,
                    let edits = EditDistance.distance(word, candidate, limit: allowed, prefix: true)
                {
                    // A slip in an unfinished word is less sure than in a whole one.
                    let score = Closeness.word(word.count, cost: edits, start: true, whole: false) - Closeness.wholeWord
                    match = Match(score: Int32(score), covered: Int32(word.count), cost: Int32(edits))
                }
                guard let match else { continue }
                if best.isEmpty { best = Array(repeating: Match(score: -1, covered: 0, cost: 0), count: entries.count) }
                best.withUnsafeMutableBufferPointer { best in
                    for entry in vocabularyWord.entries where match.score > best[Int(entry)].score {
                        if best[Int(entry)].score < 0 { touched.append(entry) }
                        best[Int(entry)] = match
                    }
                }
            }
        }
        consider(vocabulary[word[0]] ?? [], sameFirst: true)
        // No word holds it as typed: the slip may be in the first letter. Swapped or added in
        // front ("rfuit", "xfruit"): words starting with the query's second letter; replaced or
        // missing ("dream", "ream"): words whose second letter is the query's second or first.
        if (alwaysFirstLetter || !heldAsTyped) && word.count >= 4 {
            consider(vocabulary[word[1]] ?? [], sameFirst: false)
            consider(vocabularyBySecond[word[1]] ?? [], sameFirst: false)
            if word[0] != word[1] { consider(vocabularyBySecond[word[0]] ?? [], sameFirst: false) }
        }
        return Slips(best: best, touched: touched)
    }

    /// The closeness of `word` typed as it is in the entry: its best occurrence in the key (a
    /// whole word, then the beginning of one, then inside one), or nil when the key lacks it.
    func typedScore(_ index: Int, _ word: [UInt8]) -> Int? {
        withKey(index) { key in
            word.withUnsafeBufferPointer { needle in
                var best: Int?
                var from = 0
                while from + needle.count <= key.count,
                    let offset = Self.find(needle, in: UnsafeBufferPointer(rebasing: key[from...]))
                {
                    let at = from + offset
                    let start = at == 0 || Self.isSeparator(key[at - 1])
                    let end = at + needle.count
                    let whole = start && (end == key.count || Self.isSeparator(key[end]))
                    best = max(best ?? 0, Closeness.word(needle.count, cost: 0, start: start, whole: whole))
                    if whole { break }
                    from = at + 1
                }
                return best
            }
        }
    }

    /// Calls `body` with entry `index`'s key, read in place from the arena (copying the entry
    /// would retain and release each of its arrays: that costs more than the scoring).
    func withKey<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        arena.withUnsafeBufferPointer { arena in
            body(UnsafeBufferPointer(rebasing: arena[Int(keyStart[index])..<Int(keyStart[index] + keyLength[index])]))
        }
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

/// The ranked hits of a ``SearchIndex`` for one-letter queries and for common two-letter ones,
/// kept once while the index is built.
final class ShortQueryHits: Sendable {
    /// How many ranked hits are kept per query.
    static let depth = 200
    /// A pair held by at least this many entries has its hits kept.
    static let commonPair = 2_000
    private let kept = Mutex<[[UInt8]: [SearchIndex.Hit]]>([:])

    func store(_ key: [UInt8], hits: [SearchIndex.Hit]) {
        kept.withLock { $0[key] = hits }
    }

    /// The hits kept for the query `key`, nil when none are.
    func hits(for key: [UInt8]) -> [SearchIndex.Hit]? {
        kept.withLock { $0[key] }
    }
}
