import BasketCore
package import BasketReplica
import BasketSeal
import BasketSearch
import Foundation
import PrivateFiles

#if canImport(CurlExchange)
    import CurlExchange
#endif

/// The `basket` command line: argument parsing and wiring of the library modules.
public enum BasketCLI {
    /// The version `basket --version` prints.
    public static let version = "0.1.0"

    /// Runs one invocation. `rawArguments` are the process arguments without the program name,
    /// as bytes: an argument that is not valid UTF-8 is refused before anything is written.
    /// - Returns: the exit status (0 success, 1 failure, 64 usage error).
    public static func main(rawArguments: [[UInt8]], environment: [String: String]) -> Int32 {
        let console = Console()
        defer { console.flush() }
        var arguments: [String] = []
        for (index, raw) in rawArguments.enumerated() {
            guard let text = String(validating: raw, as: UTF8.self) else {
                console.error("Error: argument \(index + 1) is not valid UTF-8; nothing was changed")
                return 1
            }
            arguments.append(text)
        }
        return run(arguments, environment: environment, console: console)
    }

    /// `exchange`: how the command's requests travel (nil: HTTP, see ``httpExchange()``);
    /// `basket-lab replay` passes its faulty network.
    package static func run(
        _ arguments: [String], environment: [String: String], console: Console,
        exchange: HTTPSyncTransport.Exchange? = nil
    ) -> Int32 {
        let exchange = exchange ?? httpExchange()
        // A --json run that failed: what it said in words goes to standard error.
        defer { console.abandonJSON() }
        let (_, command, rest) = Commands.find(arguments)
        var context: Context?
        do {
            let spec = command ?? Commands.root
            let parsed = try Arguments(
                rest, valueOptions: spec.valueOptions.union(Commands.globalValueOptions),
                flagOptions: spec.flagOptions.union(Commands.globalFlagOptions), shortOptions: Commands.shortOptions,
                usage: spec.usage)
            if parsed.has(.version) {
                console.print("basket \(version)")
                return 0
            }
            if parsed.has(.help) {
                console.print(spec.help)
                return 0
            }
            // --json: standard output carries one JSON object (docs/cli-json.md), words go elsewhere.
            console.isJSON = parsed.has(.json)
            if command == nil && parsed.positionals.isEmpty {
                // `basket` alone: the interactive search on a terminal, the list otherwise.
                let interactive = Context(
                    arguments: parsed, environment: environment, console: console, exchange: exchange)
                context = interactive
                if Terminal.isInteractive {
                    console.isJSON = false
                    try InteractiveMode(context: interactive).run()
                } else {
                    try ItemCommands.list(interactive)
                    try console.finishJSON()
                }
                return 0
            }
            guard let command else {
                throw UsageError(message: HelpCommand.unknown(parsed.positionals[0]), usage: Commands.root.usage)
            }
            // -q leaves out reports of what was done, never data asked for.
            let printsData =
                command.output == .data || (command.output == .dataWhenBare && parsed.positionals.isEmpty)
            console.isQuiet = parsed.has(.quiet) && !printsData
            let commandContext = Context(
                arguments: parsed, environment: environment, console: console, exchange: exchange)
            context = commandContext
            // Kept here: a 'basket sync --watch' running beside it does not send it either. Held
            // before the command writes, or the watch, which looks ten times a second, could send
            // the write before the hold is there; held after it too, for a list it made.
            let holding = command.writes && parsed.has(.noSync)
            var placedHold: ListID?
            if holding, let list = try? commandContext.list(create: false), let replica = try? commandContext.replica(),
                (try? replica.isHeld(list.id)) == false
            {
                try replica.hold(list.id)
                placedHold = list.id
            }
            do {
                try command.run(commandContext)
            } catch {
                if let placedHold { try? commandContext.replica().release(placedHold) }
                throw error
            }
            if holding, let list = try? commandContext.list(create: false) {
                try? commandContext.replica().hold(list.id)
            }
            if command.writes { SyncCommands.sendAfterWrite(commandContext) }
            try console.finishJSON()
            return 0
        } catch let error as UsageError {
            // The command's whole usage line, and its own help.
            let named = command.map { $0.path.joined(separator: " ") } ?? ""
            console.error("Error: \(error.message)")
            console.error("Usage: \(command?.usage ?? error.usage)")
            console.error(named.isEmpty || named == "help" ? "See 'basket help'." : "See 'basket help \(named)'.")
            return 64
        } catch let status as ExitStatus {
            return status.code
        } catch let error as CommandError {
            console.error("Error: \(error.message)")
            return error.exitCode
        } catch let error where ReplicaFile.damage(in: error) != nil {
            let path = context?.databasePath ?? "file"
            console.error("Error: the replica \(path) is damaged (\(ReplicaFile.damage(in: error)!)).")
            console.error(
                "Run 'basket doctor' to rebuild it from the server, keeping the unsynced changes that can still be read."
            )
            return 1
        } catch ReplicaError.readOnly(let list, let role) {
            let title = context?.title(of: list) ?? "this list"
            console.error("Error: you can only view \(title) (your role: \(role.rawValue)); nothing was changed.")
            console.error(
                "An owner of the list can make you an editor ('basket members' shows who); then run 'basket sync'.")
            return 1
        } catch ReplicaError.archived(let list) {
            let title = context?.title(of: list) ?? "this list"
            let role = (try? context?.replica().syncState(of: list))?.role
            if role == nil || role == .owner {
                console.error(
                    "Error: \(title) is archived; nothing was changed. 'basket list unarchive \(title)' brings it back."
                )
            } else {
                console.error(
                    "Error: \(title) is archived; nothing was changed. An owner of the list can bring it back"
                        + " ('basket members' shows who).")
            }
            return 1
        } catch ReplicaError.noLongerMember(let list) {
            let title = context?.title(of: list) ?? "this list"
            console.error(
                "Error: \(title) is no longer shared with you on the server (its owner removed you or deleted it,"
                    + " or you left it); its copy here is read-only, nothing was changed.")
            console.error("'basket list rm \(title)' removes it from this device; 'basket export' keeps what it holds.")
            return 1
        } catch let error as ReplicaError {
            console.error("Error: \(error)")
            return 1
        } catch SyncError.unreachable(let why) {
            let server = (try? context?.loadConfig())?.server ?? "no address"
            let waiting = (try? context?.replica().outbox.changes()) ?? 0
            console.error("Error: cannot reach the server (\(server)): \(why).")
            if waiting > 0 {
                console.error("\(Phrases.changes(waiting)) wait here; the next sync sends them.")
            }
            return 1
        } catch let error as SyncError where [.unauthorized, .tokenExpired].contains(error.errorCode) {
            let (code, message) = (error.code ?? "", error.message)
            // The token is no good any more: forget it, so 'basket status' says signed out.
            if let context, var config = try? context.loadConfig(), config.token != nil {
                config.token = nil
                config.account = nil
                try? context.saveConfig(config)
            }
            console.error("Error: this device is signed out (\(code): \(message)).")
            console.error(
                "Sign in again with 'basket login NAME'; your lists and the changes not yet sent stay on this device.")
            return 1
        } catch {
            console.error("Error: \(error)")
            return 1
        }
    }
}

extension BasketCLI {
    /// HTTP as the CLI sends it: over libcurl on Linux, where URLSession inflates a gzip answer
    /// before its size can be checked (CurlExchange); through URLSession elsewhere (nil).
    static func httpExchange() -> HTTPSyncTransport.Exchange? {
        #if canImport(CurlExchange)
            return CurlExchange.make()
        #else
            return nil
        #endif
    }
}

/// What a command runs with: its arguments, the console, and the replica (opened on first use).
final class Context {
    let arguments: Arguments
    let environment: [String: String]
    let console: Console
    /// How requests travel: nil for HTTP through URLSession (see ``BasketCLI/run(_:environment:console:exchange:)``).
    let exchange: HTTPSyncTransport.Exchange?
    private var openReplica: Replica?
    /// The keys of this device's encrypted lists: the replica loads them from its file, the
    /// transport seals and opens with them.
    let keyring = SealKeyring()

    init(
        arguments: Arguments, environment: [String: String], console: Console,
        exchange: HTTPSyncTransport.Exchange? = nil
    ) {
        self.arguments = arguments
        self.environment = environment
        self.console = console
        self.exchange = exchange
    }

    var json: Bool { arguments.has(.json) }

    /// The replica file: `--db PATH` (a directory, or a file ending in .sqlite or .db), else
    /// `$BASKET_HOME`, else `$XDG_DATA_HOME/basket`, else `~/.local/share/basket`.
    var databasePath: String {
        if let path = arguments.value(.db) {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            if (exists && !isDirectory.boolValue) || path.hasSuffix(".sqlite") || path.hasSuffix(".db") {
                return path
            }
            return (path as NSString).appendingPathComponent("basket.sqlite")
        }
        let directory: String
        if let home = environment["BASKET_HOME"], !home.isEmpty {
            directory = home
        } else if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            directory = (data as NSString).appendingPathComponent("basket")
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            directory = (home as NSString).appendingPathComponent(".local/share/basket")
        }
        return (directory as NSString).appendingPathComponent("basket.sqlite")
    }

    func replica() throws -> Replica {
        if let openReplica { return openReplica }
        let path = databasePath
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try PrivateFile.makeDirectory(directory)
            } catch {
                throw CommandError(message: "cannot create \(directory): \(error.localizedDescription)", code: "io")
            }
        }
        var configuration = Replica.Configuration()
        configuration.wallClock = try wallClock()
        configuration.keyring = keyring
        // New lists are encrypted end to end unless asked otherwise (`basket list new NAME
        // --unencrypted`); the configuration's default.
        let replica = try Replica(path: path, configuration: configuration)
        openReplica = replica
        return replica
    }

    /// This device's wall clock (Unix ms). For conflict testing, it can be off
    /// (BASKET_CLOCK_SKEW_MS=600000), or stand still at a time (BASKET_CLOCK_MS, a replayed scenario's
    /// simulated time), or both.
    func wallClock() throws -> @Sendable () -> UInt64 {
        func milliseconds(_ variable: String) throws -> Int64? {
            guard let raw = environment[variable], !raw.isEmpty else { return nil }
            guard let value = Int64(raw) else {
                throw CommandError(message: "\(variable) must be a whole number of milliseconds", code: "usage")
            }
            return value
        }
        let skew = try milliseconds("BASKET_CLOCK_SKEW_MS")
        let frozen = try milliseconds("BASKET_CLOCK_MS")
        guard skew != nil || frozen != nil else { return { HybridClock.wallClockMilliseconds() } }
        return { UInt64(max(0, (frozen ?? Int64(HybridClock.wallClockMilliseconds())) + (skew ?? 0))) }
    }

    /// The bytes of a file, or of stdin for `-`.
    func readInput(_ source: String) throws -> Data {
        do {
            if source == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
            return try Data(contentsOf: URL(fileURLWithPath: source))
        } catch {
            throw CommandError(message: "cannot read \(source): \(error.localizedDescription)", code: "io")
        }
    }

    /// Asks before what cannot be undone. On a terminal: `question [y/N]` on stderr, and a line
    /// from stdin that must be y or yes; `--yes` goes on without asking, and so does a command
    /// without a terminal (a script has no one to ask: it says what it means by running it).
    /// - Throws: a ``CommandError`` (exit 1, nothing changed) for any other answer.
    func confirm(_ question: String) throws {
        guard !arguments.has(.yes), !console.isCapturing, isatty(0) == 1, isatty(2) == 1 else { return }
        console.flush()
        FileHandle.standardError.write(Data("\(Printable.escaped(question)) [y/N] ".utf8))
        let answer = (readLine(strippingNewline: true) ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else {
            throw CommandError(message: "nothing was changed", code: "cancelled")
        }
    }

    /// A list's title as this device knows it, for messages.
    func title(of list: ListID) -> String? {
        (try? replica().lists())?.first { $0.id == list }?.title
    }

    static let currentListSetting = "current_list"
    static let defaultListTitle = "Shopping"

    /// The list a command works on: `--list NAME`, else the current one, else the only one.
    /// With `create`, a replica without lists gets a "Shopping" list.
    func list(create: Bool) throws -> ListInfo? {
        let replica = try replica()
        let lists = try replica.lists()
        if let name = arguments.value(.list) {
            return try Self.findList(name, in: lists)
        }
        if let hex = try replica.setting(Self.currentListSetting),
            let list = lists.first(where: { $0.id.description == hex })
        {
            return list
        }
        if let first = lists.first { return first }
        guard create else { return nil }
        let list = try replica.createList(title: Self.defaultListTitle, language: language)
        try replica.setSetting(Self.currentListSetting, list.id.description)
        return list
    }

    /// This device's language, as the catalogue has it (`LC_ALL`, `LC_MESSAGES`, `LANG`).
    var language: String { Catalogue.language(environment: environment) }

    /// The language `list`'s aisles are named in: the list's own, else the one its aisles are
    /// already named in (a list made before lists had one), else this device's.
    func aisleLanguage(of list: ListInfo, categories: [String]) -> String {
        list.language ?? Catalogue.language(ofAisles: list.aisles + categories) ?? language
    }

    func requireList() throws -> ListInfo {
        guard let list = try list(create: true) else { throw CommandError(message: "no list", code: "no_such_list") }
        return list
    }

    /// The list `name` means: its title without case or accents, its id (or 4 of its first hex
    /// digits and more), else the one list whose title has a word starting with it or holds it
    /// ("weekly" finds "Weekly shop"), as items are found.
    static func findList(_ name: String, in lists: [ListInfo]) throws -> ListInfo {
        let key = ItemKey.normalize(name)
        if let exact = lists.first(where: { ItemKey.normalize($0.title) == key || $0.id.description == name }) {
            return exact
        }
        let prefixed = lists.filter { $0.id.description.hasPrefix(name.lowercased()) && name.count >= 4 }
        if prefixed.count == 1 { return prefixed[0] }
        guard !key.isEmpty else {
            throw CommandError(message: "no list named '\(name)' (see 'basket lists')", code: "no_such_list")
        }
        let words = lists.filter { list in
            ItemKey.normalize(list.title).split(separator: " ").contains { $0.hasPrefix(key) }
                || ItemKey.normalize(list.title).hasPrefix(key)
        }
        let found = words.isEmpty ? lists.filter { ItemKey.normalize($0.title).contains(key) } : words
        if found.count == 1 { return found[0] }
        if found.count > 1 {
            throw CommandError(
                message: "'\(name)' matches \(found.count) lists; name one exactly: "
                    + found.prefix(10).map(\.title).joined(separator: ", "),
                code: "ambiguous")
        }
        throw CommandError(message: "no list named '\(name)' (see 'basket lists')", code: "no_such_list")
    }
}
