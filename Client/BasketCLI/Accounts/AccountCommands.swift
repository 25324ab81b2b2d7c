import BasketCore
import BasketReplica
import BasketSeal
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
        let (transport, config) = try context.transport()
        let (old, new) = try secretThenNewPassword(
            context, "the current password", prompt: "Current password: ", usage: "basket password [--password-stdin]")
        let account = config.account ?? ""
        // The password never leaves the device: the server gets the login secrets, and the
        // account's private key wrapped again under the new password's key.
        let revoked = try runBlocking {
            try await AccountSession.changePassword(name: account, from: old, to: new, at: transport)
        }
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
        let session = try runBlocking {
            signUp
                ? try await AccountSession.signUp(
                    name: name, password: password, invite: invite, device: device, at: transport)
                : try await AccountSession.signIn(name: name, password: password, device: device, at: transport)
        }
        try keep(session, of: name, config: config, context)
        context.console.print(
            signUp ? "Created account \(name.lowercased()) and signed in" : "Signed in as \(name.lowercased())")
        if let code = session.recoveryCode { Self.show(recoveryCode: code, context) }
        if session.keyPair == nil {
            context.console.error(
                "This account's key pair did not open with this password: its encrypted lists stay closed here.")
        }
        guard !signUp else { return }
        // The account's lists come along at once: 'basket lists' on a new device shows them.
        do {
            let engine = try SyncCommands.engine(context)
            let (signedIn, _) = try context.transport()
            let replica = try context.replica()
            let keyring = context.keyring
            let account = name.lowercased()
            let (fetched, missing) = try runBlocking {
                let memberships = try await signedIn.lists()
                // An encrypted list's keys come from the envelope another device of the account left.
                let exchanged = try await Envelopes.exchange(
                    memberships, account: account, replica: replica, keyring: keyring, transport: signedIn)
                var titles: [ListID] = []
                for list in memberships where !exchanged.missing.contains(list.id) {
                    _ = try await engine.adopt(list.id, role: list.role)
                    titles.append(list.id)
                }
                return (titles, exchanged.missing.count)
            }
            let lists = try context.replica().lists()
            let names = fetched.compactMap { id in lists.first { $0.id == id }?.title }
            if !names.isEmpty {
                context.console.print(
                    "Fetched \(names.count) list\(names.count == 1 ? "" : "s"): "
                        + names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", …" : ""))
            }
            if missing > 0 {
                context.console.print(
                    "\(missing) encrypted list\(missing == 1 ? " has" : "s have") no keys on this device yet: join "
                        + "\(missing == 1 ? "it" : "them") with an invite code, or sync on a device that has them first."
                )
            }
        } catch {
            context.console.error("Your lists were not fetched yet (\(error)); 'basket sync' fetches them.")
        }
    }

    /// A secret (`what`: the current password, a recovery code) and a new password: two lines on
    /// stdin with --password-stdin, else asked on the terminal, the new password twice.
    static func secretThenNewPassword(_ context: Context, _ what: String, prompt: String, usage: String) throws -> (
        String, String
    ) {
        if context.arguments.has(.passwordStdin) {
            let text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            let lines = text.split(whereSeparator: \.isNewline).map(String.init)
            guard lines.count >= 2 else {
                throw UsageError(
                    message: "--password-stdin takes two lines: \(what), then the new password", usage: usage)
            }
            return (lines[0], lines[1])
        }
        guard isatty(0) == 1, let secret = getpass(prompt) else {
            throw CommandError(message: "no terminal to ask for \(what): use --password-stdin", code: "no_password")
        }
        let given = String(cString: secret)
        guard let first = getpass("New password: ") else {
            throw CommandError(message: "no new password given", code: "no_password")
        }
        let entered = String(cString: first)
        guard let second = getpass("New password again: "), String(cString: second) == entered else {
            throw CommandError(message: "the two new passwords differ; nothing changed", code: "no_password")
        }
        return (given, entered)
    }

    /// This device signed in as `name` with `session`: its token and the account's key pair kept.
    static func keep(
        _ session: AccountSession.SignedIn, of name: String, config: RemoteConfig, _ context: Context
    ) throws {
        var updated = config
        if let before = config.replicaAccount ?? config.account, before != name.lowercased() {
            // Another account on this device: writes from now on under a new replica id, or the
            // members answer of a list both share would show one device under both accounts.
            try context.replica().startAsNewDevice()
        }
        updated.account = name.lowercased()
        updated.replicaAccount = name.lowercased()
        updated.token = session.token
        try context.saveConfig(updated)
        try Envelopes.keep(session.keyPair, in: context.replica())
    }

    /// A recovery code, shown once: the only way back into encrypted lists without the password.
    static func show(recoveryCode code: String, _ context: Context) {
        context.console.print(
            """
            Your recovery code: \(code)
            Write it down and keep it apart from this device. With it, a forgotten password still
            opens your encrypted lists ('basket recover NAME'); without the password or this code,
            nobody can read them, the server included. It is shown this once.
            """)
    }

    /// `basket recover NAME`: a forgotten password's way back. The recovery code and a new password
    /// (asked, or two lines on stdin with --password-stdin: the code, then the new password); every
    /// other device of the account is signed out, this one signed in, and the encrypted lists open.
    static func recover(_ context: Context) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "name the account", usage: "basket recover NAME [--password-stdin]")
        }
        let name = context.arguments.positionals[0]
        let (transport, config) = try context.transport(requireToken: false)
        let (code, new) = try secretThenNewPassword(
            context, "the recovery code", prompt: "Recovery code: ", usage: "basket recover NAME [--password-stdin]")
        guard (try? AccountKeys.recoveryBytes(code)) != nil else {
            throw CommandError(
                message: "that is not a recovery code (26 letters and digits, dashes optional)", code: "bad_code")
        }
        guard new.count >= 8 else {
            throw CommandError(message: "a password has at least 8 characters", code: "weak_password")
        }
        let device = context.arguments.value(.device) ?? Self.deviceName()
        let session = try runBlocking {
            try await AccountSession.recover(name: name, code: code, newPassword: new, device: device, at: transport)
        }
        try keep(session, of: name, config: config, context)
        context.console.print(
            "New password set for \(name.lowercased()); every other device was signed out. 'basket sync' brings"
                + " your lists.")
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
        try Envelopes.keep(nil, in: context.replica())
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
        let secret = AccountKeys.stretch(password: password, account: account).loginText
        let done = try runBlocking { try await transport.deleteAccount(password: secret) }
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
