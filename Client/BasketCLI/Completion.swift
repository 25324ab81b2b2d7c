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

    /// Commands whose argument is an item of the list.
    static let itemCommands = ["check", "uncheck", "toggle", "rm", "rename", "set", "history"]
    /// Subcommands of `basket list` whose argument is a list.
    static let listSubcommands = ["use", "rm", "archive", "unarchive"]

    /// `basket __complete commands|items|lists`: one name per line (nothing when the replica
    /// cannot be read: completion must never print an error into a command line).
    static func names(_ context: Context) throws {
        switch context.arguments.positionals.first {
        case "commands": for word in commandWords { context.console.print(word) }
        case "list-subcommands":
            for spec in Commands.all where spec.path.count == 2 && spec.path[0] == "list" {
                context.console.print(spec.path[1])
            }
        case "items":
            guard let list = try? context.list(create: false),
                let items = try? context.replica().items(in: list.id)
            else { return }
            for item in items { context.console.print(item.name) }
        case "lists":
            for list in (try? context.replica().lists()) ?? [] { context.console.print(list.title) }
        default:
            throw UsageError(
                message: "complete commands, items or lists", usage: "basket __complete commands|items|lists")
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
            local cur=${COMP_WORDS[COMP_CWORD]} cmd="" sub="" i
            local -a db=()
            COMPREPLY=()
            for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                    --db) db=(--db "${COMP_WORDS[i + 1]}"); ((i++)) ;;
                    --list) db+=(--list "${COMP_WORDS[i + 1]}"); ((i++)) ;;
                    -*) ;;
                    *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then sub=${COMP_WORDS[i]}; fi ;;
                esac
            done
            if [[ ${COMP_WORDS[COMP_CWORD - 1]} == --list ]]; then
                _basket_offer "$cur" < <(basket "${db[@]:0:2}" __complete lists 2>/dev/null)
            elif [[ $cur == -* ]]; then
                _basket_offer "$cur" < <(printf '%s\n' --db --list --json --no-sync --help)
            elif [[ -z $cmd ]]; then
                _basket_offer "$cur" < <(basket __complete commands 2>/dev/null)
            else
                case $cmd in
                    \(itemCommands.joined(separator: "|")))
                        _basket_offer "$cur" < <(basket "${db[@]}" __complete items 2>/dev/null) ;;
                    list)
                        if [[ -z $sub ]]; then
                            _basket_offer "$cur" < <(basket __complete list-subcommands 2>/dev/null)
                        elif [[ $sub == @(\(listSubcommands.joined(separator: "|"))) ]]; then
                            _basket_offer "$cur" < <(basket "${db[@]}" __complete lists 2>/dev/null)
                        fi ;;
                    completion) _basket_offer "$cur" < <(printf '%s\n' bash zsh fish) ;;
                esac
            fi
        }
        complete -F _basket basket
        """
    }

    static var zsh: String {
        """
        #compdef basket
        # zsh completion for basket (basket completion zsh)
        _basket() {
            local -a db rest
            local i
            for ((i = 2; i < CURRENT; i++)); do
                case ${words[i]} in
                    (--db|--list) db+=(${words[i]} ${words[i + 1]}); ((i++)) ;;
                    (-*) ;;
                    (*) rest+=(${words[i]}) ;;
                esac
            done
            if [[ ${words[CURRENT-1]} == --list ]]; then
                compadd -- ${(f)"$(basket ${db[1,2]} __complete lists 2>/dev/null)"}
            elif [[ ${words[CURRENT]} == -* ]]; then
                compadd -- --db --list --json --no-sync --help
            elif (( ${#rest} == 0 )); then
                compadd -- ${(f)"$(basket __complete commands 2>/dev/null)"}
            else
                case ${rest[1]} in
                    (\(itemCommands.joined(separator: "|"))) compadd -- ${(f)"$(basket $db __complete items 2>/dev/null)"} ;;
                    (list)
                        if (( ${#rest} == 1 )); then
                            compadd -- ${(f)"$(basket __complete list-subcommands 2>/dev/null)"}
                        elif [[ ${rest[2]} == (\(listSubcommands.joined(separator: "|"))) ]]; then
                            compadd -- ${(f)"$(basket $db __complete lists 2>/dev/null)"}
                        fi ;;
                    (completion) compadd -- bash zsh fish ;;
                esac
            fi
        }
        _basket "$@"
        """
    }

    static var fish: String {
        """
        # fish completion for basket (basket completion fish)
        # Names from the replica the command line names (--db, --list), like basket itself.
        function __basket_complete
            set -l tokens (commandline -opc)
            set -l options
            for i in (seq 2 (count $tokens))
                if contains -- $tokens[$i] --db --list; and test $i -lt (count $tokens)
                    set options $options $tokens[$i] $tokens[(math $i + 1)]
                end
            end
            basket $options __complete $argv 2>/dev/null
        end
        complete -c basket -f
        complete -c basket -n __fish_use_subcommand -a '(__basket_complete commands)'
        complete -c basket -n '__fish_seen_subcommand_from \(itemCommands.joined(separator: " "))' -a '(__basket_complete items)'
        complete -c basket -n '__fish_seen_subcommand_from list; and not __fish_seen_subcommand_from \(listSubcommands.joined(separator: " "))' -a '(__basket_complete list-subcommands)'
        complete -c basket -n '__fish_seen_subcommand_from list; and __fish_seen_subcommand_from \(listSubcommands.joined(separator: " "))' -a '(__basket_complete lists)'
        complete -c basket -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
        complete -c basket -l list -x -a '(__basket_complete lists)' -d 'Work on this list'
        complete -c basket -l db -r -F -d 'The replica'
        complete -c basket -l json -d 'Print data as JSON'
        complete -c basket -l no-sync -d 'Keep the changes here for now'
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
            if !spec.details.isEmpty { page += ".nf\n\(roff(spec.details))\n.fi\n" }
        }
        page += ".SH OPTIONS\n.nf\n\(roff(CommandSpec.globalHelp))\n.fi\n"
        page += """
            .SH FILES
            .TP
            .I $BASKET_HOME/basket.sqlite
            The replica (default ~/.local/share/basket/basket.sqlite), mode 0600.
            .TP
            .I config.json
            Next to the replica: the server, the account and its token, mode 0600.
            .SH SEE ALSO
            .BR basket-server (1)

            """
        context.console.print(page)
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
