/// A usage error: printed as `Error: …` and the command's usage line, exit 64.
struct UsageError: Error {
    var message: String
    var usage: String
}

/// Ends a command with an exit status and no message (a search that found nothing: 1, as grep).
struct ExitStatus: Error {
    var code: Int32
}

/// A failure that is not about usage: printed as `Error: …`, exit 1 (or `code`).
struct CommandError: Error {
    var message: String
    var code: String
    var exitCode: Int32 = 1
}

/// The arguments of one command: options by name, then positionals. `--` ends options.
struct Arguments {
    private(set) var flags: Set<String> = []
    private(set) var values: [String: String] = [:]
    private(set) var positionals: [String] = []

    /// Parses `args`; `valueOptions` take a value (`--db PATH` or `--db=PATH`), `flagOptions` do not.
    /// `shortOptions` spell some of them with one letter (`-q` for `--quiet`): a short option
    /// counts where its long one does.
    init(
        _ args: [String], valueOptions: Set<String>, flagOptions: Set<String>, shortOptions: [String: String] = [:],
        usage: String
    ) throws {
        var i = 0
        var optionsEnded = false
        while i < args.count {
            let arg = args[i]
            i += 1
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" {
                optionsEnded = true
                continue
            }
            var name = arg
            if let long = shortOptions[arg], valueOptions.contains(long) || flagOptions.contains(long) { name = long }
            var inlineValue: String?
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                name = String(arg[..<eq])
                inlineValue = String(arg[arg.index(after: eq)...])
            }
            if valueOptions.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard i < args.count else { throw UsageError(message: "\(name) needs a value", usage: usage) }
                    values[name] = args[i]
                    i += 1
                }
            } else if flagOptions.contains(name) && inlineValue == nil {
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option '\(arg)'", usage: usage)
            }
        }
    }

    /// Whether the flag was given.
    func has(_ flag: Option) -> Bool { flags.contains(flag.name) }
    /// The option's value, nil when it was not given.
    func value(_ option: Option) -> String? { values[option.name] }
}
