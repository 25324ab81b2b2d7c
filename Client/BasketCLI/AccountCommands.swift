import BasketCore
import BasketReplica
import Foundation

/// The account's devices (tokens), its password, and a list's invites.
enum AccountCommands {
    static let devicesUsage = "basket devices [revoke ID]"

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
            struct Row: Encodable {
                var id: String
                var name: String
                var created: Int64
                var lastUsed: Int64
                var current: Bool
            }
            return try context.console.json(
                devices.map {
                    Row(id: $0.id, name: $0.name, created: $0.created, lastUsed: $0.lastUsed, current: $0.isCurrent)
                })
        }
        for device in devices {
            context.console.print(
                "\(device.id)  \(device.name)\(device.isCurrent ? " (this device)" : "")  signed in "
                    + "\(SyncCommands.date(device.created)), last used \(SyncCommands.date(device.lastUsed))")
        }
        if devices.isEmpty { context.console.print("No devices.") }
    }

    /// `basket password`: the current password, then the new one twice (or two lines on stdin with
    /// --password-stdin: current, new). Every other device is signed out.
    static func password(_ context: Context) throws {
        let (transport, _) = try context.transport()
        let old: String
        let new: String
        if context.arguments.has("--password-stdin") {
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

    static let invitesUsage = "basket invites [revoke ID]"

    /// `basket invites`: the current list's invites that still work; `basket invites revoke ID` withdraws one.
    static func invites(_ context: Context) throws {
        let (transport, _) = try context.transport()
        let list = try context.requireList()
        let listID = list.id
        let args = context.arguments.positionals
        if args.first == "revoke" {
            guard args.count == 2 else { throw UsageError(message: "name the invite's ID", usage: invitesUsage) }
            let id = args[1]
            try runBlocking { try await transport.revokeInvite(id, of: listID) }
            context.console.print("Withdrew invite \(id) to \(list.title): its code no longer works")
            return
        }
        guard args.isEmpty else {
            throw UsageError(message: "unknown invites command '\(args[0])'", usage: invitesUsage)
        }
        let invites = try runBlocking { try await transport.invites(of: listID) }
        if context.json {
            struct Row: Encodable {
                var id: String
                var role: Role
                var createdBy: String
                var expiresAt: Int64
                var usesLeft: Int
            }
            return try context.console.json(
                invites.map {
                    Row(
                        id: $0.id, role: $0.role, createdBy: $0.createdBy, expiresAt: $0.expiresAt,
                        usesLeft: $0.usesLeft)
                })
        }
        for invite in invites {
            context.console.print(
                "\(invite.id)  \(invite.role.rawValue), by \(invite.createdBy), \(invite.usesLeft) use"
                    + "\(invite.usesLeft == 1 ? "" : "s") left, until \(SyncCommands.date(invite.expiresAt))")
        }
        if invites.isEmpty { context.console.print("No invites to \(list.title) are out.") }
    }
}
