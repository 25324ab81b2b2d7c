import Foundation
import TestServers
import TestSupport
import Testing

/// One device: a `basket` replica directory driven through real CLI processes.
struct Device {
    let directory: String

    init(_ root: TemporaryDirectory, _ name: String) {
        directory = root.file(name)
    }

    @discardableResult
    func run(_ arguments: String..., stdin: String? = nil) throws -> ProcessResult {
        try Executables.run("basket", ["--db", directory] + arguments, stdin: stdin.map { Data($0.utf8) })
    }

    /// Runs a command that must succeed (`environment` adds to the test's own).
    @discardableResult
    func ok(_ arguments: String..., stdin: String? = nil, environment: [String: String] = [:]) throws -> String {
        let result = try Executables.run(
            "basket", ["--db", directory] + arguments, stdin: stdin.map { Data($0.utf8) }, environment: environment)
        #expect(result.status == 0, "basket \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        return result.stdout
    }

    struct Listing: Decodable {
        struct ListInfo: Decodable {
            var id: String
            var title: String
        }
        struct Item: Decodable {
            var id: String
            var name: String
            var checked: Bool
            var deleted: Bool
        }
        var list: ListInfo?
        var items: [Item]
    }

    func listing(_ filter: String? = nil) throws -> Listing {
        let output = try filter.map { try ok("ls", $0, "--json") } ?? ok("ls", "--json")
        return try JSONDecoder().decode(Listing.self, from: Data(output.utf8))
    }

    /// The bearer token `basket login` saved in this device's config.
    func token() throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/config.json"))
        return try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["token"] as? String)
    }

    /// Everything this device knows, as the canonical export encoding.
    func exported() throws -> String { try ok("export", "-") }

    /// Sends this device's operations to `other` through an export file.
    func send(to other: Device, via root: TemporaryDirectory) throws {
        let file = root.file("bundle-\(UUID().uuidString).ops")
        try ok("export", file)
        try other.ok("import", file)
    }
}

extension Device {
    /// A device of a new account `name` on `server` (password "NAME-password").
    static func signedUp(_ name: String, on server: ServerProcess, in root: TemporaryDirectory) throws -> Device {
        let device = Device(root, name)
        try device.ok("remote", "set", server.url)
        try device.ok("signup", name, "--password-stdin", stdin: "\(name)-password\n")
        return device
    }

    /// Shares this device's current list with `other`, which joins it.
    func share(with other: Device, role: String = "editor") throws {
        let answer = try ok("share", "--role", role, "--json")
        let code =
            (try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])?["code"] as? String ?? ""
        try other.ok("join", code)
    }
}
