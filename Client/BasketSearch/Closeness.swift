/// One scale for the matches that are not word beginnings: substrings, typos and fuzzy
/// subsequences are ranked together by how much of what was typed they explain and how well.
///
/// Per query word: 16 a letter (byte), 6 for each letter right after the previous one, 8 when
/// the match starts a word of the item and 8 more when it is the whole word; a fuzzy match loses
/// up to 6 per gap; a slip costs 6 per unit of ``EditDistance`` (an ordinary edit: 24, a doubled
/// letter: 12); a substring found only once separators are removed ("cocacola") loses 8. Then
/// the name: up to 64 for the share of the item's letters the query covers, so a whole short name
/// with a slip ("choclate" → "Chocolate") beats the same letters spread over a long description.
enum Closeness {
    static let letter = 16
    static let consecutive = 6
    static let wordStart = 8
    static let wholeWord = 8
    static let perCostUnit = 6
    static let acrossSeparators = 8
    static let coverage = 64

    /// A query word of `length` bytes matched in one piece, `cost` units of slips away.
    static func word(_ length: Int, cost: Int, start: Bool, whole: Bool) -> Int {
        letter * length + consecutive * max(0, length - 1) + (start ? wordStart : 0) + (whole ? wholeWord : 0)
            - perCostUnit * cost
    }

    /// The bonus for covering `matched` of an item's `letters` (letters and digits, in bytes).
    static func covering(_ matched: Int, of letters: Int) -> Int {
        letters <= 0 ? coverage : coverage * min(matched, letters) / letters
    }
}
