/// How far a typed word is from a word of an item, counted in characters (Unicode scalars, so a
/// slip in a Japanese or Russian word is one edit, not two or three bytes) and weighed by how
/// people slip on a keyboard.
///
/// Costs, in units where an ordinary edit is ``edit``:
/// - a letter replaced by one on a neighbouring key (QWERTY, AZERTY or QWERTZ): 3;
/// - two neighbouring letters swapped: 3;
/// - a doubled letter typed once or a single one typed twice ("piza", "mattee"): 2;
/// - any other letter added, missing or replaced: 4.
enum EditDistance {
    /// The cost of an ordinary edit.
    static let edit = 4
    static let neighbour = 3
    static let transposition = 3
    static let doubled = 2
    /// Words longer than this (in characters) are not compared: no grocery word is, and the
    /// distance's rows live on the stack.
    static let maximumLength = 48

    /// The cost a word of `length` characters may be away from a word of an item: nothing below 4
    /// characters (too many short words are one slip apart), one edit to 5, one and a half at 6,
    /// two from 7 ("gsrenle" is "garnele" with a neighbour key and a swap).
    static func allowance(_ length: Int) -> Int {
        length >= 7 ? 2 * edit : length == 6 ? 6 : length >= 4 ? edit : 0
    }

    /// The scalars of UTF-8 `bytes` (keys are valid UTF-8) into `out`; returns how many, or nil
    /// when there are more than `out` holds.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt32>) -> Int? {
        var count = 0
        var i = 0
        while i < bytes.count {
            guard count < out.count else { return nil }
            let lead = bytes[i]
            var scalar = UInt32(lead)
            var extra = 0
            if lead >= 0xF0 {
                scalar &= 0x07
                extra = 3
            } else if lead >= 0xE0 {
                scalar &= 0x0F
                extra = 2
            } else if lead >= 0xC0 {
                scalar &= 0x1F
                extra = 1
            }
            i += 1
            for _ in 0..<extra where i < bytes.count {
                scalar = scalar << 6 | UInt32(bytes[i] & 0x3F)
                i += 1
            }
            out[count] = scalar
            count += 1
        }
        return count
    }

    /// The number of characters of UTF-8 `bytes`.
    static func characters(_ bytes: some Collection<UInt8>) -> Int {
        bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }

    /// The weighted optimal-string-alignment distance from the typed word `a` to `b` (both UTF-8),
    /// or nil when above `limit`. With `prefix`, the distance to the closest beginning of `b`
    /// (the last word typed may be unfinished).
    static func distance(_ a: [UInt8], _ b: [UInt8], limit: Int, prefix: Bool = false) -> Int? {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 2 * maximumLength) { scalars in
            let (left, right) = (
                UnsafeMutableBufferPointer(rebasing: scalars[0..<maximumLength]),
                UnsafeMutableBufferPointer(rebasing: scalars[maximumLength...])
            )
            guard let n = a.withUnsafeBufferPointer({ decode($0, into: left) }),
                var m = b.withUnsafeBufferPointer({ decode($0, into: right) })
            else { return nil }
            // A beginning of `b` longer than this costs more than `limit` in added letters alone.
            if prefix { m = min(m, n + limit / doubled) }
            return distance(
                UnsafeBufferPointer(rebasing: left[0..<n]), UnsafeBufferPointer(rebasing: right[0..<m]), limit: limit,
                prefix: prefix)
        }
    }

    static func distance(
        _ a: UnsafeBufferPointer<UInt32>, _ b: UnsafeBufferPointer<UInt32>, limit: Int, prefix: Bool
    ) -> Int? {
        let (n, m) = (a.count, b.count)
        guard n > 0, m > 0 else { return nil }
        if !prefix && abs(n - m) * doubled > limit { return nil }
        let width = m + 1
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * width) { rows in
            // Rows i-2, i-1 and i of the table, rotating.
            var (before, previous, current) = (0, width, 2 * width)
            for j in 0...m { rows[previous + j] = j == 0 ? 0 : rows[previous + j - 1] + insertCost(b, j - 1) }
            for i in 1...n {
                rows[current] = rows[previous] + deleteCost(a, i - 1)
                var rowMin = rows[current]
                for j in 1...m {
                    let x = a[i - 1]
                    let y = b[j - 1]
                    let substitution = x == y ? 0 : areNeighbours(x, y) ? neighbour : edit
                    var value = min(
                        rows[previous + j] + deleteCost(a, i - 1), rows[current + j - 1] + insertCost(b, j - 1),
                        rows[previous + j - 1] + substitution)
                    if i > 1 && j > 1 && x == b[j - 2] && a[i - 2] == y && x != y {
                        value = min(value, rows[before + j - 2] + transposition)
                    }
                    rows[current + j] = value
                    rowMin = min(rowMin, value)
                }
                if rowMin > limit { return nil }
                (before, previous, current) = (previous, current, before)
            }
            // `previous` now holds the last row: the whole of `a` against each beginning of `b`.
            var best = rows[previous + m]
            if prefix { for j in 0..<m { best = min(best, rows[previous + j]) } }
            return best <= limit ? best : nil
        }
    }

    /// Typing `word[at]` once too many: cheap when it doubles its neighbour.
    static func deleteCost(_ word: UnsafeBufferPointer<UInt32>, _ at: Int) -> Int {
        (at > 0 && word[at - 1] == word[at]) || (at + 1 < word.count && word[at + 1] == word[at]) ? doubled : edit
    }

    /// Missing `word[at]`: cheap when it is one of a doubled pair.
    static func insertCost(_ word: UnsafeBufferPointer<UInt32>, _ at: Int) -> Int {
        deleteCost(word, at)
    }

    /// Whether two lowercase letters are neighbouring keys on a QWERTY, AZERTY or QWERTZ keyboard.
    static func areNeighbours(_ a: UInt32, _ b: UInt32) -> Bool {
        guard a >= 0x61, a <= 0x7A, b >= 0x61, b <= 0x7A else { return false }
        return neighbourTable[Int(a - 0x61)] & (1 << (b - 0x61)) != 0
    }

    /// Per letter a–z, the set of letters next to it on any of the three layouts (same row, and
    /// the keys touching it in the rows above and below).
    static let neighbourTable: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 26)
        let layouts = [
            ["qwertyuiop", "asdfghjkl", "zxcvbnm"],
            ["azertyuiop", "qsdfghjklm", "wxcvbn"],
            ["qwertzuiop", "asdfghjkl", "yxcvbnm"],
        ]
        for rows in layouts.map({ $0.map { Array($0.utf8) } }) {
            for (r, row) in rows.enumerated() {
                for (c, key) in row.enumerated() {
                    var near: [UInt8] = []
                    if c > 0 { near.append(row[c - 1]) }
                    if c + 1 < row.count { near.append(row[c + 1]) }
                    // A key touches two keys of the row above (same index and one right, as rows
                    // are staggered) and two of the row below (one left and same index).
                    if r > 0 {
                        for cc in [c, c + 1] where cc < rows[r - 1].count { near.append(rows[r - 1][cc]) }
                    }
                    if r + 1 < rows.count {
                        for cc in [c - 1, c] where cc >= 0 && cc < rows[r + 1].count { near.append(rows[r + 1][cc]) }
                    }
                    for other in near { table[Int(key - 0x61)] |= 1 << UInt32(other - 0x61) }
                }
            }
        }
        return table
    }()
}
