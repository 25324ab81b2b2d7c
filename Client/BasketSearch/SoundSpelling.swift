/// Spellings by sound: what a shopper writes for a loanword heard rather than read ("zukini" for
/// zucchini, "schampions" for champignons, "ketschup", "kroasan"). Both sides are folded to how
/// they sound (``fold(_:)``) and compared with the search's edit distance; the search asks only
/// when nothing else is close (no hit above the fuzzy tier), so it never reorders what other
/// tiers find. The web client's sound-spelling.js, rule for rule.
enum SoundSpelling {
    /// `word` (a key's word: lower-case, accents folded) as it sounds: "tsch" → ts; "cch" → k;
    /// "sch", "ch", "sh" → s;
    /// "ph" → f; "th" → t; "gh" → g; "gn" → n; "qu" → kv; "ck" → k; c before e, i, y → s, else k;
    /// z, "ts", "tz" → s; x → ks; y → i; w → v; "oi" → oa; h dropped; doubled letters once.
    /// Bytes other than ASCII letters are kept.
    static func fold(_ word: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(word.count)
        var i = 0
        func at(_ k: Int) -> UInt8 { k < word.count ? word[k] : 0 }
        while i < word.count {
            let (c, next) = (word[i], at(i + 1))
            switch (c, next) {
            case (ascii("t"), ascii("s")) where at(i + 2) == ascii("c") && at(i + 3) == ascii("h"):
                out += [ascii("t"), ascii("s")]  // "tsch" as in "ketschup": t, then "sch"
                i += 4
                continue
            case (ascii("s"), ascii("c")) where at(i + 2) == ascii("h"):
                out.append(ascii("s"))
                i += 3
                continue
            case (ascii("c"), ascii("c")) where at(i + 2) == ascii("h"):
                out.append(ascii("k"))  // "cch" as in "zucchini"
                i += 3
                continue
            case (ascii("c"), ascii("h")), (ascii("s"), ascii("h")), (ascii("t"), ascii("s")), (ascii("t"), ascii("z")):
                out.append(ascii("s"))
            case (ascii("p"), ascii("h")): out.append(ascii("f"))
            case (ascii("t"), ascii("h")): out.append(ascii("t"))
            case (ascii("g"), ascii("h")): out.append(ascii("g"))
            case (ascii("g"), ascii("n")): out.append(ascii("n"))
            case (ascii("q"), ascii("u")): out += [ascii("k"), ascii("v")]
            case (ascii("c"), ascii("k")): out.append(ascii("k"))
            case (ascii("o"), ascii("i")): out += [ascii("o"), ascii("a")]
            default:
                switch c {
                case ascii("c"):
                    out.append(next == ascii("e") || next == ascii("i") || next == ascii("y") ? ascii("s") : ascii("k"))
                case ascii("z"): out.append(ascii("s"))
                case ascii("x"): out += [ascii("k"), ascii("s")]
                case ascii("y"): out.append(ascii("i"))
                case ascii("w"): out.append(ascii("v"))
                case ascii("h"): break
                default: out.append(c)
                }
                i += 1
                continue
            }
            i += 2
        }
        // Doubled letters once ("zukkini" → "zukini").
        var folded: [UInt8] = []
        folded.reserveCapacity(out.count)
        for byte in out where folded.last != byte || byte >= 0x80 { folded.append(byte) }
        return folded
    }

    static func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }

    /// Whether a folded word can be a word said aloud: a vowel in it (random consonants, which
    /// fold close to many names, are not).
    static func isSpoken(_ word: [UInt8]) -> Bool {
        word.contains {
            $0 == ascii("a") || $0 == ascii("e") || $0 == ascii("i") || $0 == ascii("o") || $0 == ascii("u")
        }
    }

    /// Whether every word of `query` (folded, ``fold(_:)``) sounds like a word of `key`, within the
    /// search's allowance for a slip (the last word may be a beginning).
    static func matches(_ query: [[UInt8]], key: [UInt8]) -> Bool {
        let words = key.split(whereSeparator: SearchIndex.isSeparator).map { fold(Array($0)) }
        for (n, word) in query.enumerated() {
            let limit = EditDistance.allowance(EditDistance.characters(word))
            let last = n == query.count - 1
            guard
                words.contains(where: {
                    EditDistance.distance(word, $0, limit: limit, prefix: last) != nil
                })
            else { return false }
        }
        return true
    }
}

extension SearchIndex {
    /// `hits` with the items whose words sound like the query's, as typo hits before the fuzzy
    /// ones, when nothing matched closer than fuzzy: "zukini" finds Zucchini. Only a plain query
    /// of words (no filters, phrases, anchors or exclusions) of 4 letters or more in all, each
    /// with a vowel, asks.
    func withSoundMatches(_ hits: [Hit], _ query: Query) -> [Hit] {
        guard !query.hasFilters, query.phrases.isEmpty, query.anchors.isEmpty, query.excluded.isEmpty,
            !query.words.isEmpty, query.words.reduce(0, { $0 + $1.count }) >= 4,
            !hits.contains(where: { $0.tier < .fuzzy })
        else { return hits }
        let words = query.words.map(SoundSpelling.fold)
        guard words.allSatisfy(SoundSpelling.isSpoken) else { return hits }
        var found: [Hit] = []
        for (i, entry) in entries.enumerated() where SoundSpelling.matches(words, key: entry.key) {
            found.append(Hit(entry: Int32(i), tier: .typo, score: 0, position: 0))
        }
        guard !found.isEmpty else { return hits }
        let kept = Set(found.map(\.entry))
        return found + hits.filter { !kept.contains($0.entry) }
    }
}
