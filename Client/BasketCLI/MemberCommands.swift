import BasketCore
import BasketReplica
import Foundation

/// Who shares a list, and managing them: `basket members`, `basket leave`, `basket list rm`.
enum MemberCommands {
    static let membersUsage = "basket members [rm NAME | role NAME owner|editor|viewer]"

    /// The current list, when it is shared on the server (else an error saying how to share it).
    static func sharedList(_ context: Context) throws -> ListInfo {
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let state = try context.replica().syncState(of: list.id)
        if state.noLongerMember {
            throw CommandError(
                message: "\(list.title) is no longer shared with you on the server", code: "no_longer_member")
        }
        guard state.isRegistered else {
            throw CommandError(
                message:
                    "\(list.title) is on this device only: 'basket sync' puts it on the server, 'basket share' shares it",
                code: "not_shared")
        }
        return list
    }

    static func members(_ context: Context) throws {
        let args = context.arguments.positionals
        let list = try sharedList(context)
        let (transport, config) = try context.transport()
        let listID = list.id
        switch args.first {
        case nil:
            let members = try runBlocking { try await transport.members(of: listID) }
            if context.json {
                struct Row: Encodable {
                    var account: String
                    var role: Role
                    var you: Bool
                }
                return try context.console.json(
                    members.map { Row(account: $0.account, role: $0.role, you: $0.account == config.account) })
            }
            context.console.print("\(list.title): \(members.count) member\(members.count == 1 ? "" : "s")")
            for member in members {
                context.console.print(
                    "  \(member.account.padding(toLength: 20, withPad: " ", startingAt: 0)) \(member.role.rawValue)"
                        + (member.account == config.account ? "  (you)" : ""))
            }
        case "rm" where args.count == 2:
            let name = args[1].lowercased()
            try context.confirm("Remove \(name) from \(list.title)? Their copy stays with them, read-only.")
            try runBlocking { try await transport.removeMember(name, from: listID) }
            context.console.print("Removed \(name) from \(list.title); their next sync tells them")
        case "role" where args.count == 3:
            let name = args[1].lowercased()
            guard let role = Role(rawValue: args[2]) else {
                throw UsageError(message: "a role is owner, editor or viewer", usage: membersUsage)
            }
            try runBlocking { try await transport.setRole(role, of: name, in: listID) }
            context.console.print("\(name) is now \(role == .viewer ? "a" : "an") \(role.rawValue) of \(list.title)")
        default:
            throw UsageError(
                message: args.first.map { "unknown or incomplete members command '\($0)'" } ?? "", usage: membersUsage)
        }
    }

    /// `basket leave`: sends what waits, leaves the list on the server; the copy here stays, read-only.
    static func leave(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(message: "leave takes no argument (--list NAME picks the list)", usage: "basket leave")
        }
        let list = try sharedList(context)
        let (transport, config) = try context.transport()
        guard let account = config.account else {
            throw CommandError(message: "not signed in: 'basket login NAME' first", code: "not_signed_in")
        }
        try context.confirm("Leave \(list.title)? Coming back takes a new invite from a member.")
        let engine = try SyncCommands.engine(context)
        let listID = list.id
        try runBlocking {
            _ = try? await engine.sync(listID)  // what waits goes first, where the server takes it
            try await transport.removeMember(account, from: listID)
        }
        try context.replica().markNoLongerMember(listID)
        context.console.print(
            "Left \(list.title). Its copy stays on this device, read-only; 'basket list rm \(list.title)' removes it.")
    }

    /// `basket list rm [NAME]`: an owner deletes a shared list for everyone; a list that is on
    /// this device only (never shared, or no longer shared with you) is removed from it.
    static func removeList(_ context: Context) throws {
        let replica = try context.replica()
        let name = context.arguments.positionals.joined(separator: " ")
        let list: ListInfo
        if name.isEmpty {
            guard let current = try context.list(create: false) else {
                throw CommandError(message: "no list to remove", code: "no_such_list")
            }
            list = current
        } else {
            list = try Context.findList(name, in: try replica.lists())
        }
        let state = try replica.syncState(of: list.id)
        var deletedOnServer = false
        if state.isRegistered && !state.noLongerMember {
            let (transport, _) = try context.transport()
            let listID = list.id
            let remote = try runBlocking { try await transport.lists() }.first { $0.id == listID }
            if let remote {
                guard remote.role == .owner else {
                    throw CommandError(
                        message:
                            "only an owner can delete \(list.title) (you are \(remote.role == .editor ? "an" : "a") "
                            + "\(remote.role.rawValue)); 'basket leave' leaves it, then 'basket list rm' removes the copy here",
                        code: "forbidden")
                }
                try context.confirm("Delete \(list.title) for everyone who shares it? This cannot be undone.")
                try runBlocking { try await transport.deleteList(listID) }
                deletedOnServer = true
            }
        }
        if !deletedOnServer {
            let pending = try replica.outbox.changes(in: list.id)
            try context.confirm(
                "Remove \(list.title) from this device"
                    + (pending > 0 ? ", with \(LiveSync.Status.changes(pending)) never sent" : "")
                    + "? This cannot be undone.")
        }
        try replica.removeList(list.id)
        if try replica.setting(Context.currentListSetting) == list.id.description {
            try replica.setSetting(Context.currentListSetting, nil)
        }
        context.console.print(
            deletedOnServer
                ? "Deleted \(list.title) for everyone: the other members' next sync tells them"
                : "Removed \(list.title) from this device")
    }
}
