import BasketCore
import BasketReplica
import BasketSeal
import Foundation

/// Sharing a list: invites (share, invites, join), its members, leaving it.
enum SharingCommands {
    static let shareUsage =
        "basket share [--role editor|viewer|owner] [--uses N] [--expires 2d|12h|30m] | --add-only --name NAME"

    /// `2d`, `12h`, `30m` or a number of seconds, as seconds.
    static func duration(_ text: String) -> Int? {
        let units: [Character: Int] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        if let unit = text.last, let factor = units[unit], let n = Int(text.dropLast()), n > 0 { return n * factor }
        return Int(text).flatMap { $0 > 0 ? $0 : nil }
    }

    static func share(_ context: Context) throws {
        if context.arguments.has(.addOnly) {
            guard let name = context.arguments.value(.keyName) else {
                throw UsageError(message: "--add-only needs --name: what the key is for", usage: shareUsage)
            }
            return try InboxCommands.makeKey(context, try sharedList(context), name: name)
        }
        guard let role = Role(rawValue: context.arguments.value(.role) ?? Role.editor.rawValue) else {
            throw UsageError(message: "--role is editor, viewer or owner", usage: shareUsage)
        }
        var uses = 1
        if let raw = context.arguments.value(.uses) {
            guard let n = Int(raw), (1...100).contains(n) else {
                throw UsageError(message: "--uses is a number from 1 to 100", usage: shareUsage)
            }
            uses = n
        }
        var expiresIn: Int?
        if let raw = context.arguments.value(.expires) {
            guard let seconds = duration(raw), (60...30 * 86_400).contains(seconds) else {
                throw UsageError(message: "--expires is a time from 1m to 30d, like 2d, 12h or 30m", usage: shareUsage)
            }
            expiresIn = seconds
        }
        let list = try context.requireList()
        // What this device knows already is said without asking the server.
        let state = try context.replica().syncState(of: list.id)
        if state.noLongerMember {
            throw CommandError(
                message: "\(list.title) is no longer shared with you on the server: there is nothing to invite to",
                code: "no_longer_member")
        }
        if state.role == .viewer {
            throw CommandError(
                message: "you can only view \(list.title): viewers cannot invite (an owner can make you an editor)",
                code: "forbidden")
        }
        if role == .owner, let known = state.role, known != .owner {
            throw CommandError(
                message: "only an owner of \(list.title) can invite an owner (you are an \(known.rawValue))",
                code: "forbidden")
        }
        let engine = try SyncCommands.engine(context)
        let (transport, _) = try context.transport()
        let listID = list.id
        let (count, seconds) = (uses, expiresIn)
        let encrypted = context.keyring.keys(of: listID) != nil
        try runBlocking {
            _ = try await engine.sync(listID)
            // An encrypted list's code carries its newest key: taken first (or made, when a member
            // left and the list awaits one), so the invite does not hand on a key that is no more.
            if encrypted { _ = try await engine.keyRenewal?.renewKeys(of: listID) }
        }
        // The title goes with the invite, so whoever is invited sees which list before joining;
        // an encrypted list's sealed, and its keys after the code (never sent to the server).
        let keys = context.keyring.keys(of: listID)
        var title = try? ItemName.clean(list.title, for: .title)
        if let keys, let clear = title { title = keys.sealedInviteTitle(clear) }
        let sentTitle = title
        let invite = try runBlocking {
            try await transport.invite(to: listID, role: role, uses: count, expiresIn: seconds, title: sentTitle)
        }
        var code = invite.code ?? ""
        if let keys { code += "." + keys.inviteSecret }
        if context.json {
            return try context.console.json(
                Output.NewInvite(
                    code: code, id: invite.id, role: role, list: list.id.description, usesLeft: invite.usesLeft,
                    expiresAt: Output.time(invite.expiresAt)))
        }
        let times = invite.usesLeft == 1 ? "once" : "\(invite.usesLeft) times"
        context.console.print("Invite code for \(list.title) (\(role.rawValue)): \(code)")
        context.console.print(
            "Works \(times), until \(Self.date(invite.expiresAt)). On the other device: basket join \(code)")
        context.console.print("See or withdraw it with 'basket invites'.")
    }

    /// A Unix-milliseconds time as the user reads it: local time, to the minute (`--json` has ISO).
    static func date(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static func join(_ context: Context) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "give the invite code", usage: "basket join CODE")
        }
        // An encrypted list's code carries its keys after a dot: "ABCD-EFGH-JKMN-PQRS.k1.…".
        let given = context.arguments.positionals[0].trimmingCharacters(in: .whitespaces)
        let dot = given.firstIndex(of: ".")
        let code = String(given[..<(dot ?? given.endIndex)]).uppercased()
        let secret = dot.map { String(given[given.index(after: $0)...]) }
        if let secret, (try? ListKeys(list: ListID(raw: ID128(high: 0, low: 0)), inviteSecret: secret)) == nil {
            throw CommandError(
                message: "the part of the code after the dot is not a list's keys (copy the whole code)",
                code: "invalid_invite")
        }
        let engine = try SyncCommands.engine(context)
        let (transport, config) = try context.transport()
        let replica = try context.replica()
        let keyring = context.keyring
        let joined = try runBlocking {
            // An encrypted list is no use without its keys: say so before the code is spent.
            if secret == nil, try await transport.preview(code: code).encrypted == true {
                throw CommandError(
                    message: "this list is encrypted end to end, and the code lacks its keys (the part after the"
                        + " dot): ask for the whole code", code: "missing_keys")
            }
            let remote = try await transport.join(code: code)
            if remote.encrypted == true {
                guard let secret else {
                    throw CommandError(
                        message: "this list is encrypted end to end, and the code lacks its keys (the part after the"
                            + " dot): ask for the whole code", code: "missing_keys")
                }
                try replica.saveKeys(secret, for: remote.id)
                // The account's other devices open it too: its keys sealed to the account's key pair.
                if let pair = Envelopes.keyPair(replica), let account = config.account {
                    try? await Envelopes.deliver(
                        [remote.id], account: account, pair: pair, replica: replica, keyring: keyring,
                        transport: transport)
                }
            }
            _ = try await engine.adopt(remote.id, role: remote.role)
            return remote
        }
        try replica.setSetting(Context.currentListSetting, joined.id.description)
        let title = try replica.lists().first { $0.id == joined.id }?.title ?? joined.id.description
        if context.json {
            return try context.console.json(Output.Joined(list: joined.id.description, title: title, role: joined.role))
        }
        context.console.print("Joined \(title) as \(joined.role.rawValue) (now the current list)")
    }

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
                return try context.console.json(
                    Output.Members(
                        members: members.map {
                            Output.Member(account: $0.account, role: $0.role, you: $0.account == config.account)
                        }))
            }
            context.console.print("\(list.title): \(members.count) member\(members.count == 1 ? "" : "s")")
            for member in members {
                context.console.print(
                    "  \(member.account.padding(toLength: 20, withPad: " ", startingAt: 0)) \(member.role.rawValue)"
                        + (member.account == config.account ? "  (you)" : ""))
            }
        case "rm" where args.count == 2:
            let name = args[1].lowercased()
            if let since = context.arguments.value(.removeTheirItemsSince) {
                return try removeWithTheirItems(context, name, list: list, since: since)
            }
            try context.confirm("Remove \(name) from \(list.title)? Their copy stays with them, read-only.")
            try runBlocking { try await transport.removeMember(name, from: listID) }
            context.console.print(
                "Removed \(name) from \(list.title); their next sync tells them"
                    + (try renewKey(context, listID, removed: name)))
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

    /// `basket members rm NAME --remove-their-items-since TIME`: removes the member, then the items
    /// it added to the list since TIME (as this device has them after a sync), in one step that
    /// `basket undo` takes back: an owner's way out of a list a member filled with junk. Removals
    /// are taken by a full list.
    static func removeWithTheirItems(_ context: Context, _ name: String, list: ListInfo, since text: String) throws {
        let since = try ItemCommands.parseTime(text, now: try context.wallClock()())
        let (transport, _) = try context.transport()
        let engine = try SyncCommands.engine(context)
        let listID = list.id
        try context.confirm(
            "Remove \(name) from \(list.title), and the items they added since \(SharingCommands.date(Int64(since)))?")
        // Their latest writes first, and their devices' ids (each write carries one).
        let members = try runBlocking { () async throws -> [Wire.Member] in
            _ = try await engine.sync(listID)
            return try await transport.members(of: listID)
        }
        guard let member = members.first(where: { $0.account == name }) else {
            throw CommandError(message: "'\(name)' is not a member of \(list.title)", code: "no_such_member")
        }
        let theirs = Set((member.replicas ?? []).compactMap(ReplicaID.init(hex:)))
        try runBlocking { try await transport.removeMember(name, from: listID) }
        let renewed = try renewKey(context, listID, removed: name)
        let replica = try context.replica()
        let (changes, _) = try replica.changes(in: listID, since: since)
        let onList = Set(try replica.items(in: listID).map(\.id))
        let added = changes.filter {
            theirs.contains($0.replica) && onList.contains($0.item)
                && !$0.kinds.filter { $0 == .added || $0 == .addedBack }.isEmpty
        }
        let items = Array(Set(added.map(\.item)))
        let removed = items.isEmpty ? [] : try replica.remove(items, in: listID)
        _ = try? runBlocking { try await engine.send(listID) }
        context.console.print(
            "Removed \(name) from \(list.title), and the \(removed.count) item\(removed.count == 1 ? "" : "s") they"
                + " added since \(SharingCommands.date(Int64(since))) ('basket undo' brings \(removed.count == 1 ? "it" : "them") back)"
                + renewed)
    }

    /// After a removal from an encrypted list: this device makes the list's next key and leaves it
    /// to the remaining members (the server takes no write until one of them did). What to add to
    /// the message: how it went ("" for a plain list).
    static func renewKey(_ context: Context, _ list: ListID, removed name: String) throws -> String {
        guard context.keyring.keys(of: list) != nil else { return "" }
        let engine = try SyncCommands.engine(context)
        let renewed = (try? runBlocking { try await engine.keyRenewal?.renewKeys(of: list) }) ?? nil
        return renewed == true
            ? ". The list has a new key, left to the other members: what is written from now on, \(name) cannot read"
            : ". The list needs a new key before anyone writes to it: the next sync of an owner's or editor's"
                + " device makes it"
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
        let listID = list.id
        // The last member takes the list with it: the server deletes it. Said before, not after.
        let members = try? runBlocking { try await transport.members(of: listID) }
        let alone = members.map { $0.count == 1 && $0.first?.account == account } ?? false
        try context.confirm(
            alone
                ? "You are the only member of \(list.title): leaving deletes it on the server, with its history and"
                    + " invites, for good. Leave and delete it?"
                : "Leave \(list.title)? Coming back takes a new invite from a member.")
        let engine = try SyncCommands.engine(context)
        try runBlocking {
            _ = try? await engine.sync(listID)  // what waits goes first, where the server takes it
            try await transport.removeMember(account, from: listID)
        }
        try context.replica().markNoLongerMember(listID)
        context.console.print(
            (alone ? "Left \(list.title), which had no other member: the server deleted it." : "Left \(list.title).")
                + " Its copy stays on this device, read-only; 'basket list rm \(list.title)' removes it.")
    }

    /// `basket invites`: the current list's invites that still work; `basket invites revoke ID` withdraws one.
    static func invites(_ context: Context) throws {
        let (transport, _) = try context.transport()
        let list = try context.requireList()
        let listID = list.id
        let args = context.arguments.positionals
        if args.first == "revoke" {
            guard args.count == 2 else { throw UsageError(message: "name the invite's ID", usage: invitesUsage) }
            let id = args[1]
            // An invite's id, or an add-only key's.
            let keys = try runBlocking { try await transport.addKeys(of: listID) }
            if let key = keys.first(where: { $0.id == id }) {
                try runBlocking { try await transport.revokeAddKey(id, of: listID) }
                context.console.print("Revoked the add-only key \"\(key.name)\" of \(list.title): it no longer adds")
                return
            }
            try runBlocking { try await transport.revokeInvite(id, of: listID) }
            context.console.print("Withdrew invite \(id) to \(list.title): its code no longer works")
            return
        }
        guard args.isEmpty else {
            throw UsageError(message: "unknown invites command '\(args[0])'", usage: invitesUsage)
        }
        let invites = try runBlocking { try await transport.invites(of: listID) }
        let keys = try runBlocking { try await transport.addKeys(of: listID) }
        if context.json {
            return try context.console.json(
                Output.Invites(
                    invites: invites.map {
                        Output.Invite(
                            id: $0.id, role: $0.role, createdBy: $0.createdBy, expiresAt: Output.time($0.expiresAt),
                            usesLeft: $0.usesLeft)
                    },
                    addOnlyKeys: keys.map {
                        Output.AddKey(
                            id: $0.id, name: $0.name, createdBy: $0.createdBy, created: Output.time($0.created))
                    }))
        }
        for key in keys {
            context.console.print(
                "\(key.id)  add-only key \"\(key.name)\", by \(key.createdBy), made \(SharingCommands.date(key.created))"
            )
        }
        for invite in invites {
            context.console.print(
                "\(invite.id)  \(invite.role.rawValue), by \(invite.createdBy), \(invite.usesLeft) use"
                    + "\(invite.usesLeft == 1 ? "" : "s") left, until \(SharingCommands.date(invite.expiresAt))")
        }
        if invites.isEmpty && keys.isEmpty { context.console.print("No invites to \(list.title) are out.") }
    }

    static let membersUsage =
        "basket members [rm NAME [--remove-their-items-since TIME] [--yes] | role NAME owner|editor|viewer]"

    static let invitesUsage = "basket invites [revoke ID]"
}
