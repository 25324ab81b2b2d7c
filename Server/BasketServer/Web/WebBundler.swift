import Foundation

/// The web client's modules as one script: the page's module and every module it imports, in an
/// order where each comes after what it imports, each in a function of its own that returns its
/// exports. A first visit then makes one request for the code instead of twenty (on a phone with
/// bad signal each round trip costs more than its bytes, and each answer's headers are 0.4 KB),
/// and gzip sees the whole code at once.
///
/// It reads the forms of `import` and `export` this project writes, one per line (as the
/// minifier leaves them): `import { a, b as c } from "./x.js";`, `import * as x from "./x.js";`,
/// `export function`, `export async function`, `export class`, `export const`, `export let`.
/// Anything else — another form, a module it cannot find, an import cycle — is an error at start,
/// and the server serves nothing rather than a page that breaks. The modules are served one by one
/// too (the conformance tests import them so).
enum WebBundler {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The bundle of `entry` and what it imports from `modules` (name → minified source), and the
    /// names of the modules it holds (`entry` included).
    static func bundle(entry: String, modules: [String: [UInt8]]) throws(Failure) -> (code: [UInt8], names: [String]) {
        var parsed: [String: Module] = [:]
        var order: [String] = []
        var visiting: Set<String> = []
        func visit(_ name: String) throws(Failure) {
            if parsed[name] != nil { return }
            guard !visiting.contains(name) else { throw Failure(description: "\(name) is part of an import cycle") }
            guard let source = modules[name] else { throw Failure(description: "no module \(name)") }
            visiting.insert(name)
            let module = try Module(name: name, source: String(decoding: source, as: UTF8.self))
            for dependency in module.imports.map(\.from) { try visit(dependency) }
            visiting.remove(name)
            parsed[name] = module
            order.append(name)
        }
        try visit(entry)
        var out = "// Basket's web client: \(order.joined(separator: ", ")) (WebBundler).\n"
        for name in order {
            let module = parsed[name]!
            out += name == entry ? "(() => {\n" : "const \(variable(name)) = (() => {\n"
            for line in module.imports {
                out += line.destructuring + " = \(variable(line.from));\n"
            }
            out += module.body
            if !out.hasSuffix("\n") { out += "\n" }
            if name != entry { out += "return { \(module.exports.joined(separator: ", ")) };\n" }
            out += "})();\n"
        }
        return (Array(out.utf8), order)
    }

    /// The name a module's exports have in the bundle: `$m_list_screen` for list-screen.js.
    static func variable(_ module: String) -> String {
        let stem = module.hasSuffix(".js") ? String(module.dropLast(3)) : module
        return "$m_" + String(stem.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    struct Import {
        /// `const { a, b: c }` or `const x`.
        var destructuring: String
        var from: String
    }

    struct Module {
        var imports: [Import] = []
        var exports: [String] = []
        var body = ""

        init(name: String, source: String) throws(Failure) {
            for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("import ") {
                    imports.append(try Self.parseImport(line, in: name))
                } else if line.hasPrefix("export ") {
                    let rest = line.dropFirst("export ".count)
                    guard let declared = Self.declaredName(rest) else {
                        throw Failure(description: "\(name): an export the bundler does not read: \(line.prefix(80))")
                    }
                    exports.append(declared)
                    body += rest + "\n"
                } else {
                    body += line + "\n"
                }
            }
        }

        /// `import { a, b as c } from "./x.js";` or `import * as x from "./x.js";`.
        static func parseImport(_ line: Substring, in module: String) throws(Failure) -> Import {
            let failure = Failure(description: "\(module): an import the bundler does not read: \(line.prefix(80))")
            guard let fromRange = line.range(of: " from \"./"), line.hasSuffix("\";") else { throw failure }
            let from = String(line[fromRange.upperBound..<line.index(line.endIndex, offsetBy: -2)])
            guard from.hasSuffix(".js"), !from.contains("/") else { throw failure }
            let what = line[line.index(line.startIndex, offsetBy: "import ".count)..<fromRange.lowerBound]
            if what.hasPrefix("* as ") {
                let name = what.dropFirst("* as ".count)
                guard isIdentifier(name) else { throw failure }
                return Import(destructuring: "const \(name)", from: from)
            }
            guard what.hasPrefix("{"), what.hasSuffix("}") else { throw failure }
            var parts: [String] = []
            for part in what.dropFirst().dropLast().split(separator: ",") {
                let words = part.split(separator: " ")
                if words.count == 1, isIdentifier(words[0]) {
                    parts.append(String(words[0]))
                } else if words.count == 3, words[1] == "as", isIdentifier(words[0]), isIdentifier(words[2]) {
                    parts.append("\(words[0]): \(words[2])")
                } else {
                    throw failure
                }
            }
            return Import(destructuring: "const { \(parts.joined(separator: ", ")) }", from: from)
        }

        /// NAME of `function NAME`, `async function NAME`, `class NAME`, `const NAME`, `let NAME`.
        static func declaredName(_ declaration: Substring) -> String? {
            for keyword in ["async function ", "function ", "class ", "const ", "let "]
            where declaration.hasPrefix(keyword) {
                let name = declaration.dropFirst(keyword.count).prefix {
                    $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$"
                }
                return isIdentifier(name) ? String(name) : nil
            }
            return nil
        }

        static func isIdentifier(_ text: Substring) -> Bool {
            guard let first = text.first, first.isLetter || first == "_" || first == "$" else { return false }
            return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
        }
    }
}
