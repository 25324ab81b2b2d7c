/// What the web client's scripts and style sheets lose before they are served: comments, the
/// indentation at the start of each line, spaces at the end of a line, runs of spaces and empty
/// lines. A phone's first visit moves about a third fewer bytes (the JSDoc types and the
/// explanations stay in the repository, where people read them).
///
/// Nothing else changes: every line break between two lines of code stays (so no statement runs
/// into the next; automatic semicolons fall where they fell), and strings, template literals and
/// regular expression literals are copied byte for byte. A `/` starts a regular expression where
/// a value is expected (at the start, after an operator, an opening bracket, a comma, a
/// semicolon or a keyword such as `return`), as JavaScript's grammar reads it in the code this
/// project writes; anywhere else it divides. The browser tests load every module minified.
enum WebMinifier {
    /// `source` without comments and indentation; `source` itself when it is not valid UTF-8.
    static func javaScript(_ source: [UInt8]) -> [UInt8] {
        var lexer = Lexer(source, css: false)
        return lexer.run()
    }

    /// A style sheet without comments and indentation.
    static func css(_ source: [UInt8]) -> [UInt8] {
        var lexer = Lexer(source, css: true)
        return lexer.run()
    }

    private struct Lexer {
        let input: [UInt8]
        let css: Bool
        var out: [UInt8] = []
        var i = 0
        /// The last byte of code written (not a space, not a comment): whether `/` starts a
        /// regular expression.
        var last: UInt8 = 0x3B  // ;
        /// The word that ends at `last`, when it is a keyword after which a value comes.
        var lastWordIsKeyword = false
        /// Open `{` in code inside each template literal's `${`: a `}` at depth 0 goes back to the
        /// template.
        var templateDepths: [Int] = []

        init(_ input: [UInt8], css: Bool) {
            self.input = input
            self.css = css
            out.reserveCapacity(input.count)
        }

        /// What `last` becomes after a string, a template or a regular expression: a value ended
        /// there, as after `)`, so a `/` that follows divides.
        static let valueEnded: UInt8 = 0x29

        static let keywordsBeforeValues: Set<[UInt8]> = Set(
            [
                "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else",
                "yield", "await",
            ].map { Array($0.utf8) })

        mutating func run() -> [UInt8] {
            var lineStart = true
            while i < input.count {
                let c = input[i]
                if c == 0x0A {  // \n
                    trimTrailingSpaces()
                    if !out.isEmpty && out.last != 0x0A { out.append(0x0A) }
                    lineStart = true
                    i += 1
                    continue
                }
                if c == 0x20 || c == 0x09 || c == 0x0D {
                    // Outside strings, one space does what several did.
                    if !lineStart, let end = out.last, end != 0x20 && end != 0x09 { out.append(0x20) }
                    i += 1
                    continue
                }
                lineStart = false
                if c == 0x2F, i + 1 < input.count, input[i + 1] == 0x2A {  // /*
                    blockComment()
                    continue
                }
                if !css, c == 0x2F, i + 1 < input.count, input[i + 1] == 0x2F {  // //
                    while i < input.count && input[i] != 0x0A { i += 1 }
                    continue
                }
                if c == 0x22 || c == 0x27 {  // " '
                    quoted(c)
                    continue
                }
                if !css && c == 0x60 {  // `
                    i += 1
                    out.append(c)
                    template()
                    continue
                }
                if !css && c == 0x2F && regexMayStart() {
                    regex()
                    continue
                }
                if !css && c == 0x7B {  // {
                    if let depth = templateDepths.last { templateDepths[templateDepths.count - 1] = depth + 1 }
                } else if !css && c == 0x7D, let depth = templateDepths.last {  // }
                    if depth == 0 {
                        templateDepths.removeLast()
                        out.append(c)
                        i += 1
                        template()
                        continue
                    }
                    templateDepths[templateDepths.count - 1] = depth - 1
                }
                if isWordByte(c) {
                    let start = i
                    while i < input.count && isWordByte(input[i]) { i += 1 }
                    out.append(contentsOf: input[start..<i])
                    last = input[i - 1]
                    lastWordIsKeyword = Self.keywordsBeforeValues.contains(Array(input[start..<i]))
                    continue
                }
                out.append(c)
                last = c
                lastWordIsKeyword = false
                i += 1
            }
            trimTrailingSpaces()
            return out
        }

        func isWordByte(_ c: UInt8) -> Bool {
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24
                || c >= 0x80
        }

        func regexMayStart() -> Bool {
            if lastWordIsKeyword { return true }
            if isWordByte(last) { return false }
            // After a closing bracket a value ended: `a) / 2`, `b] / 2`. After `}` a block ended.
            return last != 0x29 && last != 0x5D
        }

        mutating func trimTrailingSpaces() {
            while let end = out.last, end == 0x20 || end == 0x09 { out.removeLast() }
        }

        /// A comment: a line break when it held one (two lines stay two), else a space.
        mutating func blockComment() {
            var sawNewline = false
            i += 2
            while i < input.count && !(input[i] == 0x2A && i + 1 < input.count && input[i + 1] == 0x2F) {
                if input[i] == 0x0A { sawNewline = true }
                i += 1
            }
            i = min(i + 2, input.count)
            if sawNewline {
                trimTrailingSpaces()
                if !out.isEmpty && out.last != 0x0A { out.append(0x0A) }
                // The next line's indentation goes too.
                while i < input.count && (input[i] == 0x20 || input[i] == 0x09) { i += 1 }
            } else if let end = out.last, end != 0x20 && end != 0x0A, i < input.count,
                input[i] != 0x20 && input[i] != 0x0A
            {
                out.append(0x20)  // a/**/b stays two words
            }
        }

        /// Copies the next byte, and the one after it when the first is a backslash (an escape:
        /// nil is returned, nothing to look at).
        mutating func copy() -> UInt8? {
            let c = input[i]
            out.append(c)
            i += 1
            guard c == 0x5C, i < input.count else { return c }
            out.append(input[i])
            i += 1
            return nil
        }

        mutating func quoted(_ quote: UInt8) {
            out.append(quote)
            i += 1
            while i < input.count {
                let c = copy()
                if c == quote || c == 0x0A { break }
            }
            last = Self.valueEnded
            lastWordIsKeyword = false
        }

        /// Inside a template literal, up to its end or a `${`.
        mutating func template() {
            while i < input.count {
                let c = copy()
                if c == 0x60 {
                    last = Self.valueEnded
                    lastWordIsKeyword = false
                    return
                } else if c == 0x24, i < input.count, input[i] == 0x7B {  // ${
                    out.append(0x7B)
                    i += 1
                    templateDepths.append(0)
                    last = 0x7B
                    lastWordIsKeyword = false
                    return
                }
            }
        }

        mutating func regex() {
            var inClass = false
            out.append(input[i])
            i += 1
            while i < input.count {
                let c = copy()
                if c == 0x5B {
                    inClass = true
                } else if c == 0x5D {
                    inClass = false
                } else if (c == 0x2F && !inClass) || c == 0x0A {
                    break
                }
            }
            while i < input.count && isWordByte(input[i]) {  // flags
                out.append(input[i])
                i += 1
            }
            last = Self.valueEnded
            lastWordIsKeyword = false
        }
    }
}
