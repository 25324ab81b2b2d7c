import BasketServer
import Testing

@testable import BasketServerCLI

struct ServerCommandTests {
    @Test func defaultsAreLoopbackAndALocalDataFolder() throws {
        let settings = try ServerCommand.parse([], environment: [:])
        #expect(settings.host == "127.0.0.1" && settings.port == 8080 && settings.data == "basket-server-data")
        #expect(settings.fsync && settings.threads == 4 && settings.retentionDays == 30)
    }

    @Test func flagsOverrideTheEnvironment() throws {
        let environment = [
            "BASKET_LISTEN": "127.0.0.1:9000", "BASKET_DATA": "/srv/basket", "BASKET_DURABILITY": "process",
            "BASKET_MAX_WAIT": "20", "BASKET_STORE": "postgresql://basket@db/basket", "BASKET_CONNECTIONS": "3",
        ]
        let fromEnvironment = try ServerCommand.parse([], environment: environment)
        #expect(fromEnvironment.port == 9000 && fromEnvironment.data == "/srv/basket" && !fromEnvironment.fsync)
        #expect(fromEnvironment.maxWait == 20)
        #expect(fromEnvironment.store == "postgresql://basket@db/basket" && fromEnvironment.connections == 3)
        let other = try ServerCommand.parse(
            ["--store", "postgres://x@y/z", "--connections", "12"], environment: environment)
        #expect(other.store == "postgres://x@y/z" && other.connections == 12)
        #expect(ServerCommand.redacted("postgresql://basket:secret@db/basket") == "postgresql://basket:***@db/basket")
        #expect(
            PostgresStore.withDefaults("postgresql://b@db/basket")
                == "postgresql://b@db/basket?connect_timeout=10&application_name=basket-server")
        #expect(
            PostgresStore.withDefaults("postgresql://b@db/basket?sslmode=require&application_name=a")
                == "postgresql://b@db/basket?sslmode=require&application_name=a&connect_timeout=10")
        let flags = try ServerCommand.parse(
            ["--listen", "[::1]:0", "--durability", "full", "--max-wait", "1"], environment: environment)
        #expect(flags.host == "::1" && flags.port == 0 && flags.fsync && flags.maxWait == 1)
    }

    @Test func theWatchLimitPerAccountIsASetting() throws {
        #expect(try ServerCommand.parse([], environment: [:]).maxWatches == 64)
        #expect(try ServerCommand.parse([], environment: ["BASKET_MAX_WATCHES": "500"]).maxWatches == 500)
        #expect(
            try ServerCommand.parse(["--max-watches", "9"], environment: ["BASKET_MAX_WATCHES": "500"]).maxWatches == 9)
        #expect(ServerCommand.main(["--max-watches", "0"], environment: [:]) == 64)
    }

    @Test func badArgumentsAreUsageErrors() {
        let bad: [[String]] = [
            ["--listen", "localhost"], ["--listen", "1.2.3.4:99999"], ["--durability", "maybe"], ["--bogus"],
            ["backup"], ["--max-wait", "31"], ["--max-wait", "soon"], ["--store", "/var/lib/basket.sqlite"],
            ["--store", "mysql://x@y/z"], ["--connections", "many"],
            // backup and restore are SQLite's; PostgreSQL has pg_dump (checked before connecting).
            ["--store", "postgresql://nobody@127.0.0.1:1/none", "backup", "/tmp/x"],
            ["--store", "postgresql://nobody@127.0.0.1:1/none", "restore", "/tmp/x"],
        ]
        for arguments in bad {
            #expect(ServerCommand.main(arguments, environment: [:]) == 64, "\(arguments)")
        }
        #expect(ServerCommand.main(["--help"], environment: [:]) == 0)
        // A database that cannot be reached is an error (exit 1), not a hang or a crash.
        #expect(
            ServerCommand.main(["--store", "postgresql://nobody@127.0.0.1:1/none", "compact"], environment: [:]) == 1)
    }

    @Test func oneTableOfOptionsDrivesHelpAndParsing() throws {
        let help = ServerCommand.help
        for option in ServerOption.all {
            #expect(help.contains(option.flag + (option.value.map { " " + $0 } ?? "")), "\(option.flag)")
            if let variable = option.environment { #expect(help.contains(variable), "\(variable)") }
        }
        for command in ServerSubcommands.all { #expect(help.contains("\n  " + command.name), "\(command.name)") }
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 110 || $0.hasPrefix("USAGE:") })
        // A variable sets what its flag sets; a flag wins over it.
        let environment = [
            "BASKET_QUIET": "1", "BASKET_WEB": "none", "BASKET_MAX_ITEMS": "5", "BASKET_TRUST_PROXY": "0",
        ]
        let fromEnvironment = try ServerCommand.parse([], environment: environment)
        #expect(fromEnvironment.quiet && fromEnvironment.web == "none" && fromEnvironment.maxItems == 5)
        #expect(!fromEnvironment.trustProxy)
        #expect(try ServerCommand.parse(["--max-items", "7", "--web", "w"], environment: environment).maxItems == 7)
        // A command's own options belong to it alone.
        let invite = try ServerCommand.parse(["signup-invite", "--uses", "3", "--expires-days", "2"], environment: [:])
        #expect(invite.command.map(ObjectIdentifier.init) == ObjectIdentifier(SignupInvite.self))
        #expect(invite.inviteUses == 3 && invite.inviteDays == 2)
        #expect(ServerCommand.main(["--uses", "3"], environment: [:]) == 64)
        #expect(ServerCommand.main(["compact", "--expires-days", "3"], environment: [:]) == 64)
        #expect(ServerCommand.main(["compact", "renew-epochs"], environment: [:]) == 64)
        #expect(ServerCommand.main(["export"], environment: [:]) == 64)
    }
}
