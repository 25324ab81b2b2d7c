import Testing

@testable import BasketServer

struct ServerCommandTests {
    @Test func defaultsAreLoopbackAndALocalDataFolder() throws {
        let settings = try ServerCommand.parse([], environment: [:])
        #expect(settings.host == "127.0.0.1" && settings.port == 8080 && settings.data == "basket-server-data")
        #expect(settings.fsync && settings.threads == 4 && settings.retentionDays == 30)
    }

    @Test func flagsOverrideTheEnvironment() throws {
        let environment = [
            "BASKET_LISTEN": "127.0.0.1:9000", "BASKET_DATA": "/srv/basket", "BASKET_DURABILITY": "process",
            "BASKET_MAX_WAIT": "20",
        ]
        let fromEnvironment = try ServerCommand.parse([], environment: environment)
        #expect(fromEnvironment.port == 9000 && fromEnvironment.data == "/srv/basket" && !fromEnvironment.fsync)
        #expect(fromEnvironment.maxWait == 20)
        let flags = try ServerCommand.parse(
            ["--listen", "[::1]:0", "--durability", "full", "--max-wait", "1"], environment: environment)
        #expect(flags.host == "::1" && flags.port == 0 && flags.fsync && flags.maxWait == 1)
    }

    @Test func badArgumentsAreUsageErrors() {
        let bad: [[String]] = [
            ["--listen", "localhost"], ["--listen", "1.2.3.4:99999"], ["--durability", "maybe"], ["--bogus"],
            ["backup"], ["--max-wait", "31"], ["--max-wait", "soon"],
        ]
        for arguments in bad {
            #expect(ServerCommand.main(arguments, environment: [:]) == 64, "\(arguments)")
        }
        #expect(ServerCommand.main(["--help"], environment: [:]) == 0)
    }
}
