import Foundation
import Spawn
import TestServers
import TestSupport
import Testing

/// docs/cli-json.md is the contract of `--json`: every command of
/// `basket help` runs here against a real server, and each output is held to the shape the page
/// gives it (or `Messages` for a command without one). A key the page does not name, a key it
/// names that is missing, another type, a time that is not ISO 8601 UTC, an array at the top, or
/// anything on standard output beside the one object fails the test.
struct CLIJSONContractTests {
    let root = TemporaryDirectory("json-contract")
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyCommandPrintsTheShapeItsPageGives() throws {
        let page = try String(contentsOf: Self.checkout.appendingPathComponent("docs/cli-json.md"), encoding: .utf8)
        let contract = try JSONContract(markdown: page)
        let server = try ServerProcess(dataDirectory: root.file("server"))
        let alice = try Device.signedUp("alice", on: server, in: root)
        let bob = try Device.signedUp("bobby", on: server, in: root)
        var ran: [[String]] = []

        /// Runs `basket --json ARGS` on `device` and holds its output to the shape named `shape`.
        @discardableResult
        func run(
            _ device: Device, _ shape: String, _ arguments: [String], status: Int32 = 0, stdin: String? = nil,
            environment: [String: String] = [:]
        ) throws -> JSONValue {
            let result = try Executables.run(
                "basket", ["--db", device.directory, "--json"] + arguments, stdin: stdin.map { Data($0.utf8) },
                environment: environment)
            #expect(result.status == status, "basket \(arguments.joined(separator: " ")): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == 1, "basket \(arguments.joined(separator: " ")) printed:\n\(result.stdout)")
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))
            let problems = contract.check(value, against: contract.shape(of: shape))
            #expect(problems.isEmpty, "basket \(arguments.joined(separator: " ")) (\(shape)): \(problems)")
            if case .object = value {
            } else {
                Issue.record("basket \(arguments.joined(separator: " ")): not an object")
            }
            ran.append(arguments)
            return value
        }

        // Items.
        try run(alice, "list new", ["list", "new", "Family"])
        try run(alice, "add", ["add", "Milk, 2 Bread, Eggs"])
        try run(alice, "check", ["check", "milk"])
        try run(alice, "check", ["check", "milk", "bread"])
        try run(alice, "uncheck", ["uncheck", "milk"])
        try run(alice, "toggle", ["toggle", "milk"])
        try run(alice, "rm", ["rm", "bread"])
        try run(alice, "clear", ["clear"])
        try run(alice, "clear", ["clear"])
        try run(alice, "rename", ["rename", "eggs", "--to", "Free-range eggs"])
        try run(alice, "set", ["set", "free-range eggs", "--quantity", "6"])
        try run(alice, "undo", ["undo"])
        // The list and its past.
        try run(alice, "ls", ["ls"])
        try run(alice, "ls --at", ["ls", "--at", "now"])
        try run(alice, "changes", ["changes", "--since", "-1h"])
        try run(alice, "history", ["history", "milk"])
        try run(alice, "aisles", ["aisles"])
        try run(alice, "Messages", ["aisles", "set", "Dairy & eggs, Bakery"])
        try run(alice, "Shop", ["shops", "add", "Lidl"])
        try run(alice, "shops", ["shops"])
        try run(alice, "Messages", ["shops", "rename", "Lidl", "Lidl Süd"])
        try run(alice, "Shop", ["aisles", "--shop", "Lidl Süd", "set", "Bakery, Dairy & eggs"])
        try run(alice, "Shop", ["aisles", "--shop", "Lidl Süd"])
        try run(alice, "usuals", ["usuals"])
        try run(alice, "Messages", ["usuals", "dismiss", "milk"])
        try run(alice, "add", ["add", "--due"])
        try run(alice, "Messages", ["shops", "rm", "Lidl Süd"])
        try run(alice, "search", ["search", "egg"])
        try run(alice, "search", ["search", "zzz"], status: 1)
        try run(alice, "suggest", ["suggest"])
        // Lists.
        try run(alice, "list use", ["list", "use", "Family"])
        try run(alice, "list rename", ["list", "rename", "Family"])
        try run(alice, "list language", ["list", "language"])
        try run(alice, "list language", ["list", "language", "en"])
        try run(alice, "list new", ["list", "new", "Party"])
        try run(alice, "Messages", ["list", "archive", "Party"])
        try run(alice, "Messages", ["list", "unarchive", "Party"])
        try run(alice, "Messages", ["list", "rm", "Party", "--yes"])
        try run(alice, "list new", ["list", "new", "Plain", "--unencrypted"])
        try run(alice, "Messages", ["list", "encrypt", "Plain"])
        try run(alice, "list use", ["list", "use", "Family"])
        try run(alice, "lists", ["lists"])
        let file = root.file("family.ops")
        try run(alice, "export", ["export", file])
        try run(alice, "import", ["import", file])
        // Server, account, sharing.
        try run(alice, "remote", ["remote"])
        try run(alice, "Messages", ["remote", "set", server.url])
        let invite = try run(alice, "share", ["share"])
        guard case .string(let code)? = invite["code"], case .string(let inviteID)? = invite["id"] else {
            Issue.record("share gave no code")
            return
        }
        try run(alice, "invites", ["invites"])
        try run(alice, "Messages", ["invites", "revoke", inviteID])
        let second = try run(alice, "share", ["share"])
        guard case .string(let secondCode)? = second["code"] else { return }
        _ = code
        try run(bob, "join", ["join", secondCode])
        try run(bob, "add", ["add", "Jam"])
        try run(alice, "members", ["members"])
        try run(alice, "share --add-only", ["share", "--add-only", "--name", "Kitchen speaker"])
        try run(bob, "shopping", ["shopping", "start", "--at", "Lidl"])
        try run(alice, "shopping", ["shopping"])
        try run(bob, "shopping", ["shopping", "done"])
        try run(alice, "Messages", ["members", "role", "bobby", "viewer"])
        try run(bob, "sync", ["sync"])
        try run(bob, "status", ["status"])
        try run(alice, "sync", ["sync"])
        try run(alice, "status", ["status"])
        try run(bob, "Messages", ["leave", "--yes"])
        try run(bob, "sync", ["sync", "--discard-refused"])
        let laptop = Device(root, "alice-laptop")
        try laptop.ok("remote", "set", server.url)
        try run(laptop, "Messages", ["login", "alice", "--password-stdin"], stdin: "alice-password\n")
        let devices = try run(alice, "devices", ["devices"])
        if case .array(let rows)? = devices["devices"],
            case .string(let id)? = rows.first(where: { $0["current"] == .bool(false) })?["id"]
        {
            try run(alice, "Messages", ["devices", "revoke", id])
        } else {
            Issue.record("no other device to sign out: \(devices)")
        }
        try run(laptop, "Messages", ["login", "alice", "--password-stdin"], stdin: "alice-password\n")
        try run(laptop, "Messages", ["logout"])
        let carol = Device(root, "carol")
        try carol.ok("remote", "set", server.url)
        let signedUp = try run(carol, "signup", ["signup", "carol", "--password-stdin"], stdin: "carol-password\n")
        try run(carol, "Messages", ["password", "--password-stdin"], stdin: "carol-password\ncarol-password-2\n")
        // The recovery code signup showed (once, in its messages) sets a third password.
        var said: [JSONValue] = []
        if case .array(let messages)? = signedUp["messages"] { said = messages }
        let line = try #require(
            said.compactMap { value -> String? in
                if case .string(let text) = value, text.hasPrefix("Your recovery code: ") { return text }
                return nil
            }.first, "signup showed no recovery code: \(signedUp)")
        let recoveryCode = String(line.dropFirst("Your recovery code: ".count).prefix { $0 != "\n" })
        try run(
            carol, "Messages", ["recover", "carol", "--password-stdin"], stdin: "\(recoveryCode)\ncarol-password-3\n")
        try run(carol, "Messages", ["delete-account", "--password-stdin", "--yes"], stdin: "carol-password-3\n")
        // The rest: the replica, the shell, help.
        try run(alice, "Messages", ["doctor"])
        try run(alice, "Messages", ["completion", "bash"])
        try run(alice, "Messages", ["help"])

        // `sync --watch --json`: JSON lines and nothing else, one per change as it arrives.
        let watch = try Subprocess(
            Executables.path("basket"), ["--db", alice.directory, "--json", "sync", "--watch"], stderr: .discard)
        defer {
            watch.signal(SIGTERM)
            if watch.wait(timeout: 5) == nil { watch.kill() }
        }
        #expect(try server.waitForMetric("basket_watchers", atLeast: 1), "the watch never parked")
        func waitForLines(_ count: Int) {
            let deadline = Date().addingTimeInterval(20)
            while watch.stdout.split(separator: "\n").count < count && Date() < deadline { usleep(20_000) }
        }
        try alice.ok("add", "Tea")
        waitForLines(1)
        try alice.ok("rm", "Tea")
        waitForLines(2)
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.count >= 2, "the watch printed: \(watch.stdout)")
        for line in lines {
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
            let problems = contract.check(value, against: contract.shape(of: "sync --watch"))
            #expect(problems.isEmpty, "sync --watch: \(line): \(problems)")
        }
        ran.append(["sync", "--watch"])

        // Every command `basket help` lists ran above.
        let help = try alice.ok("help")
        let commands = help.components(separatedBy: "COMMANDS:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").map { line in
                // The name's words, lower case; the summary begins with a capital.
                line.split(separator: " ").prefix { $0.first?.isLowercase == true }.joined(separator: " ")
            }
        #expect(commands.count > 30)
        for command in commands {
            let words = command.split(separator: " ").map(String.init)
            #expect(ran.contains { $0.starts(with: words) }, "'basket \(command) --json' is not checked")
        }
        // Every block of the page is a shape the checker reads.
        #expect(contract.shapes.count > 30)
    }

    @Test func theCheckerRefusesWhatThePageDoesNotSay() throws {
        let contract = try JSONContract(
            markdown: """
                ```json Thing
                {"id": "id", "at": "time", "n": "int", "tags": ["string"], "kind": "a|b", "note": "string?"}
                ```
                """)
        func problems(_ text: String) throws -> [String] {
            contract.check(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), against: .string("Thing"))
        }
        #expect(try problems(#"{"id":"0a","at":"2026-12-06T10:32:15.438Z","n":1,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":1796547600000,"n":1,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":"2026-12-06 10:32","n":1,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":"2026-12-06T10:32:15Z","n":1.5,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":"2026-12-06T10:32:15Z","n":1,"tags":[],"kind":"c"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":"2026-12-06T10:32:15Z","n":1,"tags":[],"kind":"a","x":1}"#).isEmpty)
        #expect(try !problems(#"{"id":"XY","at":"2026-12-06T10:32:15Z","n":1,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"at":"2026-12-06T10:32:15Z","n":1,"tags":[],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"{"id":"0a","at":"2026-12-06T10:32:15Z","n":1,"tags":[true],"kind":"a"}"#).isEmpty)
        #expect(try !problems(#"[{"id":"0a"}]"#).isEmpty)
    }
}

/// Any JSON value, decoded strictly: a flag is never a number, a number never a flag.
enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
}

/// The shapes of docs/cli-json.md: each block ```` ```json NAME ```` holds one, a command's (`ls
/// --at`) or a type's (`Item`).
struct JSONContract {
    let shapes: [String: JSONValue]

    init(markdown: String) throws {
        var shapes: [String: JSONValue] = [:]
        let blocks = markdown.components(separatedBy: "```json ").dropFirst()
        for block in blocks {
            let name = block.prefix { $0 != "\n" }.trimmingCharacters(in: .whitespaces)
            let body = block.drop { $0 != "\n" }.components(separatedBy: "```")[0]
            shapes[name] = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
        }
        self.shapes = shapes
    }

    func shape(of name: String) -> JSONValue { shapes[name] ?? .string("missing shape '\(name)'") }

    /// What in `value` departs from `shape`, each with where it is.
    func check(_ value: JSONValue, against shape: JSONValue, at path: String = "$") -> [String] {
        switch shape {
        case .string(let type):
            return check(value, type: type, at: path)
        case .array(let element):
            guard case .array(let items) = value else { return ["\(path): \(value) is not an array"] }
            return items.enumerated().flatMap { index, item in
                check(item, against: element.first ?? .null, at: "\(path)[\(index)]")
            }
        case .object(let fields):
            guard case .object(let present) = value else { return ["\(path): \(value) is not an object"] }
            var problems = present.keys.filter { fields[$0] == nil }.sorted().map { "\(path).\($0): not on the page" }
            for (key, type) in fields.sorted(by: { $0.key < $1.key }) {
                guard let item = present[key] else {
                    if case .string(let name) = type, name.hasSuffix("?") { continue }
                    problems.append("\(path).\(key): missing")
                    continue
                }
                problems += check(item, against: type, at: "\(path).\(key)")
            }
            return problems
        default:
            return ["\(path): the page's shape \(shape) is not one the checker reads"]
        }
    }

    private func check(_ value: JSONValue, type: String, at path: String) -> [String] {
        if type.hasSuffix("?") {
            if value == .null { return [] }
            return check(value, type: String(type.dropLast()), at: path)
        }
        if let named = shapes[type] { return check(value, against: named, at: path) }
        let wrong = ["\(path): \(value) is not \(type)"]
        switch (type, value) {
        case ("string", .string): return []
        case ("bool", .bool): return []
        case ("int", .number(let n)): return n == n.rounded() ? [] : wrong
        case ("number", .number): return []
        case ("id", .string(let text)):
            return !text.isEmpty && text.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) ? [] : wrong
        case ("time", .string(let text)):
            return text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z/) != nil ? [] : wrong
        case (_, .string(let text)) where type.contains("|"):
            return type.split(separator: "|").contains(Substring(text)) ? [] : wrong
        default:
            return shapes[type] == nil && !["string", "bool", "int", "number", "id", "time"].contains(type)
                && !type.contains("|")
                ? ["\(path): the page names no type '\(type)'"] : wrong
        }
    }
}
