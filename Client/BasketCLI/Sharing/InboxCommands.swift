import BasketCore
import BasketReplica
import BasketSearch
import Foundation

/// Add-only keys at the terminal (`basket share --add-only --name NAME`, listed and revoked with
/// the invites) and filing a list's inbox: each text a key put there, taken once from the server
/// and added as items with the parser `basket add` uses, credited to the key ("added by Kitchen
/// speaker"). `sync` files the inboxes of the lists this account may change.
enum InboxCommands {
    /// `basket share --add-only --name NAME`: the key, shown once, and a `curl` line that uses it.
    static func makeKey(_ context: Context, _ list: ListInfo, name: String) throws {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= Wire.AddKeyRequest.maxNameBytes else {
            throw UsageError(message: "--name is 1 to 64 bytes: what the key is for", usage: SharingCommands.shareUsage)
        }
        let (transport, config) = try context.transport()
        let listID = list.id
        let made = try runBlocking { try await transport.makeAddKey(listID, name: trimmed) }
        if context.json {
            return try context.console.json(
                Output.NewAddKey(key: made.key, id: made.id, name: made.name, list: listID.description))
        }
        let server = (config.server ?? "http://127.0.0.1:8080").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        context.console.print(
            """
            An add-only key for \(list.title), named "\(Printable.escaped(made.name))" (shown once: keep it where the \
            speaker or shortcut keeps its settings):
              \(made.key)
            It can only add to \(list.title); 'basket invites' lists it, 'basket invites revoke \(made.id)' ends it.
            Add with it:
              curl -X POST -H 'Authorization: Bearer \(made.key)' -H 'Content-Type: application/json' \\
                -d '{"text": "2 milk, bread"}' \(server)/v1/lists/\(listID)/inbox
            """)
    }

    /// Files the inbox of every list this device may change; returns what it says ("Filed from
    /// Kitchen speaker: Added milk (2), bread").
    static func fileAll(_ context: Context) -> [String] {
        guard !context.arguments.has(.noSync), let replica = try? context.replica(),
            let (transport, _) = try? context.transport(answerTimeout: SyncCommands.refreshSeconds),
            let states = try? replica.syncStates()
        else { return [] }
        var lines: [String] = []
        for state in states where state.isRegistered && !state.noLongerMember && state.role != .viewer {
            guard let list = try? replica.lists().first(where: { $0.id == state.list }) else { continue }
            let listID = list.id
            guard
                case .some(.success(let entries)) = runBlocking(
                    within: SyncCommands.refreshSeconds, { try await transport.inbox(of: listID) })
            else { continue }
            for waiting in entries {
                guard
                    case .some(.success(let taken?)) = runBlocking(
                        within: SyncCommands.refreshSeconds,
                        { try await transport.takeFromInbox(waiting.id, of: listID) })
                else { continue }  // another device took it, or the server did not answer: it waits
                let from = Printable.escaped(String(taken.from.prefix(64)))
                do {
                    let results = try file(taken.text, from: from, context, list)
                    lines.append(
                        "Filed from \(from): "
                            + Phrases.added(results).map { Printable.escaped($0) }.joined(separator: "; "))
                } catch {
                    lines.append(
                        "Could not file '\(Printable.escaped(String(taken.text.prefix(80))))' from \(from): \(error)")
                }
            }
        }
        return lines
    }

    /// Adds `text` to `list` as `basket add` would, each item's note saying who sent it.
    static func file(_ text: String, from name: String, _ context: Context, _ list: ListInfo) throws -> [AddResult] {
        let replica = try context.replica()
        let all = try replica.items(in: list.id, filter: .all)
        let pieces = text.contains("\n") ? EntryParser.pieces(text) : EntryParser.split(text)
        var entries = ItemCommands.parsedItems(pieces, context, list, all)
        let credit = "added by \(name)"
        for index in entries.indices { entries[index].note = entries[index].note.map { "\($0); \(credit)" } ?? credit }
        return try replica.add(entries, to: list.id)
    }
}
