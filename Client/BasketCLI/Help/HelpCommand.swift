/// `basket help [COMMAND]`, and "did you mean" for a command that does not exist.
enum HelpCommand {
    static func run(_ context: Context) throws {
        let words = context.arguments.positionals
        guard !words.isEmpty else { return context.console.print(Commands.root.help) }
        let (path, command, rest) = Commands.find(words)
        guard let command, !path.isEmpty, rest.isEmpty else {
            throw UsageError(message: unknown(words.joined(separator: " ")), usage: "basket help [COMMAND]")
        }
        context.console.print(command.help)
    }

    /// "unknown command 'ad'; did you mean 'add'?" (the suggestion when one is close).
    static func unknown(_ word: String) -> String {
        "unknown command '\(word)'" + (suggestion(for: word).map { "; did you mean '\($0)'?" } ?? "")
    }

    /// The command `word` was probably meant as: the one it begins (`sta` → `status`) when only one
    /// does, else the closest by edit distance (a slip, a missing or doubled letter, two swapped):
    /// one edit for a word of up to four letters, two for a longer one. Nil when none is that close.
    static func suggestion(for word: String) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        guard !typed.isEmpty, typed.count <= 32 else { return nil }
        let commands = Completion.commandWords + ["help"]
        let prefixed = commands.filter { $0.hasPrefix(word.lowercased()) }
        if typed.count >= 2 && prefixed.count == 1 { return prefixed[0] }
        let allowed = typed.count <= 4 ? 1 : 2
        let scored = commands.map { ($0, distance(typed, Array($0.unicodeScalars))) }.filter { $0.1 <= allowed }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Edit distance with adjacent swaps (optimal string alignment) between two short words.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
