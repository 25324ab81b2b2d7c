import BasketCore
import BasketReplica
import Foundation

/// Shell completion and the man page, both made from the command table.
enum Completion {
    /// The commands a shell offers after `basket`: first words of every visible command.
    static var commandWords: [String] {
        var seen: [String] = []
        for spec in Commands.all where !spec.hidden && !seen.contains(spec.path[0]) { seen.append(spec.path[0]) }
        return seen
    }

    /// Commands whose argument is an item of the list, and which items each offers: `check`
    /// the ones to buy, `uncheck` the checked ones, the others every item on the list (each
    /// command's `arguments` in `Commands.all`).
    static var itemCommands: [(command: String, items: String)] {
        Commands.all.filter { $0.path.count == 1 && [.items, .uncheckedItems, .checkedItems].contains($0.arguments) }
            .map { ($0.path[0], $0.arguments.rawValue) }
    }
    /// Subcommands of `basket list` whose argument is a list.
    static var listSubcommands: [String] {
        Commands.all.filter { $0.path.count == 2 && $0.path[0] == "list" && $0.arguments == .lists }.map(\.path[1])
    }
    /// Options that take a value (a shell's completion skips the value when it finds the command).
    static var valueOptions: [String] {
        var all = Commands.globalValueOptions
        for spec in Commands.all { all.formUnion(spec.valueOptions) }
        let short = Commands.shortOptions.filter { all.contains($0.value) }.map(\.key)
        return (all.sorted() + short.sorted())
    }

    /// `basket __complete KIND`: one name per line (nothing when the replica cannot be read:
    /// completion must never print an error into a command line).
    static func names(_ context: Context) throws {
        let words = context.arguments.positionals
        switch words.first {
        case "commands": for word in commandWords { context.console.print(word) }
        case "list-subcommands":
            for spec in Commands.all where spec.path.count == 2 && spec.path[0] == "list" {
                context.console.print(spec.path[1])
            }
        case "items", "checked-items", "unchecked-items":
            let filter: ItemFilter =
                words[0] == "checked-items" ? .checked : words[0] == "unchecked-items" ? .unchecked : .onList
            guard let list = try? context.list(create: false),
                let items = try? context.replica().items(in: list.id, filter: filter)
            else { return }
            for item in items { context.console.print(item.name) }
        case "lists":
            for list in (try? context.replica().lists()) ?? [] { context.console.print(list.title) }
        case "members":
            // The server is asked, for two seconds at most: a completion that hangs is worse than none.
            guard let list = try? context.list(create: false),
                let (transport, _) = try? context.transport(answerTimeout: 2)
            else { return }
            let id = list.id
            for member in (try? runBlocking { try await transport.members(of: id) }) ?? [] {
                context.console.print(member.account)
            }
        case "options":
            // The options of the command named after it (`options list rm`), and the global ones.
            let (path, spec, _) = Commands.find(Array(words.dropFirst()))
            var options = Commands.globalValueOptions.union(Commands.globalFlagOptions)
            if let spec, !path.isEmpty { options.formUnion(spec.valueOptions.union(spec.flagOptions)) }
            for option in options.sorted() where option != "--version" || spec == nil {
                context.console.print(option)
            }
        default:
            throw UsageError(
                message: "complete commands, items, checked-items, unchecked-items, lists, members or options",
                usage: "basket __complete KIND")
        }
    }

    static func script(_ context: Context) throws {
        switch context.arguments.positionals.first {
        case "bash": context.console.print(bash)
        case "zsh": context.console.print(zsh)
        case "fish": context.console.print(fish)
        default:
            throw UsageError(message: "name the shell: bash, zsh or fish", usage: "basket completion bash|zsh|fish")
        }
    }

    /// The shell `case` arms that offer items: `check) kind=unchecked-items ;;` and so on.
    static func itemCases(open: String = "", close: String = ")") -> String {
        itemCommands.map { "\(open)\($0.command)\(close) kind=\($0.items) ;;" }.joined(separator: "\n                ")
    }

    static var bash: String {
        """
        # bash completion for basket (basket completion bash)
        # Offers the names that start with what is typed, without case, quoted for the shell.
        _basket_offer() {
            local cur=$1 name quoted
            while IFS= read -r name; do
                if [[ ${name,,} == "${cur,,}"* ]]; then
                    printf -v quoted '%q' "$name"
                    COMPREPLY+=("$quoted")
                fi
            done
        }
        _basket() {
            local cur=${COMP_WORDS[COMP_CWORD]} cmd="" sub="" arg="" kind="" i
            local -a db=()
            COMPREPLY=()
            for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                    --db) db=(--db "${COMP_WORDS[i + 1]}"); ((i++)) ;;
                    --list|-l) db+=(--list "${COMP_WORDS[i + 1]}"); ((i++)) ;;
                    \(valueOptions.filter { $0 != "--db" && $0 != "--list" && $0 != "-l" }.joined(separator: "|"))) ((i++)) ;;
                    -*) ;;
                    *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then sub=${COMP_WORDS[i]}; elif [[ -z $arg ]]; then arg=${COMP_WORDS[i]}; fi ;;
                esac
            done
            if [[ ${COMP_WORDS[COMP_CWORD - 1]} == @(--list|-l) ]]; then
                _basket_offer "$cur" < <(basket "${db[@]:0:2}" __complete lists 2>/dev/null)
            elif [[ $cur == -* ]]; then
                _basket_offer "$cur" < <(basket __complete options $cmd $sub 2>/dev/null)
            elif [[ -z $cmd ]]; then
                _basket_offer "$cur" < <(basket __complete commands 2>/dev/null)
            else
                case $cmd in
                    \(itemCases())
                    list)
                        if [[ -z $sub ]]; then
                            _basket_offer "$cur" < <(basket __complete list-subcommands 2>/dev/null)
                        elif [[ -z $arg && $sub == @(\(listSubcommands.joined(separator: "|"))) ]]; then
                            _basket_offer "$cur" < <(basket "${db[@]}" __complete lists 2>/dev/null)
                        fi ;;
                    members)
                        if [[ -z $sub ]]; then
                            _basket_offer "$cur" < <(printf '%s\\n' rm role)
                        elif [[ -z $arg && $sub == @(rm|role) ]]; then
                            _basket_offer "$cur" < <(basket "${db[@]}" __complete members 2>/dev/null)
                        elif [[ $sub == role ]]; then
                            _basket_offer "$cur" < <(printf '%s\\n' owner editor viewer)
                        fi ;;
                    completion|help) [[ -z $sub ]] && _basket_offer "$cur" < <(if [[ $cmd == help ]]; then basket __complete commands; else printf '%s\\n' bash zsh fish; fi 2>/dev/null) ;;
                esac
                if [[ -n $kind ]]; then
                    _basket_offer "$cur" < <(basket "${db[@]}" __complete $kind 2>/dev/null)
                fi
            fi
        }
        complete -F _basket basket
        """
    }

    static var zsh: String {
        """
        #compdef basket
        # zsh completion for basket (basket completion zsh): in $fpath as _basket, or
        # 'source <(basket completion zsh)' after compinit.
        _basket() {
            local -a db rest
            local i kind
            for ((i = 2; i < CURRENT; i++)); do
                case ${words[i]} in
                    (--db|--list|-l) db+=(--${${words[i]#--}/#-l/list} ${words[i + 1]}); ((i++)) ;;
                    (\(valueOptions.filter { $0 != "--db" && $0 != "--list" && $0 != "-l" }.joined(separator: "|")))) ((i++)) ;;
                    (-*) ;;
                    (*) rest+=(${words[i]}) ;;
                esac
            done
            if [[ ${words[CURRENT-1]} == (--list|-l) ]]; then
                compadd -- ${(f)"$(basket ${db[1,2]} __complete lists 2>/dev/null)"}
            elif [[ ${words[CURRENT]} == -* ]]; then
                compadd -- ${(f)"$(basket __complete options ${rest[1,2]} 2>/dev/null)"}
            elif (( ${#rest} == 0 )); then
                compadd -- ${(f)"$(basket __complete commands 2>/dev/null)"}
            else
                case ${rest[1]} in
                    \(itemCases(open: "(", close: ")"))
                    (list)
                        if (( ${#rest} == 1 )); then
                            compadd -- ${(f)"$(basket __complete list-subcommands 2>/dev/null)"}
                        elif (( ${#rest} == 2 )) && [[ ${rest[2]} == (\(listSubcommands.joined(separator: "|"))) ]]; then
                            compadd -- ${(f)"$(basket $db __complete lists 2>/dev/null)"}
                        fi ;;
                    (members)
                        if (( ${#rest} == 1 )); then
                            compadd -- rm role
                        elif (( ${#rest} == 2 )) && [[ ${rest[2]} == (rm|role) ]]; then
                            compadd -- ${(f)"$(basket $db __complete members 2>/dev/null)"}
                        elif (( ${#rest} == 3 )) && [[ ${rest[2]} == role ]]; then
                            compadd -- owner editor viewer
                        fi ;;
                    (completion) (( ${#rest} == 1 )) && compadd -- bash zsh fish ;;
                    (help) (( ${#rest} == 1 )) && compadd -- ${(f)"$(basket __complete commands 2>/dev/null)"} ;;
                esac
                if [[ -n $kind ]]; then
                    compadd -- ${(f)"$(basket $db __complete $kind 2>/dev/null)"}
                fi
            fi
        }
        # Autoloaded from $fpath, this file is _basket's body: complete. Sourced, register it.
        if [[ ${funcstack[1]} == _basket ]]; then
            _basket "$@"
        else
            compdef _basket basket
        fi
        """
    }

    /// A command's options and what each does, as declared: (long, short, takes a value, the
    /// first sentence of its help).
    static func options(of spec: CommandSpec) -> [(long: String, short: String?, value: Bool, about: String)] {
        spec.options.sorted { $0.name < $1.name }.map { ($0.name, $0.short, $0.value != nil, $0.summary) }
    }

    /// fish's single-quoted text.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    static var fish: String {
        var lines: [String] = []
        // Each command and list subcommand with its summary.
        var seen: Set<String> = []
        for spec in Commands.all where !spec.hidden && seen.insert(spec.path[0]).inserted {
            let summary = spec.path.count == 1 ? spec.summary : "Manage lists."
            lines.append("complete -c basket -n '__basket_is' -a \(spec.path[0]) -d \(fishQuoted(summary))")
        }
        for spec in Commands.all where spec.path.count == 2 && spec.path[0] == "list" {
            lines.append("complete -c basket -n '__basket_is list' -a \(spec.path[1]) -d \(fishQuoted(spec.summary))")
        }
        for (command, kind) in itemCommands {
            lines.append("complete -c basket -n '__basket_starts \(command)' -a '(__basket_complete \(kind))'")
        }
        for sub in listSubcommands {
            lines.append("complete -c basket -n '__basket_is list \(sub)' -a '(__basket_complete lists)'")
        }
        // Each command's own options, where that command is typed.
        for spec in Commands.all where !spec.hidden {
            for option in options(of: spec) {
                var line =
                    "complete -c basket -n '__basket_starts \(spec.path.joined(separator: " "))' -l \(option.long.dropFirst(2))"
                if let short = option.short { line += " -s \(short.dropFirst())" }
                if option.value { line += " -r" }
                if !option.about.isEmpty { line += " -d \(fishQuoted(option.about))" }
                lines.append(line)
            }
        }
        return """
            # fish completion for basket (basket completion fish)
            # The words typed after basket, without options and their values.
            function __basket_args
                set -l tokens (commandline -opc)
                set -l skip 0
                for token in $tokens[2..-1]
                    if test $skip = 1
                        set skip 0
                        continue
                    end
                    if contains -- $token \(valueOptions.joined(separator: " "))
                        set skip 1
                    else if not string match -q -- '-*' $token
                        echo $token
                    end
                end
            end
            # Whether the words typed are exactly these (no words: none typed yet).
            function __basket_is
                test "$(__basket_args | string join ' ')" = "$argv"
            end
            # Whether the words typed begin with these.
            function __basket_starts
                set -l typed (__basket_args)
                test (count $typed) -ge (count $argv); or return 1
                for i in (seq (count $argv))
                    test "$typed[$i]" = "$argv[$i]"; or return 1
                end
            end
            # Names from the replica the command line names (--db, --list), like basket itself.
            function __basket_complete
                set -l tokens (commandline -opc)
                set -l options
                for i in (seq 2 (count $tokens))
                    if contains -- $tokens[$i] --db --list -l; and test $i -lt (count $tokens)
                        set options $options $tokens[$i] $tokens[(math $i + 1)]
                    end
                end
                basket $options __complete $argv 2>/dev/null
            end
            complete -c basket -f
            \(lines.joined(separator: "\n"))
            complete -c basket -n '__basket_is members' -a 'rm role'
            complete -c basket -n '__basket_is members rm; or __basket_is members role' -a '(__basket_complete members)'
            complete -c basket -n '__basket_starts members role; and test (count (__basket_args)) -eq 3' -a 'owner editor viewer'
            complete -c basket -n '__basket_is completion' -a 'bash zsh fish'
            complete -c basket -n '__basket_is help' -a '(__basket_complete commands)'
            complete -c basket -s l -l list -x -a '(__basket_complete lists)' -d 'Work on this list'
            complete -c basket -l db -r -F -d 'The replica'
            complete -c basket -l json -d 'Print data as JSON'
            complete -c basket -l no-sync -d 'Keep the changes here for now'
            complete -c basket -s q -l quiet -d 'No report of what was done'
            complete -c basket -s h -l help -d 'Show help'
            """
    }

    /// `basket __man`: the man page, from the same table as `--help`.
    static func manPage(_ context: Context) throws {
        var page = """
            .TH BASKET 1 "" "basket \(BasketCLI.version)" "User Commands"
            .SH NAME
            basket \\- an offline-first shared shopping list
            .SH SYNOPSIS
            .B basket
            [\\fB\\-\\-db\\fR \\fIPATH\\fR] [\\fB\\-\\-list\\fR \\fINAME\\fR] [\\fB\\-\\-json\\fR] [\\fICOMMAND\\fR [\\fIARGS\\fR]]
            .SH DESCRIPTION

            """
        page += roff(Commands.root.details.components(separatedBy: "COMMANDS:")[0])
        page += "\n.SH COMMANDS\n"
        for spec in Commands.all where !spec.hidden {
            page += ".TP\n.B \(roffLine(spec.usage))\n\(roffLine(spec.summary))\n"
            if !spec.body.isEmpty { page += ".RS\n\(roffDetails(spec.body)).RE\n" }
        }
        page += ".SH OPTIONS\n\(roffDetails(CommandSpec.globalHelp))"
        page += """
            .SH FILES
            .TP
            .I $BASKET_HOME/basket.sqlite
            The replica (default ~/.local/share/basket/basket.sqlite), mode 0600.
            .TP
            .I config.json
            Next to the replica: the server, the account and its token, mode 0600.
            .SH EXIT STATUS
            .TP
            .B 0
            Done.
            .TP
            .B 1
            Failed (the message says why and whether anything changed); also a search that found
            nothing, as grep, and a sync that left changes the server refused.
            .TP
            .B 64
            A usage error: an unknown command or option, a missing argument.
            .TP
            .B 130
            Interrupted: Ctrl-C in the interactive mode.
            .SH EXAMPLES
            .nf
            basket add milk, 2 bread, eggs    # three items; 2 is bread's quantity
            basket check milk bread           # cross two off
            basket                            # the interactive search (Esc leaves)
            basket remote set https://basket.example.org
            basket signup alice               # asks the password twice
            basket share \\-\\-role editor \\-\\-uses 3   # a code for three people
            basket join CODE                  # on another device
            basket sync \\-\\-watch                # follow the list live
            basket ls \\-\\-plain \\-u | fzf | basket check \\-   # pick what to cross off
            basket search yog >/dev/null || basket add yoghurt   # 1 when none
            .fi
            .SH SEE ALSO
            The server, basket\\-server, has its own \\-\\-help. README.md and docs/ in the source:
            docs/conflicts.md (how changes merge), docs/api.md (the HTTP API), docs/deploy.md.

            """
        context.console.print(page)
    }

    /// A command's help details as man(7) lays them out, filled to the reader's width (they were
    /// laid out for `--help`, 100 columns and more, and a man page kept them so): a heading
    /// ("OPTIONS:") in bold, each option or argument ("  --at TIME   The list as…", its
    /// description continued on lines indented further) a tagged paragraph, prose a paragraph.
    static func roffDetails(_ text: String) -> String {
        var out = ""
        var inProse = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = String(raw)
            let indent = line.prefix { $0 == " " }.count
            let body = line.trimmingCharacters(in: .whitespaces)
            if indent == 0 && body.hasSuffix(":") && body.allSatisfy({ $0.isUppercase || $0 == " " || $0 == ":" }) {
                out += ".PP\n.B \(roffLine(String(body.dropLast())))\n"
                inProse = false
            } else if indent > 0 && indent <= 4, let gap = body.range(of: "  ") {
                // "  TERM  description": the term up to the first run of two spaces.
                let term = String(body[..<gap.lowerBound])
                let description = body[gap.upperBound...].trimmingCharacters(in: .whitespaces)
                out += ".TP\n.B \(roffLine(term))\n\(roffLine(description))\n"
                inProse = false
            } else if indent > 0 {
                // A description going on, or an indented line of its own (an example).
                out += roffLine(body) + "\n"
            } else {
                if !inProse { out += ".PP\n" }
                out += roffLine(body) + "\n"
                inProse = true
            }
        }
        return out
    }

    /// Text as roff shows it: backslashes escaped, no line taken for a request.
    static func roff(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { roffLine(String($0)) }
            .joined(separator: "\n")
    }

    /// One line for roff: backslashes and dashes escaped, other characters than ASCII as
    /// `\[uXXXX]` (groff reads ASCII), a leading dot or quote kept from being a request.
    static func roffLine(_ line: String) -> String {
        var escaped = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.value > 0x7E:
                escaped += "\\[u" + String(format: "%04X", scalar.value) + "]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}
