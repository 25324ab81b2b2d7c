import BasketReplica
import Foundation
import PrivateFiles

/// The CLI's remote settings, in `config.json` next to the replica (mode 0600: it holds the token).
struct RemoteConfig: Codable {
    var server: String?
    var account: String?
    /// The account this replica's id writes for (kept after signing out): signing in as another
    /// one gives the replica a new id (``Replica/startAsNewDevice()``).
    var replicaAccount: String?
    var token: String?
    /// Whether write commands send their changes before they exit (nil: on).
    var autoSync: Bool?
}

extension Context {
    var configPath: String {
        ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("config.json")
    }

    func loadConfig() throws -> RemoteConfig {
        guard let data = FileManager.default.contents(atPath: configPath) else { return RemoteConfig() }
        do {
            return try JSONDecoder().decode(RemoteConfig.self, from: data)
        } catch {
            throw CommandError(message: "\(configPath) is not a valid config: \(error)", code: "invalid_config")
        }
    }

    /// Writes the config to a new 0600 file and renames it over the old one: a crash or a full
    /// disk leaves the old config whole, never a half-written token.
    func saveConfig(_ config: RemoteConfig) throws {
        let directory = (configPath as NSString).deletingLastPathComponent
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data = try encoder.encode(config)
        do {
            try PrivateFile.makeDirectory(directory)
            try PrivateFile.replace(configPath, with: Array(data))
        } catch {
            throw CommandError(message: "cannot write \(configPath): \(error)", code: "io")
        }
    }

    /// The transport for the configured server, signed in or not; `answerTimeout` shorter than
    /// ``answerTimeout()`` for what must not keep a person waiting (a completion, `ls`'s pull).
    func transport(requireToken: Bool = true, answerTimeout short: Double? = nil) throws -> (
        HTTPSyncTransport, RemoteConfig
    ) {
        let config = try loadConfig()
        guard let server = config.server, let url = URL(string: server) else {
            throw CommandError(message: "no server configured: 'basket remote set URL' first", code: "no_server")
        }
        if requireToken && config.token == nil {
            throw CommandError(
                message: "not signed in: 'basket login NAME' (or 'basket signup NAME') first", code: "not_signed_in")
        }
        // The replica first: it loads the keys of encrypted lists into the keyring.
        _ = try replica()
        return (
            HTTPSyncTransport(
                baseURL: url, token: config.token, answerTimeout: try short ?? answerTimeout(), exchange: exchange,
                keyring: keyring),
            config
        )
    }

    /// How long a command waits for the server's answer to one request: 15 s, or
    /// `$BASKET_TIMEOUT` seconds (1 to 600). A hung server costs a command that long, then
    /// the command says so; what it wrote stays here for the next sync.
    func answerTimeout() throws -> Double {
        guard let raw = environment["BASKET_TIMEOUT"], !raw.isEmpty else { return 15 }
        guard let seconds = Int(raw), (1...600).contains(seconds) else {
            throw CommandError(message: "BASKET_TIMEOUT must be a whole number of seconds from 1 to 600", code: "usage")
        }
        return Double(seconds)
    }

    /// The password: the first line of stdin with --password-stdin, else $BASKET_PASSWORD, else a
    /// prompt (`confirming`: twice, as a new password is, and both must be the same).
    func password(confirming: Bool = false) throws -> String {
        if arguments.has(.passwordStdin) {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            let text = String(decoding: data, as: UTF8.self)
            return String(text.split(whereSeparator: \.isNewline).first ?? "")
        }
        if let password = environment["BASKET_PASSWORD"], !password.isEmpty { return password }
        guard isatty(0) == 1, let entered = getpass("Password: ") else {
            throw CommandError(message: "no password: use --password-stdin or $BASKET_PASSWORD", code: "no_password")
        }
        let password = String(cString: entered)
        if confirming {
            guard let again = getpass("The same password again: "), String(cString: again) == password else {
                throw CommandError(message: "the two passwords differ; nothing was created", code: "password_mismatch")
            }
        }
        return password
    }
}
