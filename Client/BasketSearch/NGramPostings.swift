/// Which entries contain which letter pairs and triples: the candidates of the exact, prefix,
/// word-prefix and substring tiers without visiting every entry.
///
/// An entry matches those tiers only if every query word occurs in its key or its separator-free
/// key, so it contains every pair and triple of bytes of every word. The posting list of the
/// rarest of them is a superset of the matches, usually a small one: a keystroke visits the
/// entries of one list instead of all of them. Pairs are indexed exactly (65,536 lists); triples
/// by a hash into 2^17 lists, where a collision only adds candidates that the tier tests reject.
struct NGramPostings: Sendable {
    static let pairBuckets = 1 << 16
    static let tripleBuckets = 1 << 17

    /// Lists of pairs first, then of triples: entries of list b are `entries[offsets[b] ..< offsets[b + 1]]`.
    private let offsets: [Int32]
    private let entries: [Int32]

    static func pair(_ a: UInt8, _ b: UInt8) -> Int { Int(a) << 8 | Int(b) }

    static func triple(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int {
        let mixed = (UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)) &* 0x9E37_79B1
        return pairBuckets + Int(mixed >> 15)
    }

    /// Builds the lists from each entry's byte strings (its key and its separator-free key).
    init(_ texts: [[[UInt8]]]) {
        // Per entry, its distinct buckets; then a counting sort into one array.
        var perEntry: [Int32] = []
        var perEntryStart: [Int] = [0]
        perEntry.reserveCapacity(texts.count * 48)
        var buckets: [Int32] = []
        for strings in texts {
            buckets.removeAll(keepingCapacity: true)
            for bytes in strings where bytes.count >= 2 {
                for i in 0..<(bytes.count - 1) {
                    buckets.append(Int32(Self.pair(bytes[i], bytes[i + 1])))
                    if i + 2 < bytes.count { buckets.append(Int32(Self.triple(bytes[i], bytes[i + 1], bytes[i + 2]))) }
                }
            }
            buckets.sort()
            var last: Int32 = -1
            for bucket in buckets where bucket != last {
                perEntry.append(bucket)
                last = bucket
            }
            perEntryStart.append(perEntry.count)
        }
        let total = Self.pairBuckets + Self.tripleBuckets
        var counts = [Int32](repeating: 0, count: total + 1)
        for bucket in perEntry { counts[Int(bucket) + 1] += 1 }
        for b in 0..<total { counts[b + 1] += counts[b] }
        var next = counts
        var entries = [Int32](repeating: 0, count: perEntry.count)
        for entry in 0..<texts.count {
            for k in perEntryStart[entry]..<perEntryStart[entry + 1] {
                let bucket = Int(perEntry[k])
                entries[Int(next[bucket])] = Int32(entry)
                next[bucket] += 1
            }
        }
        self.offsets = counts
        self.entries = entries
    }

    /// How many entries hold the pair `a b`.
    func count(pair a: UInt8, _ b: UInt8) -> Int { range(Self.pair(a, b)).count }

    private func range(_ bucket: Int) -> Range<Int> { Int(offsets[bucket])..<Int(offsets[bucket + 1]) }

    /// The shortest list that every match of `words` must be in, or nil when no word has two
    /// bytes (then there is nothing to narrow by). Entries are in ascending order.
    func candidates(_ words: [[UInt8]]) -> ArraySlice<Int32>? {
        var best: Range<Int>?
        for word in words where word.count >= 2 {
            for i in 0..<(word.count - 1) {
                let bucket =
                    word.count >= 3
                    ? (i + 2 < word.count ? Self.triple(word[i], word[i + 1], word[i + 2]) : nil)
                    : Self.pair(word[i], word[i + 1])
                guard let bucket else { continue }
                let list = range(bucket)
                if best == nil || list.count < best!.count { best = list }
            }
        }
        return best.map { entries[$0] }
    }
}
