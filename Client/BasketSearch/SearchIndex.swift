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
/// hits of the one-letter queries. A search visits the entries of the shortest pair or triple
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
    let shortQueryHits = ShortQueryHits()
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

    /// `forTyping: false` skips the pair and triple lists and the one-letter hits: for one
    /// search, or to search at once while ``forTyping()`` builds them (the results are the same,
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
        if let postings { storeShortQueryHits(postings) }
    }

    /// This index with what typing needs (the pair and triple lists, the letter spans, the
    /// one- and two-letter hits), its names not folded again; itself when it has them.
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
        storeShortQueryHits(postings)
    }

    /// Keeps the hits of one letter, and of two letters whose pair is in ``ShortQueryHits/commonPair`` names or
    /// more, once and for all (a list of 1,000 items or more).
    private func storeShortQueryHits(_ postings: NGramPostings) {
        guard entries.count >= 1_000 else { return }
        let symbols = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for byte in symbols {
            shortQueryHits.store(
                [byte], hits: rankedHits(Query(String(UnicodeScalar(byte))), limit: ShortQueryHits.depth))
        }
        for a in symbols {
            for b in symbols where postings.count(pair: a, b) >= ShortQueryHits.commonPair {
                let text = String(UnicodeScalar(a)) + String(UnicodeScalar(b))
                shortQueryHits.store([a, b], hits: rankedHits(Query(text), limit: ShortQueryHits.depth))
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

}
