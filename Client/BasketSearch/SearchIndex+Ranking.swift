import BasketCore
import Dispatch
import Foundation

/// A query against the index: the strict tiers from the n-gram postings (or every entry), the
/// closer ones when those do not fill the limit, the best `limit` kept in rank order.
extension SearchIndex {
    /// Searches; see ``Search`` for the ranking. A query that is an item's German spelling without
    /// umlauts finds that item as exact (after an item whose own key it is).
    public func search(_ query: Query, limit: Int = .max) -> SearchResult {
        let spelled = query.hasFilters ? nil : spellings[query.key]
        let offer: String? =
            query.freeText.isEmpty || keys.contains(query.key) || spelled != nil
            ? nil : try? ItemName.clean(query.freeText)
        let key = query.key
        var kept: [Hit]?
        if key.count <= 2, query.words == [key], query.state == nil, query.category == nil, query.phrases.isEmpty,
            query.anchors.isEmpty,
            query.excluded.isEmpty, limit <= ShortQueryHits.depth
        {
            kept = shortQueryHits.hits(for: key)
        }
        var hits = kept ?? rankedHits(query, limit: limit)
        if let spelled {
            hits.removeAll { $0.entry == spelled }
            let at = hits.first?.tier == .exact ? 1 : 0
            hits.insert(Hit(entry: spelled, tier: .exact, score: 0, position: 0), at: at)
        } else {
            hits = withSoundMatches(withSpelledPrefixes(hits, query), query)
        }
        let matches = hits.prefix(limit).map { hit in
            SearchMatch(
                item: entries[Int(hit.entry)].item, isExact: hit.tier == .exact, position: Int(hit.position),
                tier: hit.tier,
                score: Int(hit.score))
        }
        return SearchResult(query: query.freeText, offer: offer, matches: Array(matches))
    }

    /// `hits` with the items whose German spelling without umlauts begins with what is typed
    /// ("kaes" for Käse, "broet" for Brötchen, "muesl" for Müsli) as prefix hits, after the exact
    /// and prefix hits there are: while a word is being typed, "ae", "oe", "ue" and "ss" find what
    /// "ä", "ö", "ü" and "ß" find. Only a query holding one of them looks, and only at the items
    /// that have a spelling, in their order.
    func withSpelledPrefixes(_ hits: [Hit], _ query: Query) -> [Hit] {
        let key = query.key
        guard !query.hasFilters, !spellings.isEmpty, Self.mayBeSpelled(key) else { return hits }
        let found = spellings.compactMap { spelling, entry in
            spelling.count > key.count && spelling.starts(with: key) ? entry : nil
        }.sorted()
        var out = hits
        for entry in found where !out.contains(where: { $0.entry == entry && $0.tier <= .prefix }) {
            out.removeAll { $0.entry == entry }
            let at = out.firstIndex { $0.tier > .prefix } ?? out.count
            out.insert(Hit(entry: entry, tier: .prefix, score: 0, position: 0), at: at)
        }
        return out
    }

    /// Whether a key holds "ae", "oe", "ue" or "ss": what a German spelling writes for an umlaut or ß.
    static func mayBeSpelled(_ key: [UInt8]) -> Bool {
        guard key.count >= 2 else { return false }
        for i in 1..<key.count {
            let (a, b) = (key[i - 1], key[i])
            if (b == UInt8(ascii: "e") && (a == UInt8(ascii: "a") || a == UInt8(ascii: "o") || a == UInt8(ascii: "u")))
                || (a == UInt8(ascii: "s") && b == UInt8(ascii: "s"))
            {
                return true
            }
        }
        return false
    }

    /// The ranked hits (at most `limit`). `usePostings: false` visits every entry and
    /// `inParallel: false` in one part (what the tests compare the usual search with).
    ///
    /// Large passes are split into parts searched on all cores at once (as fzf partitions its
    /// list); the parts are merged in order, so the result does not depend on how it was split.
    func rankedHits(_ query: Query, limit: Int, usePostings: Bool = true, inParallel: Bool = true) -> [Hit] {
        let candidates = usePostings ? postings?.candidates(query.words) : nil
        let words = query.words
        let plan = Plan(
            query: query, key: query.key, words: words, limit: limit, mask: Self.mask(words.flatMap { $0 }),
            bigrams: words.reduce(UInt64(0)) { $0 | Self.bigrams($1) })
        var hits: [Hit] = []
        // Entries that passed the letter test but matched no earlier tier, when every entry was visited.
        var fuzzyCandidates: [Int32] = []
        let split = inParallel ? 16_384 : Int.max
        let parts = inParts(candidates?.count ?? entries.count, atLeast: split) { range in
            if let candidates {
                let slice = candidates[
                    (candidates.startIndex + range.lowerBound)..<(candidates.startIndex + range.upperBound)]
                return visit(slice, plan)
            }
            return visit(Int32(range.lowerBound)..<Int32(range.upperBound), plan)
        }
        for part in parts {
            hits += part.hits
            fuzzyCandidates += part.fuzzyCandidates
        }
        // Hits of the strict tiers (exact, prefix) and of word beginnings: when they fill the
        // limit, nothing after them can be shown, and is neither scored nor looked for.
        var strict = 0
        var beginnings = 0
        for hit in hits where hit.tier.group < Tier.substring.group {
            strict += 1
            if hit.tier == .wordPrefix { beginnings += 1 }
        }
        let needCloseness = strict < limit
        if query.hasText {
            // Word beginnings: the more of the item's words they begin, the better, then in the
            // order typed. Substrings are scored on the scale of typos and fuzzy matches.
            for h in hits.indices {
                let entry = Int(hits[h].entry)
                switch hits[h].tier {
                case .wordPrefix where strict - beginnings < limit:
                    hits[h].score = Int32(wordPrefixScore(entry, words))
                case .substring where needCloseness:
                    hits[h].score += Int32(covering(entry, words))
                default: break
                }
            }
        }
        if needCloseness && words.contains(where: { EditDistance.characters($0) >= 4 }) {
            let already = Set(hits.map(\.entry))
            for (index, score) in typoMatches(words, mayWiden: hits.isEmpty)
            where !already.contains(Int32(index)) && passes(index, query) {
                hits.append(Hit(entry: Int32(index), tier: .typo, score: Int32(score), position: 0))
            }
        }
        let typoEntries = Set(hits.filter { $0.tier == .typo }.map(\.entry))
        if hits.count < limit && words.contains(where: { $0.count >= 3 }) {
            if candidates != nil {
                // Only the listed entries were visited: the fuzzy pass looks at every entry with the
                // query's letters in a possible order that is not a hit yet.
                var isHit = [Bool](repeating: false, count: entries.count)
                for hit in hits { isHit[Int(hit.entry)] = true }
                let excluded = isHit
                fuzzyCandidates = inParts(entries.count, atLeast: split) { range in
                    let found = orderedCandidates(plan.mask, words, in: range, excluding: excluded)
                    return query.hasFilters ? found.filter { passes(Int($0), query) } : found
                }.flatMap { $0 }
            }
            let fuzzyWords = FuzzyWords(words)
            let found = inParts(fuzzyCandidates.count, atLeast: inParallel ? 4_096 : Int.max) { range in
                arena.withUnsafeBufferPointer { arena in
                    fuzzyWords.bytes.withUnsafeBufferPointer { wordBytes in
                        var found: [Hit] = []
                        for index in fuzzyCandidates[range] {
                            let key = UnsafeBufferPointer(
                                start: arena.baseAddress! + Int(keyStart[Int(index)]),
                                count: Int(keyLength[Int(index)]))
                            if !typoEntries.contains(index),
                                let (score, position) = fuzzyScore(key, wordBytes, fuzzyWords.ends)
                            {
                                found.append(
                                    Hit(
                                        entry: index, tier: .fuzzy, score: Int32(score + covering(Int(index), words)),
                                        position: Int32(position)))
                            }
                        }
                        return found
                    }
                }
            }
            for part in found { hits += part }
        }
        // With no text, the list in its own order: unchecked first, then by name.
        return query.hasText
            ? topHits(hits, limit)
            : Array(
                hits.sorted {
                    let (x, y) = (Int($0.entry), Int($1.entry))
                    if checkedFlags[x] != checkedFlags[y] { return !checkedFlags[x] }
                    if entries[x].natural != entries[y].natural {
                        return entries[x].natural.lexicographicallyPrecedes(entries[y].natural)
                    }
                    return entries[x].item.id < entries[y].item.id
                }.prefix(limit))
    }

    /// What one search needs in every part of its pass.
    struct Plan {
        var query: Query
        var key: [UInt8]
        var words: [[UInt8]]
        var limit: Int
        /// The letter set and the letter-pair set of the words.
        var mask: UInt64
        var bigrams: UInt64
    }

    /// Runs `body` over `count` items: in one part on the calling thread when few, else split into
    /// one part per core run at once. The parts' hits come back in order.
    func inParts<T>(_ count: Int, atLeast minimum: Int, _ body: (Range<Int>) -> T) -> [T] {
        Self.inParts(count, atLeast: minimum, body)
    }

    /// ``inParts(_:atLeast:_:)`` before there is an index (while one is built).
    static func inParts<T>(_ count: Int, atLeast minimum: Int, _ body: (Range<Int>) -> T) -> [T] {
        let cores = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard count >= minimum, cores > 1 else { return [body(0..<count)] }
        let size = (count + cores - 1) / cores
        var results = [T?](repeating: nil, count: cores)
        results.withUnsafeMutableBufferPointer { results in
            let out = UncheckedBuffer(results)
            withoutActuallyEscaping(body) { body in
                let shared = UncheckedBody(body)
                DispatchQueue.concurrentPerform(iterations: cores) { part in
                    let range = min(count, part * size)..<min(count, (part + 1) * size)
                    out.buffer[part] = shared.body(range)
                }
            }
        }
        return results.map { $0! }
    }

    /// One part of the pass over the entries: the tier tests, best tier first.
    func visit<Indices: Sequence<Int32>>(_ indices: Indices, _ plan: Plan) -> (hits: [Hit], fuzzyCandidates: [Int32]) {
        var hits: [Hit] = []
        var fuzzyCandidates: [Int32] = []
        // Once `limit` hits exist in tiers up to `worst`, later entries only need checking up to it.
        var perTier = [Int](repeating: 0, count: Tier.allCases.count)
        var worst = Tier.substring
        func found(_ index: Int32, _ tier: Tier, _ position: Int, score: Int = 0) {
            hits.append(Hit(entry: index, tier: tier, score: Int32(score), position: Int32(position)))
            perTier[tier.rawValue] += 1
            if tier < worst {
                var total = 0
                for t in 0...tier.rawValue { total += perTier[t] }
                if total >= plan.limit { worst = tier }
            }
        }
        let query = plan.query
        let hasFilters = query.hasFilters
        let words = plan.words
        // An exact match has every letter of the query, so the letter-set test can come first.
        let test = query.hasText ? plan.mask : 0
        let queryKey = plan.key.isEmpty ? [0] : plan.key
        // Through buffer pointers: keys are borrowed in place, never copied (no reference counting).
        arena.withUnsafeBufferPointer { arenaBuffer in
            queryKey.withUnsafeBufferPointer { queryBuffer in
                entries.withUnsafeBufferPointer { entryBuffer in
                    let arenaBase = arenaBuffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                    let queryBytes = UnsafeBufferPointer(rebasing: queryBuffer[0..<plan.key.count])
                    for index in indices where masks[Int(index)] & test == test {
                        let i = Int(index)
                        if hasFilters && !passesFilters(entryBuffer.baseAddress! + i, query) { continue }
                        if !query.hasText {
                            found(index, .substring, 0)
                            continue
                        }
                        let key = UnsafeBufferPointer(start: arenaBase + Int(keyStart[i]), count: Int(keyLength[i]))
                        if key.count == queryBytes.count
                            && (key.isEmpty || memcmp(key.baseAddress!, queryBytes.baseAddress!, key.count) == 0)
                        {
                            found(index, .exact, 0)
                            continue
                        }
                        if worst == .exact { continue }
                        // Every word as typed needs its letter pairs in the key: without them only fuzzy can match.
                        if bigramMasks[i] & plan.bigrams != plan.bigrams {
                            fuzzyCandidates.append(index)
                            continue
                        }
                        if !queryBytes.isEmpty && key.count >= queryBytes.count
                            && memcmp(key.baseAddress!, queryBytes.baseAddress!, queryBytes.count) == 0
                        {
                            found(index, .prefix, 0)
                            continue
                        }
                        if worst == .prefix { continue }
                        if let position = wordPrefixPosition(key, words) {
                            found(index, .wordPrefix, position)
                            continue
                        }
                        if worst == .wordPrefix { continue }
                        let compact = UnsafeBufferPointer(
                            start: arenaBase + Int(compactStart[i]), count: Int(compactLength[i]))
                        if let (position, score) = substringMatch(key, compact, words) {
                            found(index, .substring, position, score: score)
                            continue
                        }
                        fuzzyCandidates.append(index)
                    }
                }
            }
        }
        return (hits, fuzzyCandidates)
    }

    func passes(_ index: Int, _ query: Query) -> Bool {
        entries.withUnsafeBufferPointer { passesFilters($0.baseAddress! + index, query) }
    }

    /// The tier's group, score, position, name length and checked state packed so that a smaller
    /// number ranks first; ties fall back to ``rank(_:_:)``.
    func packed(_ hit: Hit) -> UInt64 {
        let score = UInt64(max(0, min(32_767, 16_383 - Int(hit.score))))
        return UInt64(hit.tier.group) << 60 | score << 45 | UInt64(min(Self.position(hit), 0x7FFF)) << 30
            | UInt64(min(Int(nameLengths[Int(hit.entry)]), 0x7FFF)) << 15 | (checkedFlags[Int(hit.entry)] ? 1 << 14 : 0)
    }

    /// The best `limit` hits in ranking order, without sorting all of them: a bounded max-heap finds
    /// the `limit`-th smallest packed key, then every hit up to it (ties included) is ranked fully.
    func topHits(_ hits: [Hit], _ limit: Int) -> [Hit] {
        guard hits.count > limit, limit < 256 else { return hits.sorted(by: rank) }
        var heap: [UInt64] = []
        heap.reserveCapacity(limit + 1)
        for hit in hits {
            let key = packed(hit)
            if heap.count < limit {
                heap.append(key)
                var child = heap.count - 1
                while child > 0 {
                    let parent = (child - 1) / 2
                    if heap[parent] >= heap[child] { break }
                    heap.swapAt(parent, child)
                    child = parent
                }
            } else if key < heap[0] {
                heap[0] = key
                var parent = 0
                while true {
                    let left = 2 * parent + 1
                    let right = left + 1
                    var largest = parent
                    if left < heap.count && heap[left] > heap[largest] { largest = left }
                    if right < heap.count && heap[right] > heap[largest] { largest = right }
                    if largest == parent { break }
                    heap.swapAt(parent, largest)
                    parent = largest
                }
            }
        }
        let cutoff = heap[0]
        return Array(hits.filter { packed($0) <= cutoff }.sorted(by: rank).prefix(limit))
    }

    /// The ranking (see ``Search``): the tier's group; score (higher first); for prefix and
    /// word-prefix hits, the earlier match; shorter name; unchecked first; more recently added;
    /// natural order; id.
    func rank(_ a: Hit, _ b: Hit) -> Bool {
        if a.tier.group != b.tier.group { return a.tier.group < b.tier.group }
        if a.score != b.score { return a.score > b.score }
        let (p, q) = (Self.position(a), Self.position(b))
        if p != q { return p < q }
        let x = entries[Int(a.entry)]
        let y = entries[Int(b.entry)]
        if x.nameLength != y.nameLength { return x.nameLength < y.nameLength }
        if x.item.isChecked != y.item.isChecked { return !x.item.isChecked }
        if x.lastUsed != y.lastUsed { return x.lastUsed > y.lastUsed }
        if x.natural != y.natural { return x.natural.lexicographicallyPrecedes(y.natural) }
        return x.item.id < y.item.id
    }

    /// Where a hit starts, as ranking uses it: in the closeness group the score already says it.
    static func position(_ hit: Hit) -> Int { hit.tier.group == Tier.substring.group ? 0 : Int(hit.position) }

    /// The ``Closeness`` bonus for the share of the entry's letters the query words cover.
    func covering(_ index: Int, _ words: [[UInt8]]) -> Int {
        Closeness.covering(words.reduce(0) { $0 + $1.count }, of: Int(compactLength[index]))
    }

    /// The score of a word-prefix hit: twice the share (in 64ths) of the item's words that the
    /// query's words begin, plus one when they begin them in the order typed. "Myrtille
    /// Cranberry" is all of "Cranberry Myrtille" but a third of a long product that holds the
    /// two words; "heu bis" is "Heudebert biscottes" before "Biscotte Heudebert".
    func wordPrefixScore(_ index: Int, _ words: [[UInt8]]) -> Int {
        withKey(index) { key in
            var itemWords = 0
            var inWord = false
            for byte in key {
                let separator = Self.isSeparator(byte)
                if !separator && !inWord { itemWords += 1 }
                inWord = !separator
            }
            let share = 64 * min(words.count, itemWords) / max(itemWords, 1)
            var last = -1
            var inOrder = true
            for word in words {
                guard let at = wordPrefixPosition(key, [word]), at > last else {
                    inOrder = false
                    break
                }
                last = at
            }
            return 2 * share + (inOrder ? 1 : 0)
        }
    }
}

/// A buffer whose parts are written by different threads, each to its own element.
private struct UncheckedBuffer<T>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<T>
    init(_ buffer: UnsafeMutableBufferPointer<T>) { self.buffer = buffer }
}

/// A closure that only reads shared, unchanging state, called from several threads at once.
private struct UncheckedBody<T>: @unchecked Sendable {
    let body: (Range<Int>) -> T
    init(_ body: @escaping (Range<Int>) -> T) { self.body = body }
}
