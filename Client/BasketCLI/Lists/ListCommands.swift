import BasketCore
import BasketReplica
import BasketSeal
import BasketSearch
import Foundation
import PrivateFiles

/// The lists on this device: list new/use/rename/rm/archive/unarchive, lists, aisles, export,
/// import.
enum ListCommands {
    static func new(_ context: Context) throws {
        let name = try title(context, usage: "basket list new NAME")
        if context.arguments.has(.encrypted) && context.arguments.has(.unencrypted) {
            throw UsageError(
                message: "--encrypted and --unencrypted contradict each other",
                usage: "basket list new NAME [--unencrypted]")
        }
        let list = try context.replica().createList(
            title: name, language: context.language, encrypted: !context.arguments.has(.unencrypted))
        try context.replica().setSetting(Context.currentListSetting, list.id.description)
        if context.json { return try context.console.json(ListJSON(list)) }
        context.console.print(
            "Created \(list.title) (\(try context.replica().isEncrypted(list.id) ? "encrypted end to end" : "not encrypted"); "
                + "now the current list)")
    }

    static func use(_ context: Context) throws {
        let name = try title(context, usage: "basket list use NAME")
        let list = try Context.findList(name, in: try context.replica().lists())
        try context.replica().setSetting(Context.currentListSetting, list.id.description)
        if context.json { return try context.console.json(ListJSON(list)) }
        context.console.print("Using \(list.title)")
    }

    static func rename(_ context: Context) throws {
        let name = try title(context, usage: "basket list rename NEW-NAME")
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list to rename", code: "no_such_list")
        }
        try context.replica().renameList(list.id, to: name)
        if context.json {
            var renamed = list
            renamed.title = try ItemName.clean(name)
            return try context.console.json(ListJSON(renamed))
        }
        context.console.print("Renamed \(list.title) to \(name)")
    }

    static func title(_ context: Context, usage: String) throws -> String {
        let name = context.arguments.positionals.joined(separator: " ")
        guard !name.isEmpty else { throw UsageError(message: "name the list", usage: usage) }
        return name
    }

    static func lists(_ context: Context) throws {
        guard context.arguments.positionals.isEmpty else {
            throw UsageError(
                message: "unexpected argument '\(context.arguments.positionals[0])'", usage: "basket lists")
        }
        let replica = try context.replica()
        let all = try replica.lists()
        // Archived lists are out of the way unless asked for.
        let lists = context.arguments.has(.all) ? all : all.filter { !$0.isArchived }
        let current = try context.list(create: false)?.id
        let states = Dictionary(try replica.syncStates().map { ($0.list, $0) }) { a, _ in a }
        /// Where the list lives and what this account may do with it, in words.
        func sharing(_ list: ListInfo) -> String {
            guard let state = states[list.id], state.isRegistered else { return "this device only" }
            if state.noLongerMember { return "no longer shared with you, read-only" }
            switch state.role {
            case .owner?: return "owner"
            case .editor?: return "editor"
            case .viewer?: return "viewer, read-only"
            case nil: return "shared"
            }
        }
        if context.json {
            return try context.console.json(
                Output.Lists(
                    lists: lists.map {
                        Output.ListRow(
                            id: $0.id.description, title: $0.title, items: $0.itemCount,
                            unchecked: $0.uncheckedCount, current: $0.id == current, archived: $0.isArchived,
                            role: states[$0.id]?.role, shared: states[$0.id]?.isRegistered ?? false,
                            noLongerMember: states[$0.id]?.noLongerMember ?? false,
                            encrypted: replica.isEncrypted($0.id))
                    }))
        }
        if all.isEmpty {
            let signedIn = (try? context.loadConfig())?.token != nil
            context.console.print(
                "No lists yet: 'basket add NAME' starts one"
                    + (signedIn ? "; 'basket sync' fetches those shared with you." : "."))
        }
        for list in lists {
            let mark = list.id == current ? "*" : " "
            context.console.print(
                "\(mark) \(list.title)  (\(list.uncheckedCount) to buy, \(list.itemCount) items; \(sharing(list))"
                    + (replica.isEncrypted(list.id) ? ", encrypted" : "") + (list.isArchived ? ", archived" : "")
                    + ")  \(list.id)")
        }
        let hidden = all.count - lists.count
        if hidden > 0 {
            context.console.print("(\(hidden) archived list\(hidden == 1 ? "" : "s") not shown: 'basket lists --all')")
        }
    }

    /// The list called `name`, or the current one when `name` is empty.
    /// - Throws: a `no_such_list` error saying there is no list `doing` (what to do with it).
    static func namedOrCurrent(_ name: String, _ context: Context, _ replica: Replica, doing: String) throws
        -> ListInfo
    {
        if !name.isEmpty { return try Context.findList(name, in: try replica.lists()) }
        guard let current = try context.list(create: false) else {
            throw CommandError(message: "no list to \(doing)", code: "no_such_list")
        }
        return current
    }

    /// `basket list encrypt [NAME]`: an owner makes a plain list encrypted end to end
    /// (docs/encryption.md, "Converting a plain list"); a list never sent to a server, here alone.
    static func encrypt(_ context: Context) throws {
        let name = context.arguments.positionals.joined(separator: " ")
        let replica = try context.replica()
        let list = try namedOrCurrent(name, context, replica, doing: "encrypt")
        guard !replica.isEncrypted(list.id) else {
            throw CommandError(message: "\(list.title) is already encrypted end to end", code: "already_encrypted")
        }
        guard try replica.syncState(of: list.id).isRegistered else {
            try ListEncryption.encryptHere(list.id, replica: replica)
            context.console.print(
                "Encrypted \(list.title) end to end (on this device; its first sync shares it encrypted)")
            return
        }
        let (transport, _) = try context.transport()
        let engine = SyncCommands.engine(context, replica: replica, transport: transport)
        let members = try runBlocking {
            try await ListEncryption.encrypt(
                list.id, replica: replica, transport: transport, engine: engine)
        }
        context.console.print(
            "Encrypted \(list.title) end to end: its keys went to \(members == 1 ? "1 member" : "\(members) members"); the server"
                + " keeps its changes sealed from now on, and dropped what it kept in clear")
    }

    /// `basket list archive|unarchive [NAME]`: an owner puts a list out of the way (read-only on
    /// every device) or back.
    static func archive(_ context: Context, _ archived: Bool) throws {
        let name = context.arguments.positionals.joined(separator: " ")
        let replica = try context.replica()
        let list: ListInfo
        if name.isEmpty {
            guard let current = try context.list(create: false) else {
                throw CommandError(message: "no list to \(archived ? "archive" : "unarchive")", code: "no_such_list")
            }
            list = current
        } else {
            list = try Context.findList(name, in: try replica.lists())
        }
        try replica.setArchived(archived, list: list.id)
        context.console.print(
            archived
                ? "Archived \(list.title): read-only on every device, hidden from 'basket lists' ('basket list unarchive \(list.title)' brings it back)"
                : "Unarchived \(list.title)")
    }

    static let languageUsage = "basket list language [CODE]"

    /// `basket list language [CODE]`: the language the list's aisles are named in, or (an owner)
    /// sets it: every device then files what it adds under aisles named in it.
    static func language(_ context: Context) throws {
        guard let list = try context.list(create: false) else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        guard let code = context.arguments.positionals.first else {
            let categories = try replica.items(in: list.id, filter: .all).compactMap(\.category)
            let shown = context.aisleLanguage(of: list, categories: categories)
            if context.json { return try context.console.json(["list": list.id.description, "language": shown]) }
            context.console.print(
                list.language == nil
                    ? "\(list.title): aisles in \(shown) (not set: taken from its aisles or this device)"
                    : "\(list.title): aisles in \(shown)")
            return
        }
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "one language code ('en', 'de')", usage: languageUsage)
        }
        let lower = code.lowercased()
        guard Catalogue.languages.contains(lower) else {
            throw UsageError(
                message:
                    "'\(code)' is not a language the catalogue has (\(Catalogue.languages.joined(separator: ", ")))",
                usage: languageUsage)
        }
        try replica.setLanguage(lower, of: list.id)
        if context.json { return try context.console.json(["list": list.id.description, "language": lower]) }
        let sample = Catalogue.aisles(in: lower).prefix(3).joined(separator: ", ")
        context.console.print("\(list.title): aisles in \(lower) from now on (\(sample), …)")
    }

    static let aislesUsage =
        "basket aisles [set \"AISLE, AISLE, …\" | clear] | basket aisles --shop SHOP [set … | clear | pin … | unpin …]"

    /// `basket aisles`: shows or sets the order of the shop's aisles (categories) for the list.
    static func aisles(_ context: Context) throws {
        if let shop = context.arguments.value(.forShop) { return try ShopCommands.aisles(context, shopName: shop) }
        let args = context.arguments.positionals
        if args.first == "set", EntryParser.split(args.dropFirst().joined(separator: " ")).isEmpty {
            throw UsageError(
                message: "name at least one aisle ('basket aisles clear' removes the order)", usage: aislesUsage)
        }
        guard let list = try context.list(create: args.first == "set") else {
            throw CommandError(message: "no list yet: 'basket add NAME' starts one", code: "no_such_list")
        }
        let replica = try context.replica()
        switch args.first {
        case nil:
            if context.json {
                return try context.console.json(Output.Aisles(aisles: list.aisles))
            }
            context.console.print(
                list.aisles.isEmpty
                    ? "No aisle order for \(list.title): 'basket aisles set \"produce, dairy, bakery\"' sets one."
                    : "Aisles of \(list.title): " + list.aisles.joined(separator: ", "))
        case "set" where args.count >= 2:
            let names = EntryParser.split(args.dropFirst().joined(separator: " "))
            try replica.setAisles(names, of: list.id)
            let saved = try replica.lists().first { $0.id == list.id }?.aisles ?? []
            context.console.print("Aisles of \(list.title): " + saved.joined(separator: ", "))
        case "clear" where args.count == 1:
            try replica.setAisles([], of: list.id)
            context.console.print("Cleared the aisle order of \(list.title)")
        default:
            throw UsageError(message: "aisles takes 'set' with the aisles, or 'clear'", usage: aislesUsage)
        }
    }

    static func export(_ context: Context) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "name the file to write ('-' for stdout)", usage: "basket export FILE|-")
        }
        let target = context.arguments.positionals[0]
        let replica = try context.replica()
        let scope = context.arguments.value(.list) != nil ? try context.list(create: false)?.id : nil
        let ops = try replica.operations(in: scope)
        // An encrypted list's keys go with it: a device that imports the file adds "Milk" as the
        // same item, and can share and sync the list.
        var keys: [ListID: String] = [:]
        // As the keyring holds them (every epoch this device has, one spelling), so two devices
        // holding the same keys export the same bytes.
        for list in Set(ops.map(\.list)) {
            if let held = context.keyring.keys(of: list) { keys[list] = held.storageText }
        }
        let bytes = OperationCodec.encode(ops, canonicalOrder: true, keys: keys)
        if target == "-" {
            context.console.flush()
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do {
            try PrivateFile.replace(target, with: bytes)
        } catch {
            throw CommandError(message: "cannot write \(target): \(error.localizedDescription)", code: "io")
        }
        if context.json {
            return try context.console.json(Output.Exported(file: target, operations: ops.count, bytes: bytes.count))
        }
        context.console.print("Exported \(ops.count) operations to \(target)")
    }

    static func importFile(_ context: Context) throws {
        guard context.arguments.positionals.count == 1 else {
            throw UsageError(message: "name the file to read ('-' for stdin)", usage: "basket import FILE|-")
        }
        let source = context.arguments.positionals[0]
        let data = try context.readInput(source)
        let ops: [Op]
        let keys: [ListID: String]
        do {
            (ops, keys) = try OperationCodec.decodeFile(Array(data))
        } catch {
            throw CommandError(
                message: "\(source) is not a valid export: \(error); nothing was imported", code: "invalid_file")
        }
        let replica = try context.replica()
        // Every list's keys are checked before anything is kept: keys that are not a list's, or
        // another identity than the one this device holds, leave the replica as it was.
        for (list, text) in keys.sorted(by: { $0.key < $1.key }) {
            let problem = "\(source) holds keys of list \(list) that"
            guard let loaded = try? ListKeys(list: list, storageText: text) else {
                throw CommandError(message: "\(problem) do not read; nothing was imported", code: "invalid_file")
            }
            if let held = context.keyring.keys(of: list), held.identity != loaded.identity {
                throw CommandError(
                    message: "\(problem) are not the ones this device holds for it; nothing was imported",
                    code: "invalid_file")
            }
        }
        for (list, text) in keys.sorted(by: { $0.key < $1.key }) { try replica.saveKeys(text, for: list) }
        let hadLists = try !replica.lists().isEmpty
        let result = try replica.merge(ops)
        let lists = Set(ops.map(\.list))
        if !hadLists, lists.count == 1, let only = lists.first {
            try replica.setSetting(Context.currentListSetting, only.description)
        }
        if context.json {
            return try context.console.json(
                Output.Imported(
                    operations: ops.count, new: result.new, duplicates: result.duplicates, lists: lists.count))
        }
        context.console.print(
            "Imported \(ops.count) operations: \(result.new) new, \(result.duplicates) already known, "
                + "\(result.changedItems) \(result.changedItems == 1 ? "item" : "items") changed")
    }

    /// `basket list rm [NAME]`: an owner deletes a shared list for everyone; a list that is on
    /// this device only (never shared, or no longer shared with you) is removed from it.
    static func removeList(_ context: Context) throws {
        let replica = try context.replica()
        let name = context.arguments.positionals.joined(separator: " ")
        let list = try namedOrCurrent(name, context, replica, doing: "remove")
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
                    + (pending > 0 ? ", with \(Phrases.changes(pending)) never sent" : "")
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
