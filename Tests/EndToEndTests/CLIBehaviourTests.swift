import BasketCore
import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

struct CLIBehaviourTests {
    let root = TemporaryDirectory("cli")

    @Test func helpAndVersionGoToStdoutWithStatusZero() throws {
        let help = try Executables.run("basket", ["--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE") && help.stdout.contains("search"))
        let addHelp = try Executables.run("basket", ["add", "--help"])
        #expect(addHelp.status == 0 && addHelp.stdout.contains("--from"))
        let version = try Executables.run("basket", ["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("basket "))
    }

    @Test func usageErrorsExit64WithAUsageLine() throws {
        let device = Device(root, "d")
        for arguments in [
            ["bogus"], ["ls", "--bogus"], ["add"], ["ls", "--checked", "--all"], ["list"], ["rename", "x"],
        ] {
            let result = try Executables.run("basket", ["--db", device.directory] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: "), "\(arguments)")
            #expect(result.stderr.contains("Usage: "), "\(arguments)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func badNamesAreRefusedAndNothingIsWritten() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        let before = try device.exported()
        let long = try device.run("add", "Bread, " + String(repeating: "x", count: 501))
        #expect(long.status == 1 && long.stderr.contains("item 2: an item name can have at most 500 characters"))
        #expect(long.stderr.contains("nothing was added"), "\(long.stderr)")
        let category = try device.run("add", "Bread #" + String(repeating: "c", count: 300))
        #expect(category.status == 1 && category.stderr.contains("category 'ccc"), "\(category.stderr)")
        #expect(category.stderr.contains("at most 256 bytes"), "\(category.stderr)")
        let empty = try device.run("add", " , ,\u{00A0}")
        #expect(empty.status == 1 && empty.stderr.contains("cannot be empty"))
        let emptyFile = try device.run("add", "--from", "-", stdin: "\n  \n")
        #expect(emptyFile.status == 1 && emptyFile.stderr.contains("cannot be empty"))
        let control = try device.run("add", "Bread\u{1B}[2J")
        #expect(control.status == 1 && control.stderr.contains("control"))

        let invalid = root.file("invalid.txt")
        try Data([0x42, 0x72, 0xFF, 0x0A, 0x45, 0x67, 0x67, 0x73]).write(to: URL(fileURLWithPath: invalid))
        let fromFile = try device.run("add", "--from", invalid)
        #expect(fromFile.status == 1 && fromFile.stderr.contains("UTF-8"))

        // An invalid UTF-8 argument, passed through the shell since Foundation cannot.
        let shell = try Executables.runShell(
            "\"$BASKET\" --db \"$DB\" add \"$(printf 'Br\\377ad')\"",
            environment: ["BASKET": Executables.path("basket"), "DB": device.directory])
        #expect(shell.status == 1 && shell.stderr.contains("not valid UTF-8"))

        #expect(try device.exported() == before)
        #expect(try device.listing().items.map(\.name) == ["Milk"])
    }

    @Test func addReadsOneItemPerLineVerbatimFromStdin() throws {
        let device = Device(root, "d")
        try device.ok("add", "--from", "-", stdin: "Salt, pepper\n\n  Greek yogurt\r\nmilk\n")
        #expect(Set(try device.listing().items.map(\.name)) == ["Salt, pepper", "Greek yogurt", "milk"])
        try device.ok("add", "oat milk,bread\nEggs")
        #expect(try device.listing().items.count == 6)
    }

    /// `basket add -`: a recipe or a chat message on stdin, one item per line, each read as an
    /// argument is (marks in front dropped, a comma starting the note), the line kept as typed.
    @Test func addDashReadsARecipeOneParsedItemPerLine() throws {
        let device = Device(root, "d")
        let recipe =
            "Lasagne\n- 500 g minced beef\n- 2 onions, chopped\n\n3. 2 x 400 g tomatoes\n• 1 Bund Basilikum (frisch)\n"
        try device.ok("add", "-", "--note", "for: lasagne", stdin: recipe)
        struct Listing: Decodable { var items: [BasketCore.Item] }
        func read() throws -> [String: BasketCore.Item] {
            let listing = try JSONDecoder().decode(Listing.self, from: Data(device.ok("ls", "--json").utf8))
            return Dictionary(uniqueKeysWithValues: listing.items.map { ($0.name, $0) })
        }
        let items = try read()
        #expect(Set(items.keys) == ["Lasagne", "minced beef", "onions", "tomatoes", "Basilikum"])
        #expect(items["onions"]?.quantity == "2" && items["onions"]?.note == "chopped; for: lasagne")
        #expect(items["onions"]?.typed == "- 2 onions, chopped")
        #expect(items["tomatoes"]?.quantity == "2 x 400 g" && items["minced beef"]?.quantity == "500 g")
        #expect(items["Basilikum"]?.quantity == "1 Bund" && items["Basilikum"]?.note == "frisch; for: lasagne")
        // The line is kept only when it said more than the name.
        #expect(items["Lasagne"]?.typed == nil && items["Lasagne"]?.note == "for: lasagne")
        // One line on stdin is split at commas, as an argument is; amounts add up.
        try device.ok("add", "-", stdin: "1 onions, bread\n")
        let now = try read()
        #expect(now["onions"]?.quantity == "3" && now["bread"] != nil && now["onions"]?.typed == "1 onions")
        // Invalid UTF-8 on stdin: refused, nothing written.
        let before = try device.exported()
        let shell = try Executables.runShell(
            "printf 'Br\\377ad\\nmilk\\n' | \"$BASKET\" --db \"$DB\" add -",
            environment: ["BASKET": Executables.path("basket"), "DB": device.directory])
        #expect(shell.status == 1 && shell.stderr.contains("not valid UTF-8"), "\(shell.stderr)")
        #expect(try device.exported() == before)
    }

    @Test func anAmbiguousNameListsTheCandidatesAndChangesNothing() throws {
        let device = Device(root, "d")
        try device.ok("add", "Oat milk, Soy milk")
        let before = try device.exported()
        let result = try device.run("check", "milk")
        #expect(result.status == 1)
        #expect(result.stderr.contains("Oat milk") && result.stderr.contains("Soy milk"))
        #expect(try device.exported() == before)
        // A unique hit is enough.
        try device.ok("check", "soy")
        #expect(try device.listing("--checked").items.map(\.name) == ["Soy milk"])
        let missing = try device.run("check", "bread")
        #expect(missing.status == 1 && missing.stderr.contains("no item"))
    }

    @Test func searchJSONHasTheDocumentedShape() throws {
        let device = Device(root, "d")
        try device.ok("add", "Crème fraîche, Milk, Oat milk")
        struct Output: Decodable {
            struct Offer: Decodable { var name: String }
            struct Result: Decodable {
                var id: String
                var name: String
                var checked: Bool
                var exact: Bool
                var tier: String
                var score: Int
            }
            var query: String
            var offer: Offer?
            var results: [Result]
        }
        let milk = try JSONDecoder().decode(Output.self, from: Data(device.ok("search", "MILK", "--json").utf8))
        #expect(milk.query == "MILK" && milk.offer == nil)
        #expect(milk.results.map(\.name) == ["Milk", "Oat milk"] && milk.results[0].exact)
        #expect(milk.results.map(\.tier) == ["exact", "word-prefix"])
        let typo = try JSONDecoder().decode(Output.self, from: Data(device.ok("search", "cremme", "--json").utf8))
        #expect(typo.results.first?.name == "Crème fraîche" && typo.results.first?.tier == "typo")
        let limited = try JSONDecoder().decode(
            Output.self, from: Data(device.ok("search", "m", "--limit", "1", "--json").utf8))
        #expect(limited.results.count == 1)
        let creme = try JSONDecoder().decode(Output.self, from: Data(device.ok("search", "creme", "--json").utf8))
        #expect(creme.offer?.name == "creme" && creme.results.map(\.name) == ["Crème fraîche"])
        // No item matches: the offer is printed, and the status is 1 (as grep's).
        let text = try device.run("search", "Bread")
        #expect(text.status == 1 && text.stdout.contains("+ Add \"Bread\""))
    }

    @Test func listsAreCreatedAndChosen() throws {
        let device = Device(root, "d")
        try device.ok("list", "new", "Groceries")
        try device.ok("add", "Milk")
        try device.ok("list", "new", "Hardware")
        try device.ok("add", "Nails")
        #expect(try device.listing().items.map(\.name) == ["Nails"])
        try device.ok("list", "use", "groceries")
        #expect(try device.listing().items.map(\.name) == ["Milk"])
        #expect(try device.ok("--list", "Hardware", "ls").contains("Nails"))
        let lists = try device.ok("lists")
        #expect(lists.contains("* Groceries") && lists.contains("  Hardware"))
        let missing = try device.run("list", "use", "Garden")
        #expect(missing.status == 1 && missing.stderr.contains("no list"))
        let duplicate = try device.run("list", "new", "HARDWARE")
        #expect(duplicate.status == 1)
    }

    @Test func aBadImportFileChangesNothing() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        let before = try device.exported()
        let file = root.file("bad.ops")
        let corrupted = before.replacingOccurrences(of: "\tchecked\t", with: "\tcheckd\t")
        try Data(corrupted.utf8).write(to: URL(fileURLWithPath: file))
        let result = try device.run("import", file)
        #expect(result.status == 1 && result.stderr.contains("line"))
        #expect(try device.exported() == before)
    }

    @Test func theReplicaLocationFollowsTheEnvironment() throws {
        let home = root.file("home")
        let result = try Executables.run("basket", ["add", "Milk"], environment: ["BASKET_HOME": home])
        #expect(result.status == 0)
        #expect(FileManager.default.fileExists(atPath: home + "/basket.sqlite"))
        let xdg = root.file("xdg")
        let other = try Executables.run(
            "basket", ["add", "Milk"], environment: ["BASKET_HOME": "", "XDG_DATA_HOME": xdg])
        #expect(other.status == 0)
        #expect(FileManager.default.fileExists(atPath: xdg + "/basket/basket.sqlite"))
    }
}

struct CLIMoreTests {
    let root = TemporaryDirectory("cli-more")

    @Test func concurrentProcessesOnOneReplicaLoseNothing() throws {
        let device = Device(root, "shared")
        try device.ok("list", "new", "Family")
        let processes = try (0..<4).map { worker in
            try Subprocess(
                Executables.path("basket"),
                ["--db", device.directory, "add", (0..<10).map { "Item \(worker)-\($0)" }.joined(separator: ", ")],
                stdout: .discard, stderr: .capture)
        }
        for process in processes {
            let ended = try process.finish()
            #expect(!ended.signaled && ended.status == 0, "\(process.stderr)")
        }
        #expect(try device.listing().items.count == 40)
    }

    /// `ls --json` is written by hand (for speed): byte for byte what `JSONEncoder` writes for the
    /// listing, with quotes, backslashes, slashes, accents, emoji and null fields.
    @Test func theListingJSONIsWhatJSONEncoderWrites() throws {
        let device = Device(root, "json")
        #expect(try device.ok("ls", "--json") == "{\"items\":[]}\n")
        let names = ["Milk \"2%\"", #"C:\Temp"#, "AC/DC album", "Crème fraîche", "🍌 Bananas", "plain", "<b>x</b>"]
        try device.ok("add", "--from", "-", stdin: names.joined(separator: "\n"))
        try device.ok(
            "set", "milk \"2%\"", "--quantity", "1/2 l", "--note", "the \"good\" one \\ ok", "--category", "Dairy")
        try device.ok("check", "plain")
        try device.ok("rm", "<b>x</b>")
        let output = try device.ok("ls", "--all", "--json")
        // Decoded and encoded again by BasketCore's `Item` (every item field, null rather than absent).
        struct List: Codable, Equatable {
            var id: String
            var title: String
        }
        struct Listing: Codable, Equatable {
            var items: [BasketCore.Item]
            var list: List
        }
        let decoded = try JSONDecoder().decode(Listing.self, from: Data(output.utf8))
        #expect(decoded.items.count == names.count)
        #expect(decoded.items.contains { $0.note == #"the "good" one \ ok"# && $0.quantity == "1/2 l" })
        #expect(decoded.items.contains { $0.name == "<b>x</b>" && $0.isDeleted })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(output == String(decoding: try encoder.encode(decoded), as: UTF8.self) + "\n")
    }

    @Test func optionalFieldsAreSetShownAndCleared() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        try device.ok("set", "milk", "--quantity", "2 l", "--note", "organic", "--category", "dairy")
        #expect(try device.ok("ls").contains("dairy\n  [ ] 2 l Milk  (organic)\n"))  // under its aisle
        #expect(try device.ok("ls", "--flat").contains("[ ] 2 l Milk  #dairy  (organic)"))
        let json = try device.ok("ls", "--json")
        #expect(json.contains("\"quantity\":\"2 l\"") && json.contains("\"note\":\"organic\""))
        try device.ok("set", "milk", "--note", "")
        #expect(try device.ok("ls", "--json").contains("\"note\":null"))
        let none = try device.run("set", "milk")
        #expect(none.status == 64)
    }

    @Test func anImportFromAClockFarAheadIsRefusedWithTheOffset() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        let before = try device.exported()
        let ahead = (UInt64(Date().timeIntervalSince1970 * 1000) + 20 * 60_000) << 16
        let hex = String(ahead, radix: 16)
        let padded = String(repeating: "0", count: 16 - hex.count) + hex
        let bundle = """
            basket-ops 1
            L 000000000000000000000000000000aa
            -\ttitle\t\(padded)\t00000000000000bb\t=Future list

            """
        let file = root.file("future.ops")
        try Data(bundle.utf8).write(to: URL(fileURLWithPath: file))
        let result = try device.run("import", file)
        #expect(result.status == 1)
        #expect(result.stderr.contains("clock_skew") && result.stderr.contains("20 min"))
        #expect(try device.exported() == before)
    }

    @Test func historyJSONMarksTheWinner() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk")
        try device.ok("check", "milk")
        try device.ok("uncheck", "milk")
        struct Output: Decodable {
            struct Entry: Decodable {
                var field: String
                var boolValue: Bool?
                var winner: Bool
                var reason: String
            }
            var history: [Entry]
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(device.ok("history", "milk", "--json").utf8))
        let checked = output.history.filter { $0.field == "checked" }
        #expect(checked.map(\.boolValue) == [false, true, false])
        #expect(checked.map(\.winner) == [false, false, true])
    }
}

struct CLIEntryTests {
    let root = TemporaryDirectory("cli-entries")

    @Test func quantitiesTypedWithTheNameGoToTheQuantityField() throws {
        let device = Device(root, "d")
        try device.ok("add", "2 milk; 500 g flour, lemon x3, mac and cheese")
        struct Listing: Decodable {
            struct Item: Decodable {
                var name: String
                var quantity: String?
            }
            var items: [Item]
        }
        let listing = try JSONDecoder().decode(Listing.self, from: Data(device.ok("ls", "--json").utf8))
        let quantities = Dictionary(uniqueKeysWithValues: listing.items.map { ($0.name, $0.quantity ?? "-") })
        #expect(quantities == ["milk": "2", "flour": "500 g", "lemon": "3", "mac and cheese": "-"])
        // Adding again with another amount adds it to the item's; the item stays one.
        try device.ok("add", "3 Milk")
        let again = try JSONDecoder().decode(Listing.self, from: Data(device.ok("ls", "--json").utf8))
        #expect(again.items.filter { $0.name.lowercased() == "milk" }.map(\.quantity) == ["5"])
        // A name on the list is taken as typed.
        try device.ok("add", "--from", "-", stdin: "7 Up\n")
        #expect(try device.ok("add", "7 up").contains("already on the list"))
        // What each add did, in words; a German spelling without umlauts is the item it spells;
        // quantities after the name and glued to their unit.
        #expect(try device.ok("add", "Milk").contains("milk is already on the list"))
        #expect(try device.ok("add", "milk x4").contains("milk: now 9"))
        try device.ok("add", "Käse")
        #expect(try device.ok("add", "kaese x2").contains("Käse: now 2"))
        let out = try device.ok("add", "cream 500ml, 2 x tomatoes")
        #expect(out.contains("Added cream (500ml), tomatoes (2)"), "\(out)")
        let last = try JSONDecoder().decode(Listing.self, from: Data(device.ok("ls", "--json").utf8))
        #expect(last.items.filter { $0.name.lowercased().hasPrefix("k") }.map(\.name) == ["Käse"])
    }
}

struct CLISuggestTests {
    let root = TemporaryDirectory("cli-suggest")

    @Test func suggestionsAreWhatWasBoughtOrRemovedByFrequencyAndRecency() throws {
        let device = Device(root, "d")
        try device.ok("add", "Milk, Eggs, Bread")
        try device.ok("check", "milk")
        usleep(1_100_000)  // adds closer than a second count once
        try device.ok("add", "milk")  // bought again: a second add
        try device.ok("check", "milk")
        try device.ok("rm", "eggs")
        let english = ["LC_ALL": "en_GB.UTF-8"]
        #expect(try device.ok("suggest", environment: english) == "Milk  (bought before)\nEggs  (bought before)\n")
        // Then the catalogue's names the list never had ("eggs" it had: not again).
        let eg = try device.ok("suggest", "eg", environment: english).split(separator: "\n").map {
            $0.split(separator: " ").joined(separator: " ")
        }
        #expect(eg.first == "Eggs (bought before)", "\(eg)")
        #expect(eg.dropFirst().allSatisfy { $0.contains("egg") && $0.hasSuffix("(catalogue: en)") }, "\(eg)")
        #expect(!eg.contains("eggs (catalogue: en)"))
        let json = try device.ok("suggest", "--json", "--limit", "1", environment: english)
        #expect(json.contains("\"name\":\"Milk\"") && json.contains("\"source\":\"history\"") && !json.contains("Eggs"))
    }

    @Test func theCatalogueSuggestsInTheUsersLanguageBelowTheirOwnHistory() throws {
        let device = Device(root, "lang")
        try device.ok("add", "Oat milk")
        try device.ok("check", "oat milk")
        func lines(_ query: String, _ environment: [String: String]) throws -> [String] {
            try device.ok("suggest", query, environment: environment).split(separator: "\n").map {
                $0.split(separator: " ").joined(separator: " ")
            }
        }
        // `basket suggest milk`: both, marked, the history first.
        let milk = try lines("milk", ["LANG": "en_US.UTF-8"])
        #expect(milk.prefix(2) == ["Oat milk (bought before)", "milk (catalogue: en)"], "\(milk)")
        // A slip is forgiven in the catalogue too; LC_ALL wins over LANG.
        #expect(try lines("chese", ["LANG": "fr_FR.UTF-8", "LC_ALL": "en_US.UTF-8"]).first == "cheese (catalogue: en)")
        #expect(try lines("lait", ["LANG": "fr_FR.UTF-8"]).first == "lait (catalogue: fr)")
        #expect(try lines("mil", ["LANG": "de_DE.UTF-8"]).dropFirst().first == "Milch (catalogue: de)")
        // A language the catalogue lacks falls back to English.
        #expect(try lines("bread", ["LANG": "sv_SE.UTF-8"]).first == "bread (catalogue: en)")
        let json = try device.ok("suggest", "milk", "--json", environment: ["LANG": "en_US.UTF-8"])
        #expect(json.contains("\"source\":\"catalogue\"") && json.contains("\"language\":\"en\""))
    }
}
