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
    /// Every query word is within a few edits of a word of the item (one for a word of 4 to 7
    /// letters, two from 8; a slip in the first letter only when no word with the same first letter
    /// is close), or a prefix of one for the last word.
    case typo
    /// Every query word of 3+ letters appears in order, with gaps (scored like fzf).
    case fuzzy

    public static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }

    /// What ranks first: exact, then prefix, then word-prefix hits, each tier before the next;
    /// substrings, typos and fuzzy matches after them, together, by their ``Closeness``.
    var group: Int { min(rawValue, Tier.substring.rawValue) }

    /// The tier's name as the CLI prints it (`exact`, `prefix`, …).
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
/// Building costs one `ItemKey.normalize(_:)` per item, the letter pair and triple lists and the
/// answers to the one-letter queries. A search visits the entries of the shortest pair or triple
/// list of its words (see `NGramPostings`) with the tier tests; a fuzzy pass over every entry with
/// the query's letters when those tiers leave room under the limit; and a typo pass over the
/// distinct words when they found fewer than 3 items.
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
        /// When the item was last added (Unix ms; 0 when not known): the more recent first among equals.
        let lastUsed: UInt64
    }

    /// One hit before ranking: cheap to sort, materialised only for the results kept.
    struct Hit {
        var entry: Int32
        var tier: Tier
        var score: Int32
        var position: Int32
    }

    let entries: [Entry]
    /// Answers to one-letter queries and to the two-letter queries whose pair is common, computed
    /// with the index: the first keystrokes of a search would otherwise visit most entries.
    let shortAnswers = ShortAnswers()
    /// The first and the last position of each of a–z and 0–9 in every key (255: absent), symbol
    /// by symbol: `letterSpans[symbol * count + entry]` is a first position and
    /// `letterSpans[(36 + symbol) * count + entry]` a last one. For the fuzzy pass: a word can only
    /// be a subsequence if each of its letters occurs before the last occurrence of the next one;
    /// one pair of letters reads two contiguous rows. Empty for an index built for one search.
    let letterSpans: [UInt8]
    /// Which entries hold which letter pairs and triples (nil for an index built for one search).
    let postings: NGramPostings?
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
    /// The keys of German names written without umlauts ("gemuesebruehe" for Gemüsebrühe) → the
    /// entry: typed so, the item is found as exactly what was typed (``germanSpelling(_:)``).
    let spellings: [[UInt8]: Int32]
    /// Distinct words → entries containing them, by first byte (for the typo tier).
    let vocabulary: [UInt8: [VocabularyWord]]
    /// The same words by their second byte: where a slip in a word's first letter is looked for.
    let vocabularyBySecond: [UInt8: [VocabularyWord]]

    /// A distinct word of the items, for the typo tier.
    struct VocabularyWord: Sendable {
        let word: [UInt8]
        /// Which of a–z and 0–9 it holds: a letter of the typed word that it lacks needs an edit,
        /// which rules most words out before their distance is computed.
        let mask: UInt64
        /// The entries holding it.
        let entries: [Int32]
    }

    /// Builds an index for searching as the user types. `lastUsed` says when items were last
    /// added (Unix ms, as the replica's `addTimes(in:)` gives them): among equal matches the more
    /// recently added ranks first.
    public convenience init(items: [Item], lastUsed: [ItemID: UInt64] = [:]) {
        self.init(items: items, lastUsed: lastUsed, forTyping: true)
    }

    /// `forTyping: false` skips the pair and triple lists and the one-letter answers: for one
    /// search, or to answer at once while ``forTyping()`` builds them (the answers are the same,
    /// found by visiting every entry).
    public init(items: [Item], lastUsed: [ItemID: UInt64] = [:], forTyping: Bool) {
        var entries: [Entry] = []
        entries.reserveCapacity(items.count)
        var keys = Set<[UInt8]>()
        var words: [[UInt8]: [Int32]] = [:]
        var spellings: [[UInt8]: Int32] = [:]
        // Folding names is most of a build: on every core for a large list.
        let folded = Self.inParts(items.count, atLeast: 2_048) { range in
            range.map { i in
                (key: Array(ItemKey.normalize(items[i].name).utf8), spelling: Self.germanSpelling(items[i].name))
            }
        }.flatMap { $0 }
        for (item, fold) in zip(items, folded) {
            let key = fold.key
            keys.insert(key)
            if let spelling = fold.spelling, spellings[spelling] == nil {
                spellings[spelling] = Int32(entries.count)
            }
            let compact = key.filter { !Self.isSeparator($0) }
            let index = Int32(entries.count)
            for word in key.split(whereSeparator: Self.isSeparator) {
                words[Array(word), default: []].append(index)
            }
            entries.append(
                Entry(
                    item: item, key: key, compact: compact, mask: Self.mask(key),
                    nameLength: Int32(item.name.count), natural: NaturalOrder.key(key),
                    lastUsed: lastUsed[item.id] ?? 0))
        }
        var vocabulary: [UInt8: [VocabularyWord]] = [:]
        var vocabularyBySecond: [UInt8: [VocabularyWord]] = [:]
        for (word, list) in words {
            let entry = VocabularyWord(word: word, mask: Self.mask(word), entries: list)
            vocabulary[word[0], default: []].append(entry)
            if word.count >= 4 { vocabularyBySecond[word[1], default: []].append(entry) }
        }
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
        self.spellings = spellings
        self.vocabulary = vocabulary
        self.vocabularyBySecond = vocabularyBySecond
        let postings = forTyping ? NGramPostings(entries.map { [$0.key, $0.compact] }) : nil
        self.postings = postings
        self.letterSpans = forTyping ? Self.letterSpans(entries.map(\.key)) : []
        if let postings { storeShortAnswers(postings) }
    }

    /// This index with what typing needs (the pair and triple lists, the letter spans, the
    /// one- and two-letter answers), its names not folded again; itself when it has them.
    public func forTyping() -> SearchIndex {
        postings == nil ? SearchIndex(typing: self) : self
    }

    private init(typing other: SearchIndex) {
        entries = other.entries
        nameLengths = other.nameLengths
        masks = other.masks
        bigramMasks = other.bigramMasks
        arena = other.arena
        keyStart = other.keyStart
        keyLength = other.keyLength
        compactStart = other.compactStart
        compactLength = other.compactLength
        checkedFlags = other.checkedFlags
        keys = other.keys
        spellings = other.spellings
        vocabulary = other.vocabulary
        vocabularyBySecond = other.vocabularyBySecond
        let postings = NGramPostings(entries.map { [$0.key, $0.compact] })
        self.postings = postings
        letterSpans = Self.letterSpans(entries.map(\.key))
        storeShortAnswers(postings)
    }

    /// Answers one letter, and two letters whose pair is in ``ShortAnswers/commonPair`` names or
    /// more, once and for all (a list of 1,000 items or more).
    private func storeShortAnswers(_ postings: NGramPostings) {
        guard entries.count >= 1_000 else { return }
        let symbols = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for byte in symbols {
            shortAnswers.store([byte], hits: rankedHits(Query(String(UnicodeScalar(byte))), limit: ShortAnswers.depth))
        }
        for a in symbols {
            for b in symbols where postings.count(pair: a, b) >= ShortAnswers.commonPair {
                let text = String(UnicodeScalar(a)) + String(UnicodeScalar(b))
                shortAnswers.store([a, b], hits: rankedHits(Query(text), limit: ShortAnswers.depth))
            }
        }
    }

    /// The number of items in the index.
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

    /// The position in a letter span of an ASCII letter or digit.
    static func symbol(_ byte: UInt8) -> Int? {
        if byte >= 0x61 && byte <= 0x7A { return Int(byte - 0x61) }
        if byte >= 0x30 && byte <= 0x39 { return 26 + Int(byte - 0x30) }
        return nil
    }

    /// First and last positions of each letter and digit, symbol-major (see ``letterSpans``); a key
    /// over 254 bytes spans everything for every symbol it has, so the fuzzy filter never rejects it.
    static func letterSpans(_ keys: [[UInt8]]) -> [UInt8] {
        let count = keys.count
        var spans = [UInt8](repeating: 255, count: 72 * count)
        for (entry, key) in keys.enumerated() {
            for (position, byte) in key.enumerated() {
                guard let symbol = symbol(byte) else { continue }
                let at = key.count > 254 ? nil : UInt8(position)
                if spans[symbol * count + entry] == 255 { spans[symbol * count + entry] = at ?? 0 }
                spans[(36 + symbol) * count + entry] = at ?? 254
            }
        }
        return spans
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

    /// The key of `name` written the German way without umlauts (ä → ae, ö → oe, ü → ue, ß → ss),
    /// when that differs from its key: how "Gemüsebrühe" is typed on a keyboard without them.
    /// The web client's `germanSpelling`, pinned by the conformance vectors.
    public static func germanSpelling(_ name: String) -> [UInt8]? {
        // Most names have none of these letters, composed or not: no need to compose them.
        guard Self.mayHaveUmlaut(name) else { return nil }
        let composed = name.precomposedStringWithCanonicalMapping
        guard composed.unicodeScalars.contains(where: { "äöüÄÖÜß".unicodeScalars.contains($0) }) else { return nil }
        var spelled = ""
        for scalar in composed.unicodeScalars {
            switch scalar {
            case "ä": spelled += "ae"
            case "ö": spelled += "oe"
            case "ü": spelled += "ue"
            case "Ä": spelled += "Ae"
            case "Ö": spelled += "Oe"
            case "Ü": spelled += "Ue"
            case "ß": spelled += "ss"
            default: spelled.unicodeScalars.append(scalar)
            }
        }
        let key = Array(ItemKey.normalize(spelled).utf8)
        return key == Array(ItemKey.normalize(name).utf8) ? nil : key
    }

    /// Whether `name`'s UTF-8 holds ä, ö, ü, Ä, Ö, Ü or ß (C3 A4, B6, BC, 84, 96, 9C, 9F) or a
    /// combining diaeresis (CC 88): a byte scan, for the names that hold none (most).
    static func mayHaveUmlaut(_ name: String) -> Bool {
        var previous: UInt8 = 0
        for byte in name.utf8 {
            switch (previous, byte) {
            case (0xC3, 0xA4), (0xC3, 0xB6), (0xC3, 0xBC), (0xC3, 0x84), (0xC3, 0x96), (0xC3, 0x9C), (0xC3, 0x9F),
                (0xCC, 0x88):
                return true
            default: previous = byte
            }
        }
        return false
    }

    /// Searches; see ``Search`` for the ranking. A query that is an item's German spelling without
    /// umlauts finds that item as exact (after an item whose own key it is).
    public func search(_ query: Query, limit: Int = .max) -> SearchResult {
        let spelled = query.hasFilters ? nil : spellings[query.key]
        let offer: String? =
            query.freeText.isEmpty || keys.contains(query.key) || spelled != nil
            ? nil : try? ItemName.clean(query.freeText)
        let key = query.key
        var answer: [Hit]?
        if key.count <= 2, query.words == [key], query.state == nil, query.category == nil, query.phrases.isEmpty,
            query.anchors.isEmpty,
            query.excluded.isEmpty, limit <= ShortAnswers.depth
        {
            answer = shortAnswers.answer(key)
        }
        var hits = answer ?? rankedHits(query, limit: limit)
        if let spelled {
            hits.removeAll { $0.entry == spelled }
            let at = hits.first?.tier == .exact ? 1 : 0
            hits.insert(Hit(entry: spelled, tier: .exact, score: 0, position: 0), at: at)
        }
        let matches = hits.prefix(limit).map { hit in
            SearchMatch(
                item: entries[Int(hit.entry)].item, isExact: hit.tier == .exact, position: Int(hit.position),
                tier: hit.tier,
                score: Int(hit.score))
        }
        return SearchResult(query: query.freeText, offer: offer, matches: Array(matches))
    }

    /// The ranked hits (at most `limit`). `usePostings: false` visits every entry and
    /// `inParallel: false` in one part (what the tests compare the usual search with).
    ///
    /// Large passes are split into parts searched on all cores at once (as fzf partitions its
    /// list); the parts are merged in order, so the answer does not depend on how it was split.
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
    /// one part per core run at once. The parts' answers come back in order.
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
