import Foundation
import TestServers
import TestSupport
import Testing

/// `Scripts/install.sh` into a temporary prefix (with the binaries under test), then what a
/// person gets: the programs, a man page groff reads without a warning that names every
/// command, and completions that bash really runs.
struct InstallTests {
    let root = TemporaryDirectory("install")

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func installsTheProgramsTheManPageAndCompletionsThatWork() throws {
        let prefix = root.file("prefix")
        let installed = try Executables.runShell(
            "'\(Self.repository.path)/Scripts/install.sh' '\(prefix)'",
            environment: ["BASKET_INSTALL_BINARIES": Executables.productsDirectory.path])
        #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        #expect(installed.stdout.contains("Installed basket \(Self.version)"))
        let files = [
            "bin/basket", "bin/basket-server", "share/man/man1/basket.1", "share/bash-completion/completions/basket",
            "share/zsh/site-functions/_basket", "share/fish/vendor_completions.d/basket.fish",
            "share/basket/web/index.html", "share/basket/web/app.js", "share/basket/web/sw.js",
            "share/basket/web/manifest.webmanifest",
        ]
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: "\(prefix)/\(file)")[.posixPermissions] as? Int
            #expect(
                mode == (file.hasPrefix("bin/") ? 0o755 : 0o644),
                "\(file): \(mode.map { String($0, radix: 8) } ?? "missing")")
        }

        // The man page: groff reads it without a warning, and it has every command of --help.
        let page = "\(prefix)/share/man/man1/basket.1"
        let check = try Executables.runShell("groff -man -Tutf8 -ww -z '\(page)' 2>&1")
        #expect(check.status == 0 && check.stdout.isEmpty, "\(check.stdout)")
        // (Words joined by single spaces: groff justifies lines with more.)
        let rendered = try Executables.runShell("groff -man -Tascii -P-cbou '\(page)' 2>/dev/null").stdout
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let help = try Executables.run(executable: "\(prefix)/bin/basket", ["--help"]).stdout
        let commands = help.components(separatedBy: "COMMANDS:")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n")
            .compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard line.hasPrefix("  "), let first = words.first else { return nil }
                return words.count > 1
                    && ["new", "use", "rename", "rm", "archive", "unarchive", "run"]
                        .contains(String(words[1]))
                    ? "\(first) \(words[1])" : String(first)
            }
        #expect(commands.count >= 35)
        for command in commands {
            #expect(rendered.contains("basket \(command)"), "the man page lacks basket \(command)")
        }
        #expect(!rendered.contains("__complete") && !help.contains("__complete"))
        // What a man page has: exit statuses, examples, and no page it cites that is not there.
        for section in ["EXIT STATUS", "EXAMPLES", "130 Interrupted", "Ctrl-S"] {
            #expect(rendered.contains(section), "the man page lacks \(section)")
        }
        #expect(!rendered.contains("basket-server(1)"))
        // On an 80-column terminal every line fits (the options were kept as laid out for
        // --help, 153 lines wider than that).
        let narrow = try Executables.runShell("groff -man -Tutf8 -rLL=78n -P-cbou '\(page)' 2>/dev/null").stdout
        let wide = narrow.split(separator: "\n").filter { $0.count > 80 }
        #expect(narrow.contains("basket ls") && wide.isEmpty, "lines over 80 columns:\n\(wide.joined(separator: "\n"))")
        // Every document of the source it names is there (it once cited a docs/protocol.md).
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let cited = try NSRegularExpression(pattern: "docs/[A-Za-z0-9_-]+\\.md").matches(
            in: rendered, range: NSRange(rendered.startIndex..., in: rendered)
        ).compactMap { Range($0.range, in: rendered).map { String(rendered[$0]) } }
        #expect(!cited.isEmpty)
        for document in cited {
            #expect(
                FileManager.default.fileExists(atPath: checkout.appendingPathComponent(document).path),
                "the man page cites \(document), which is not in the source")
        }

        // Bash completes commands, items (without case, quoted) and lists from the replica.
        let data = root.file("data")
        let basket = "\(prefix)/bin/basket"
        _ = try Executables.run(executable: basket, ["--db", data, "add", "Milk, Oat milk, Bread"])
        _ = try Executables.run(executable: basket, ["--db", data, "list", "new", "Hard ware"])
        _ = try Executables.run(executable: basket, ["--db", data, "list", "use", "Shopping"])
        let completion = "\(prefix)/share/bash-completion/completions/basket"
        func complete(_ words: [String]) throws -> [String] {
            let script = """
                export PATH='\(prefix)/bin':"$PATH"
                source '\(completion)'
                COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
                COMP_CWORD=\(words.count - 1)
                _basket
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try Executables.run(executable: "/bin/bash", ["-c", script])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["basket", "ch"]) == ["check", "changes"])
        #expect(try complete(["basket", "che"]) == ["check"])
        #expect(try complete(["basket", "--db", data, "list", "new", "x"]) == [])
        #expect(try complete(["basket", "--db", data, "--list", "sh"]) == ["Shopping"])
        #expect(try complete(["basket", "--db", data, "check", "o"]) == ["Oat\\ milk"])
        #expect(try complete(["basket", "--db", data, "--list", "Hard ware", "check", "o"]) == [])
        #expect(try complete(["basket", "--db", data, "rm", "M"]) == ["Milk"])
        #expect(try complete(["basket", "--db", data, "list", "use", "h"]) == ["Hard\\ ware"])
        #expect(try complete(["basket", "completion", ""]) == ["bash", "zsh", "fish"])
        #expect(try complete(["basket", "--no"]) == ["--no-sync"])
        // Each command's own options; check offers what is to buy, uncheck what is checked.
        #expect(try complete(["basket", "share", "--r"]) == ["--role"])
        #expect(try complete(["basket", "ls", "--c"]) == ["--checked"])
        #expect(try complete(["basket", "-l", "Shopping", "ls", "--f"]) == ["--flat", "--format"])
        #expect(try complete(["basket", "-l", "Shopping", "ls", "--fl"]) == ["--flat"])
        _ = try Executables.run(executable: basket, ["--db", data, "check", "Bread"])
        #expect(try complete(["basket", "--db", data, "check", ""]) == ["Milk", "Oat\\ milk"])
        #expect(try complete(["basket", "--db", data, "uncheck", ""]) == ["Bread"])
        #expect(try complete(["basket", "--db", data, "list", "rename", ""]).allSatisfy(\.isEmpty))
        #expect(try complete(["basket", "members", "role", "ann", ""]) == ["owner", "editor", "viewer"])
        #expect(try complete(["basket", "help", "li"]) == ["list", "lists"])

        // fish completes for real (`complete -C` asks it what it would offer).
        let fishScript = "\(prefix)/share/fish/vendor_completions.d/basket.fish"
        func fish(_ line: String) throws -> [String] {
            let result = try Executables.run(
                executable: "/usr/bin/fish",
                ["-c", "set -gx PATH '\(prefix)/bin' $PATH; source '\(fishScript)'; complete -C '\(line)'"])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try fish("basket --db \(data) check o") == ["Oat milk"])
        #expect(try fish("basket --db \(data) list use h") == ["Hard ware"])
        #expect(try fish("basket --db \(data) --list ") == ["Hard ware", "Shopping"])
        #expect(try fish("basket --db \(data) list a") == ["archive"])
        // Not items after list rm or list rename (fish matched 'rm' anywhere before).
        #expect(try fish("basket --db \(data) list rm ") == ["Hard ware", "Shopping"])
        #expect(try fish("basket --db \(data) list rename ") == [])
        #expect(try fish("basket --db \(data) uncheck ") == ["Bread"])
        #expect(try fish("basket share --").contains("--role"))
        // Commands come with what they do.
        let described = try Executables.run(
            executable: "/usr/bin/fish",
            ["-c", "set -gx PATH '\(prefix)/bin' $PATH; source '\(fishScript)'; complete -C 'basket ad'"]
        ).stdout
        #expect(described.contains("add\tAdd items to the list."), "\(described)")

        // zsh: the function runs with compadd standing in for the completion system, which
        // receives the candidates (zsh itself then matches them against what is typed).
        let zshScript = "\(prefix)/share/zsh/site-functions/_basket"
        func zsh(_ words: [String]) throws -> [String] {
            let script = """
                export PATH='\(prefix)/bin':"$PATH"
                compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
                compdef() { :; }
                words=(\(words.map { "'\($0)'" }.joined(separator: " ")))
                CURRENT=\(words.count)
                source '\(zshScript)'
                _basket
                """
            let result = try Executables.run(executable: "/usr/bin/zsh", ["-c", script])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try zsh(["basket", "--db", data, "check", "o"]) == ["Milk", "Oat milk"])  // Bread is checked
        #expect(try zsh(["basket", "--db", data, "list", "use", "h"]) == ["Hard ware", "Shopping"])
        #expect(try zsh(["basket", "ch"]).contains("check"))
        #expect(try zsh(["basket", "completion", ""]) == ["bash", "zsh", "fish"])
        #expect(try zsh(["basket", "--db", data, "uncheck", ""]) == ["Bread"])
        #expect(try zsh(["basket", "share", "--"]).contains("--role"))
        // Sourced after compinit, as 'source <(basket completion zsh)' does, it registers itself.
        let dump = root.file("zcompdump")
        let sourced = try Executables.run(
            executable: "/usr/bin/zsh",
            [
                "-fc",
                "autoload -Uz compinit; compinit -u -d '\(dump)'; source <('\(basket)' completion zsh); print -r -- $_comps[basket]",
            ])
        #expect(sourced.status == 0 && sourced.stdout == "_basket\n", "\(sourced.stdout) \(sourced.stderr)")

        let usage = try Executables.runShell("'\(Self.repository.path)/Scripts/install.sh' --help")
        #expect(usage.status == 64 && usage.stderr.contains("usage: Scripts/install.sh [PREFIX]"))
    }

    static var version: String {
        (try? Executables.run("basket", ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "basket ", with: "")) ?? "?"
    }
}
