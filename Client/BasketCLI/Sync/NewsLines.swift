import BasketCore
import BasketReplica

/// What other devices did, as `ls`, `sync` and `sync --watch` say it: "anna added 3 items" since
/// the list was last shown here (and a mark on each such item), and this device's writes another
/// member's later one replaced ("bob unchecked milk after you checked it"), each told once. Who a
/// device is comes from the members answer, kept in the replica, asked again (within `seconds`)
/// when a device is not in it.
enum NewsLines {
    /// Who each of `replicas` is on `list`: a member's name, "you" for this account's other
    /// devices, "someone" when the server cannot say.
    static func names(_ context: Context, _ list: ListID, _ replicas: Set<ReplicaID>, within seconds: Double)
        -> [ReplicaID: String]
    {
        guard let replica = try? context.replica() else { return [:] }
        var known = (try? replica.memberNames(of: list)) ?? [:]
        if !replicas.isSubset(of: Set(known.keys)), !context.arguments.has(.noSync),
            let (transport, _) = try? context.transport(answerTimeout: seconds),
            case .some(.success(let members)) = runBlocking(within: seconds, { try await transport.members(of: list) })
        {
            try? replica.saveMembers(members, of: list)
            known = (try? replica.memberNames(of: list)) ?? known
        }
        let me = (try? context.loadConfig())?.account
        return Dictionary(
            uniqueKeysWithValues: replicas.map { id in (id, known[id].map { $0 == me ? "you" : $0 } ?? "someone") })
    }

    /// The news of `list` as lines, and a mark per item ("new: anna"); the list counts as shown.
    static func news(_ context: Context, _ list: ListID, items: [Item], within seconds: Double) -> (
        lines: [String], marks: [ItemID: String]
    ) {
        guard let replica = try? context.replica(), let entries = try? replica.news(in: list), !entries.isEmpty else {
            return ([], [:])
        }
        let who = names(context, list, Set(entries.map(\.replica)), within: seconds)
        let byID = Dictionary(items.map { ($0.id, $0) }) { a, _ in a }
        let shown = entries.compactMap { entry -> (entry: NewsEntry, item: Item)? in
            guard let item = byID[entry.item], !item.isDeleted else { return nil }
            return (entry, item)
        }
        let lines = Phrases.news(
            shown.map { (who: who[$0.entry.replica] ?? "someone", added: $0.entry.added, name: $0.item.name) })
        let marks = Dictionary(
            shown.map { ($0.item.id, "\($0.entry.added ? "new" : "changed"): \(who[$0.entry.replica] ?? "someone")") }
        ) { a, _ in a }
        try? replica.clearNews(in: list)
        return (lines, marks)
    }

    /// This device's writes others replaced since they were last told, as lines (taken: told once).
    static func lost(_ context: Context, within seconds: Double) -> [String] {
        guard let replica = try? context.replica(), let lost = try? replica.takeLostWrites(), !lost.isEmpty else {
            return []
        }
        var lines: [String] = []
        for (list, writes) in Dictionary(grouping: lost, by: \.list).sorted(by: { $0.key < $1.key }) {
            let who = names(context, list, Set(writes.map(\.replica)), within: seconds)
            for write in writes {
                lines.append(
                    Phrases.lostWrite(
                        who: who[write.replica] ?? "someone", name: Printable.escaped(write.name), field: write.field,
                        mine: write.mine, theirs: write.theirs))
            }
        }
        return lines
    }
}
