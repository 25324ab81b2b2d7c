import BasketCore
import BasketServer
import Foundation
import HTTPServer

/// `basket-server`: its options (`ServerOption/all`) and commands (`ServerSubcommands/all`),
/// read from the environment and the arguments. The executable only calls ``main(_:environment:)``.
public enum ServerCommand {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    static let usage: String = {
        func shown(_ option: ServerOption) -> String { option.flag + (option.value.map { " " + $0 } ?? "") }
        let commands = ServerSubcommands.all.map { command -> String in
            var words = [command.name]
            if let argument = command.argument { words.append(argument) }
            for option in ServerOption.all where option.command.map(ObjectIdentifier.init) == ObjectIdentifier(command)
            {
                words.append("[" + shown(option) + "]")
            }
            return words.joined(separator: " ")
        }
        return "basket-server [OPTION…] [" + commands.joined(separator: " | ") + "]"
    }()

    static var help: String {
        var text = """
            OVERVIEW: The Basket sync server: accounts, shared lists, and each list's operation log over HTTP.

            USAGE: \(usage)

            COMMANDS:

            """
        text += ServerSubcommands.helpText + "\n\nOPTIONS (each also from the environment):\n"
        text += ServerOption.helpText(for: nil) + "\n"
        for command in ServerSubcommands.all {
            let own = ServerOption.helpText(for: command)
            if !own.isEmpty { text += "\nOPTIONS OF \(command.name.uppercased()):\n" + own + "\n" }
        }
        return text + """

            GENERAL:
              -h, --help                   Show help.
              --version                    Show the version.
            """
    }

    /// The settings the environment and then the arguments give.
    static func parse(_ arguments: [String], environment: [String: String]) throws -> Settings {
        try ServerOption.parse(arguments, environment: environment)
    }

    /// The URL without its password.
    static func redacted(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.password != nil else { return url }
        parts.password = "***"
        return parts.string ?? url
    }

    /// Runs the server or a command; returns the exit status (64 for a usage error).
    public static func main(_ arguments: [String], environment: [String: String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(help)
            return 0
        }
        if arguments.contains("--version") {
            print("basket-server \(version)")
            return 0
        }
        do {
            let settings = try parse(arguments, environment: environment)
            return try settings.command?.run(settings) ?? Serve.serve(settings)
        } catch let error as UsageError {
            printError("Error: \(error.message)\nUsage: \(usage)")
            return 64
        } catch {
            printError("Error: \(error)")
            return 1
        }
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
