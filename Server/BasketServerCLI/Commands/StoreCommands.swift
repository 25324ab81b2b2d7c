import BasketCore
import BasketServer
import Foundation
import PrivateFiles

/// A command of `basket-server` besides serving: one type each, listed in `ServerSubcommands/all`
/// (`--help` and the parser read that list).
protocol ServerSubcommand: Sendable {
    /// The word that names it (`backup`).
    static var name: String { get }
    /// What its one argument is (`PATH`), nil when it takes none.
    static var argument: String? { get }
    /// Its help, a line or more.
    static var help: String { get }
    /// Runs it; returns the exit status.
    static func run(_ settings: Settings) throws -> Int32
}

extension ServerSubcommand {
    static var argument: String? { nil }
}

/// Every command, in the order `--help` lists them.
enum ServerSubcommands {
    static let all: [any ServerSubcommand.Type] = [
        Backup.self, Restore.self, Export.self, Import.self, Compact.self, RenewEpochs.self, RotatePushKey.self,
        SignupInvite.self,
    ]

    /// The commands' part of `--help`.
    static var helpText: String {
        (["  (none)           Serve until SIGTERM or SIGINT (parked long-polls are answered, the store is closed)."]
            + all.map { command in
                let lines = command.help.split(separator: "\n")
                let left = "  " + command.name + (command.argument.map { " " + $0 } ?? "")
                return
                    ([ServerOption.pad(left, 19) + lines[0]]
                    + lines.dropFirst().map { String(repeating: " ", count: 19) + $0 })
                    .joined(separator: "\n")
            }).joined(separator: "\n")
    }
}

/// Opening the store the settings name, for the commands.
enum StoreAccess {
    /// The SQLite file in the data folder.
    static func path(_ settings: Settings) -> String {
        (settings.data as NSString).appendingPathComponent("basket-server.sqlite")
    }

    /// The store the settings name: the PostgreSQL database, or the SQLite file in the data folder.
    static func open(_ settings: Settings) throws -> any DumpableStore {
        if let url = settings.store { return try PostgresStore(url: url, connections: settings.connections) }
        try PrivateFile.makeDirectory(settings.data)
        return try SQLiteStore(path: path(settings), fsyncEveryCommit: settings.fsync)
    }

    /// Opens the store, runs `body` with it, and closes it.
    static func with<T>(_ settings: Settings, _ body: (any DumpableStore) throws -> T) throws -> T {
        let store = try open(settings)
        defer { store.close() }
        return try body(store)
    }

    /// Where the store is, for messages (a URL without its password).
    static func name(_ settings: Settings) -> String {
        settings.store.map(ServerCommand.redacted) ?? path(settings)
    }

    /// "2 accounts, 1 lists, …, 30 ops" in the dump's table order.
    static func describe(_ counts: [String: Int]) -> String {
        StoreDump.tables.map { "\(counts[$0.name] ?? 0) \($0.name)" }.joined(separator: ", ")
    }

    /// The SQLite store's path, or a usage error for PostgreSQL (whose own tools back it up).
    static func sqliteOnly(_ settings: Settings, _ command: String) throws -> String {
        guard settings.store == nil else {
            throw UsageError(
                message: "\(command) is for the SQLite store; back up PostgreSQL with pg_dump and restore"
                    + " with pg_restore, then run renew-epochs (docs/deploy.md)")
        }
        try PrivateFile.makeDirectory(settings.data)
        return path(settings)
    }
}

/// `backup PATH`: a consistent copy of the SQLite store, while the server runs.
enum Backup: ServerSubcommand {
    static let name = "backup"
    static let argument: String? = "PATH"
    static let help = """
        Write a consistent copy of the SQLite store to PATH (works while the server runs;
        for PostgreSQL use pg_dump, docs/deploy.md).
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let path = try StoreAccess.sqliteOnly(settings, name)
        let target = settings.argument!
        if FileManager.default.fileExists(atPath: target) {
            ServerCommand.printError("Error: \(target) exists; choose a new file for the backup")
            return 1
        }
        try SQLiteStore(path: path).backup(to: target)
        print("Backed up \(path) to \(target)")
        return 0
    }
}

/// `restore PATH`: the SQLite store replaced by a backup, every list given a new epoch.
enum Restore: ServerSubcommand {
    static let name = "restore"
    static let argument: String? = "PATH"
    static let help = """
        Replace the SQLite store with the backup at PATH and give every list a new epoch,
        so clients push again what the backup does not hold. Stop the server first.
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let path = try StoreAccess.sqliteOnly(settings, name)
        let target = settings.argument!
        let lists = try SQLiteStore.restore(from: target, into: path)
        print("Restored \(target) into \(path); \(lists) lists have a new epoch")
        return 0
    }
}

/// `export PATH`: the whole store as JSON lines, the same for every backend.
enum Export: ServerSubcommand {
    static let name = "export"
    static let argument: String? = "PATH"
    static let help = """
        Write every account, token, list, member, invite and operation to PATH as JSON
        lines, the same for every backend (to move a store; works while the server runs).
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let counts = try StoreAccess.with(settings) { try $0.export(to: settings.argument!) }
        print("Exported \(StoreAccess.describe(counts)) to \(settings.argument!)")
        return 0
    }
}

/// `import PATH`: such a file into an empty store.
enum Import: ServerSubcommand {
    static let name = "import"
    static let argument: String? = "PATH"
    static let help = """
        Read such a file into an empty store (a new --data folder or a new database).
        Nothing is written when the file is malformed or the store is not empty.
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let counts = try StoreAccess.with(settings) { try $0.importDump(from: settings.argument!) }
        print("Imported \(StoreAccess.describe(counts)) into \(StoreAccess.name(settings))")
        return 0
    }
}

/// `compact`: superseded operations older than the retention dropped.
enum Compact: ServerSubcommand {
    static let name = "compact"
    static let help = "Drop superseded operations received more than --retention-days ago, then exit."

    static func run(_ settings: Settings) throws -> Int32 {
        let before = Int64(HybridClock.wallClockMilliseconds()) - Int64(settings.retentionDays * 86_400_000)
        let dropped = try StoreAccess.with(settings) { try $0.compact(receivedBefore: before) }
        print("Dropped \(dropped) superseded operations")
        return 0
    }
}

/// `renew-epochs`: every list a new epoch (after a PostgreSQL restore).
enum RenewEpochs: ServerSubcommand {
    static let name = "renew-epochs"
    static let help = """
        Give every list a new epoch, so clients push again what the store does not hold
        (after restoring a PostgreSQL database with pg_restore; restore does it for SQLite).
        """

    static func run(_ settings: Settings) throws -> Int32 {
        print("\(try StoreAccess.with(settings) { try $0.renewEpochs() }) lists have a new epoch")
        return 0
    }
}

/// `rotate-push-key`: a new VAPID key pair; every push subscription ends (push services refuse
/// messages signed by another key than a subscription's), and browsers subscribe again when the
/// web client next opens.
enum RotatePushKey: ServerSubcommand {
    static let name = "rotate-push-key"
    static let help = """
        Make a new Web Push (VAPID) key pair in the store; every push subscription ends and each
        browser subscribes again the next time the web client opens (docs/deploy.md).
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let ended = try StoreAccess.with(settings) {
            try BasketService.rotatePushKey(in: $0, now: Int64(HybridClock.wallClockMilliseconds()))
        }
        print("a new push key is in the store; \(ended) push subscriptions ended")
        return 0
    }
}

/// `signup-invite`: a code that lets people sign up under `--signup invite-only`.
enum SignupInvite: ServerSubcommand {
    static let name = "signup-invite"
    static let help = """
        Print a new signup invite code (for --signup invite-only), usable --uses N times
        (default 1) for --expires-days N days (default 7); the store keeps only its hash.
        """

    static func run(_ settings: Settings) throws -> Int32 {
        let now = Int64(HybridClock.wallClockMilliseconds())
        let expires = now + Int64(settings.inviteDays * 86_400_000)
        let code = try StoreAccess.with(settings) {
            try BasketService.createSignupInvite(in: $0, uses: settings.inviteUses, expiresAt: expires, now: now)
        }
        print(code)
        ServerCommand.printError(
            "A signup invite for \(settings.inviteUses) account\(settings.inviteUses == 1 ? "" : "s"), valid"
                + " \(settings.inviteDays) days: basket signup NAME --invite \(code)")
        return 0
    }
}
