import BasketCore
import BasketReplica
import Foundation

/// The account: signup, login, logout, its devices (tokens) and its password.
enum AccountCommands {
    static let devicesUsage = "basket devices [revoke ID [--yes]]"

    /// `basket devices`: every device signed in to the account; `basket devices revoke ID` signs one out.
    static func devices(_ context: Context) throws {
        let (transport, _) = try context.transport()
        let args = context.arguments.positionals
        if args.first == "revoke" {
            guard args.count == 2 else { throw UsageError(message: "name the device's ID", usage: devicesUsage) }
            let id = args[1]
            try context.confirm("Sign out device \(id)? It keeps its lists; it syncs again once signed in.")
            try runBlocking { try await transport.revokeDevice(id) }
            context.console.print("Signed out device \(id): its next sync is refused; its lists and changes stay on it")
            return
        }
        guard args.isEmpty else {
            throw UsageError(message: "unknown devices command '\(args[0])'", usage: devicesUsage)
        }
        let devices = try runBlocking { try await transport.devices() }
        if context.json {
            return try context.console.json(
                Output.Devices(
                    devices: devices.map {
                        Output.Device(
                            id: $0.id, name: $0.name, created: Output.time($0.created),
                            lastUsed: Output.time($0.lastUsed), current: $0.isCurrent)
                    }))
        }
        for device in devices {
            context.console.print(
                "\(device.id)  \(device.name)\(device.isCurrent ? " (this device)" : "")  signed in "
                    + "\(SharingCommands.date(device.created)), last used \(SharingCommands.date(device.lastUsed))")
        }
        if devices.isEmpty { context.console.print("No devices.") }
    }

    /// `basket password`: the current password, then the new one twice (or two lines on stdin with
    /// --password-stdin: current, new). Every other device is signed out.
    static func password(_ context: Context) throws {
        let (transport, _) = try context.transport()
        let old: String
        let new: String
        if context.arguments.has(.passwordStdin) {
            let text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            let lines = text.split(whereSeparator: \.isNewline).map(String.init)
            guard lines.count >= 2 else {
                throw UsageError(
                    message: "--password-stdin takes two lines: the current password, then the new one",
                    usage: "basket password [--password-stdin]")
            }
            (old, new) = (lines[0], lines[1])
        } else {
            guard isatty(0) == 1, let current = getpass("Current password: ") else {
                throw CommandError(
                    message: "no terminal to ask for passwords: use --password-stdin", code: "no_password")
            }
            old = String(cString: current)
            guard let first = getpass("New password: ") else {
                throw CommandError(message: "no new password given", code: "no_password")
            }
            let entered = String(cString: first)
            guard let second = getpass("New password again: "), String(cString: second) == entered else {
                throw CommandError(message: "the two new passwords differ; nothing changed", code: "no_password")
            }
            new = entered
        }
        let revoked = try runBlocking { try await transport.changePassword(from: old, to: new) }
        context.console.print(
            "Password changed; \(revoked) other device\(revoked == 1 ? " was" : "s were") signed out")
    }

    static func account(_ context: Context, signUp: Bool) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(
                message: "name the account", usage: "basket \(signUp ? "signup" : "login") NAME [--password-stdin]")
        }
        let name = context.arguments.positionals[0]
        let (transport, config) = try context.transport(requireToken: false)
        let password = try context.password(confirming: signUp)
        let device = context.arguments.value(.device) ?? Self.deviceName()
        let invite = context.arguments.value(.invite)
        let token = try runBlocking {
            if signUp { try await transport.signUp(name: name, password: password, invite: invite) }
            return try await transport.login(name: name, password: password, device: device)
        }
        var updated = config
        if let before = config.replicaAccount ?? config.account, before != name.lowercased() {
            // Another account on this device: writes from now on under a new replica id, or the
            // members answer of a list both share would show one device under both accounts.
            try context.replica().startAsNewDevice()
        }
        updated.account = name.lowercased()
        updated.replicaAccount = name.lowercased()
        updated.token = token
        try context.saveConfig(updated)
        context.console.print(
            signUp ? "Created account \(name.lowercased()) and signed in" : "Signed in as \(name.lowercased())")
        guard !signUp else { return }
        // The account's lists come along at once: 'basket lists' on a new device shows them.
        do {
            let engine = try SyncCommands.engine(context)
            let (signedIn, _) = try context.transport()
            let fetched = try runBlocking {
                var titles: [ListID] = []
                for list in try await signedIn.lists() {
                    _ = try await engine.adopt(list.id, role: list.role)
                    titles.append(list.id)
                }
                return titles
            }
            let lists = try context.replica().lists()
            let names = fetched.compactMap { id in lists.first { $0.id == id }?.title }
            if !names.isEmpty {
                context.console.print(
                    "Fetched \(names.count) list\(names.count == 1 ? "" : "s"): "
                        + names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", …" : ""))
            }
        } catch {
            context.console.error("Your lists were not fetched yet (\(error)); 'basket sync' fetches them.")
        }
    }

    /// This machine's name, as the devices list shows a new sign-in by default.
    static func deviceName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return "basket on \(host.isEmpty ? "this machine" : String(host.prefix(40)))"
    }

    static func logout(_ context: Context) throws {
        let (transport, config) = try context.transport()
        var everywhere = 0
        if context.arguments.has(.everywhere) {
            // Every device of the account: a failure here must be seen, not swallowed.
            try context.confirm("Sign out every device of \(config.account ?? "this account"), this one included?")
            everywhere = try runBlocking { try await transport.logoutEverywhere() }
        } else {
            try? runBlocking { try await transport.logout() }
        }
        var updated = config
        updated.token = nil
        updated.account = nil
        try context.saveConfig(updated)
        context.console.print(
            context.arguments.has(.everywhere)
                ? "Signed out everywhere (\(everywhere) device\(everywhere == 1 ? "" : "s"))" : "Signed out")
    }

    /// `basket delete-account`: deletes the account on the server (its password asked again),
    /// then signs this device out; the lists here stay, read-only.
    static func deleteAccount(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(message: "delete-account takes no argument", usage: deleteAccountUsage)
        }
        let (transport, config) = try context.transport()
        guard let account = config.account else {
            throw CommandError(message: "not signed in: 'basket login NAME' first", code: "not_signed_in")
        }
        try context.confirm(
            "Delete the account \(account) for good? Lists only you are in are deleted from the server; a shared"
                + " list you are the last owner of passes to another member; every device is signed out.")
        let password = try context.password()
        let done = try runBlocking { try await transport.deleteAccount(password: password) }
        let replica = try context.replica()
        for state in try replica.syncStates() where state.isRegistered { try replica.markNoLongerMember(state.list) }
        var updated = config
        updated.token = nil
        updated.account = nil
        try context.saveConfig(updated)
        func lists(_ n: Int) -> String { n == 1 ? "1 list" : "\(n) lists" }
        context.console.print(
            "Deleted the account \(account): \(lists(done.deleted)) deleted, \(lists(done.handedOver)) passed to"
                + " another member, \(lists(done.left)) left. This device keeps its copies, read-only.")
    }

    static let deleteAccountUsage = "basket delete-account [--yes] [--password-stdin]"
}
