public import BasketCore
import Foundation
import Synchronization

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
        /// Which of a–z and 0–9 the key contains.
        let mask: UInt64
        /// The name's length in characters and its natural-order key, for ranking without recomputing.
        let nameLength: Int32
        let natural: [UInt8]
    }

    /// One hit before ranking: cheap to sort, materialised only for the results kept.
    struct Hit {
        var entry: Int32
        var tier: Tier
        var score: Int32
        var position: Int32
    }

    let entries: [Entry]
    /// Answers to one-letter queries, computed with the index: the first keystroke of a search
    /// would otherwise visit most entries.
    let oneLetter = OneLetterAnswers()
    /// Per entry, for ranking without touching the entries.
    let nameLengths: [Int32]
    /// Per entry, the letter set: the first test of every search, on contiguous memory.
    let masks: [UInt64]
    /// Per entry, a 64-bit set of the letter pairs in its key and its separator-free key.
    let bigramMasks: [UInt64]
    /// Every key, back to back (entry i's key is `arena[keyStart[i] ..< keyStart[i] + keyLength[i]]`):
    /// the exact, prefix and substring tests read contiguous memory instead of one array per entry.
    let arena: [UInt8]
    let keyStart: [Int32]
    let keyLength: [Int32]
    /// The keys without separators, in the same arena.
    let compactStart: [Int32]
    let compactLength: [Int32]
    let checkedFlags: [Bool]
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
            let compact = key.filter { !Self.isSeparator($0) }
            let index = Int32(entries.count)
            for word in key.split(whereSeparator: Self.isSeparator) {
                words[Array(word), default: []].append(index)
            }
            entries.append(
                Entry(
                    item: item, key: key, compact: compact, mask: Self.mask(key),
                    nameLength: Int32(item.name.count), natural: NaturalOrder.key(key)))
        }
        var vocabulary: [UInt8: [(word: [UInt8], entries: [Int32])]] = [:]
        for (word, list) in words { vocabulary[word[0], default: []].append((word, list)) }
        self.nameLengths = entries.map(\.nameLength)
        self.masks = entries.map(\.mask)
        self.bigramMasks = entries.map { Self.bigrams($0.key) | Self.bigrams($0.compact) }
        var arena: [UInt8] = []
        var keyStart: [Int32] = []
        var keyLength: [Int32] = []
        var compactStart: [Int32] = []
        var compactLength: [Int32] = []
        for entry in entries {
            keyStart.append(Int32(arena.count))
            keyLength.append(Int32(entry.key.count))
            arena.append(contentsOf: entry.key)
            compactStart.append(Int32(arena.count))
            compactLength.append(Int32(entry.compact.count))
            arena.append(contentsOf: entry.compact)
        }
        self.compactStart = compactStart
        self.compactLength = compactLength
        self.arena = arena
        self.keyStart = keyStart
        self.keyLength = keyLength
        self.checkedFlags = entries.map(\.item.isChecked)
        self.entries = entries
        self.keys = keys
        self.vocabulary = vocabulary
        if entries.count >= 1_000 {
            for byte in Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8) {
                let query = Query(String(UnicodeScalar(byte)))
                let (hits, passed) = rankedHits(query, limit: OneLetterAnswers.depth, among: nil)
                oneLetter.store(byte, hits: hits, passed: passed)
            }
        }
    }

    public var count: Int { entries.count }

    static func isSeparator(_ byte: UInt8) -> Bool {
        byte < 0x80 && !(byte >= 0x30 && byte <= 0x39) && !(byte >= 0x61 && byte <= 0x7A)
            && !(byte >= 0x41 && byte <= 0x5A)
    }

    /// A 64-bit set of the adjacent byte pairs of `bytes` (a filter: a word can only occur in a key
    /// whose set holds every pair of the word).
    static func bigrams(_ bytes: [UInt8]) -> UInt64 {
        guard bytes.count >= 2 else { return 0 }
        var set: UInt64 = 0
        for i in 0..<(bytes.count - 1) {
            let pair = UInt64(bytes[i]) &* 0x9E37_79B1 ^ UInt64(bytes[i + 1]) &* 0x85EB_CA77
            set |= 1 << ((pair >> 7) & 63)
        }
        return set
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
        search(query, limit: limit, among: nil).result
    }

    /// Searches only `candidates` (entry positions; all when nil). Returns the result and the
    /// entries that passed the filters and the letter-set test: a superset of the matches of
    /// any query that extends this one (see ``SearchSession``).
    func search(_ query: Query, limit: Int, among candidates: [Int32]?) -> (result: SearchResult, passed: [Int32]) {
        let offer: String? =
            query.freeText.isEmpty || keys.contains(query.key) ? nil : try? ItemName.clean(query.freeText)
        let key = query.key
        var answer: (hits: [Hit], passed: [Int32])?
        if key.count == 1, query.words == [key], query.state == nil, query.phrases.isEmpty, query.anchors.isEmpty,
            query.excluded.isEmpty, limit <= OneLetterAnswers.depth
        {
            answer = oneLetter.answer(key[0])
        }
        let (hits, passed) = answer ?? rankedHits(query, limit: limit, among: candidates)
        let matches = hits.prefix(limit).map { hit in
            SearchMatch(
                item: entries[Int(hit.entry)].item, isExact: hit.tier == .exact, position: Int(hit.position),
                tier: hit.tier,
                score: Int(hit.score))
        }
        return (SearchResult(query: query.freeText, offer: offer, matches: Array(matches)), passed)
    }

    /// The ranked hits (at most `limit`) and the entries that passed the filters and letter test.
    func rankedHits(_ query: Query, limit: Int, among candidates: [Int32]?) -> (hits: [Hit], passed: [Int32]) {
        var hits: [Hit] = []
        var passed: [Int32] = []
        var fuzzyCandidates: [Int32] = []
        let queryKey = query.key
        let words = query.words
        let queryMask = Self.mask(words.flatMap { $0 })
        let queryBigrams = words.reduce(UInt64(0)) { $0 | Self.bigrams($1) }
        // Once `limit` hits exist in tiers up to `worst`, later entries only need checking up to it.
        var perTier = [Int](repeating: 0, count: Tier.allCases.count)
        var worst = Tier.substring
        func found(_ index: Int32, _ tier: Tier, _ position: Int, _ score: Int = 0) {
            hits.append(Hit(entry: index, tier: tier, score: Int32(score), position: Int32(position)))
            perTier[tier.rawValue] += 1
            if tier < worst {
                var total = 0
                for t in 0...tier.rawValue { total += perTier[t] }
                if total >= limit { worst = tier }
            }
        }

        // Through buffer pointers: entries are borrowed in place, never copied (no reference counting).
        let keyStarts = keyStart
        let keyLengths = keyLength
        let compactStarts = compactStart
        let compactLengths = compactLength
        let queryKeyBytes = queryKey.isEmpty ? [0] : queryKey
        arena.withUnsafeBufferPointer { arenaBuffer in
            queryKeyBytes.withUnsafeBufferPointer { queryBytesBuffer in
                let arenaBase = arenaBuffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                let queryBytes = UnsafeBufferPointer(rebasing: queryBytesBuffer[0..<queryKey.count])
                func visitEntry(_ entry: UnsafePointer<Entry>, _ index: Int32) {
                    guard passesFilters(entry, query) else { return }
                    if !query.hasText {
                        passed.append(index)
                        found(index, .substring, 0)
                        return
                    }
                    let key = UnsafeBufferPointer(
                        start: arenaBase + Int(keyStarts[Int(index)]), count: Int(keyLengths[Int(index)]))
                    if key.count == queryBytes.count
                        && (key.isEmpty || memcmp(key.baseAddress!, queryBytes.baseAddress!, key.count) == 0)
                    {
                        passed.append(index)
                        found(index, .exact, 0)
                        return
                    }
                    // (The letter-set test was made before the entry was visited.)
                    passed.append(index)
                    if worst == .exact { return }
                    // Every word as typed needs its letter pairs in the key: without them only fuzzy can match.
                    if bigramMasks[Int(index)] & queryBigrams != queryBigrams {
                        fuzzyCandidates.append(index)
                        return
                    }
                    if !queryKey.isEmpty && key.count >= queryBytes.count
                        && memcmp(key.baseAddress!, queryBytes.baseAddress!, queryBytes.count) == 0
                    {
                        found(index, .prefix, 0)
                        return
                    }
                    if worst == .prefix { return }
                    if let position = wordPrefixPosition(key, words) {
                        found(index, .wordPrefix, position)
                        return
                    }
                    if worst == .wordPrefix { return }
                    let compact = UnsafeBufferPointer(
                        start: arenaBase + Int(compactStarts[Int(index)]), count: Int(compactLengths[Int(index)]))
                    if let position = substringPosition(key, compact, words) {
                        found(index, .substring, position)
                        return
                    }
                    fuzzyCandidates.append(index)
                }
                entries.withUnsafeBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return }
                    // An exact match has every letter of the query, so the letter-set test can come first.
                    let test = query.hasText ? queryMask : 0
                    masks.withUnsafeBufferPointer { masks in
                        if let candidates {
                            for index in candidates where masks[Int(index)] & test == test {
                                visitEntry(base + Int(index), index)
                            }
                        } else {
                            for index in masks.indices where masks[index] & test == test {
                                visitEntry(base + index, Int32(index))
                            }
                        }
                    }
                    if hits.count < limit && words.contains(where: { $0.count >= 3 }) {
                        for index in fuzzyCandidates {
                            let key = UnsafeBufferPointer(
                                start: arenaBase + Int(keyStarts[Int(index)]), count: Int(keyLengths[Int(index)]))
                            if let (score, position) = fuzzyScore(key, words) {
                                found(index, .fuzzy, position, score)
                            }
                        }
                    }
                }
            }
        }
        if hits.count < 3 && !words.isEmpty {
            let already = Set(hits.map(\.entry))
            for (index, edits) in typoMatches(words) where !already.contains(Int32(index)) {
                guard entries.withUnsafeBufferPointer({ passesFilters($0.baseAddress! + index, query) }) else {
                    continue
                }
                found(Int32(index), .typo, 0, -edits)
            }
        }
        // With no text, the list in its own order: unchecked first, then by name.
        let kept =
            query.hasText
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
        return (kept, passed)
    }

    /// The tier, score, position, name length and checked state packed so that a smaller number
    /// ranks first; ties fall back to ``rank(_:_:)``.
    func packed(_ hit: Hit) -> UInt64 {
        let score = UInt64(max(0, min(32_767, 16_383 - Int(hit.score))))
        return UInt64(hit.tier.rawValue) << 60 | score << 45 | UInt64(min(Int(hit.position), 0x7FFF)) << 30
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

    /// Tier; score (higher first); earlier match; shorter name; unchecked first; natural order; id.
    func rank(_ a: Hit, _ b: Hit) -> Bool {
        if a.tier != b.tier { return a.tier < b.tier }
        if a.score != b.score { return a.score > b.score }
        if a.position != b.position { return a.position < b.position }
        let x = entries[Int(a.entry)]
        let y = entries[Int(b.entry)]
        if x.nameLength != y.nameLength { return x.nameLength < y.nameLength }
        if x.item.isChecked != y.item.isChecked { return !x.item.isChecked }
        if x.natural != y.natural { return x.natural.lexicographicallyPrecedes(y.natural) }
        return x.item.id < y.item.id
    }
}
