import BasketCore
import BasketReplica
import BasketSeal
import Foundation

/// `basket doctor`: checks the replica file and rebuilds a damaged one from what can still be
/// read (the unsynced changes first) and from the server.
enum DoctorCommand {
    static func run(_ context: Context) throws {
        let path = context.databasePath
        let console = context.console
        guard FileManager.default.fileExists(atPath: path) else {
            console.print("No replica at \(path): nothing to check.")
            return
        }
        guard let damage = ReplicaFile.damage(at: path) else {
            let replica = try context.replica()
            let lists = try replica.lists()
            console.print(
                "\(path) is sound: \(lists.count) list\(lists.count == 1 ? "" : "s"), "
                    + "\(lists.reduce(0) { $0 + $1.itemCount }) items, \(Phrases.changes(try replica.outbox.changes())) not yet synced."
            )
            return
        }
        console.print("\(path) is damaged: \(damage)")
        let salvage = ReplicaFile.salvage(from: path)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // A name no earlier rebuild took (two within a second would share the time).
        var aside = path + ".damaged-" + formatter.string(from: Date())
        for n in 2...1_000 where FileManager.default.fileExists(atPath: aside) {
            aside = path + ".damaged-" + formatter.string(from: Date()) + "-\(n)"
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            do {
                try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
            } catch {
                throw CommandError(
                    message: "cannot move \(path + suffix) aside: \(error.localizedDescription)", code: "io")
            }
        }
        let replica = try context.replica()
        try replica.restore(salvage)
        console.print(
            "Salvaged \(salvage.operations.count) operations and \(salvage.pending.count) changes not yet synced; "
                + "the damaged file is kept as \(aside).")
        for problem in salvage.problems { console.print("  Unreadable: \(problem)") }

        let config = try context.loadConfig()
        if let server = config.server, config.token != nil {
            let engine = try SyncCommands.engine(context)
            let (transport, _) = try context.transport()
            let keyring = context.keyring
            let (lists, pushed, pulled, closed) = try runBlocking {
                let remote = try await transport.lists()
                // Encrypted lists' keys the file lost come back from the account's envelopes (when
                // its key pair was salvaged); a list still without keys is not read as plain text.
                let exchanged = try await Envelopes.exchange(
                    remote, account: config.account ?? "", replica: replica, keyring: keyring, transport: transport)
                var pushed = 0
                var pulled = 0
                for list in remote where !exchanged.missing.contains(list.id) {
                    let report = try await engine.adopt(list.id, role: list.role)
                    pushed += report.pushed
                    pulled += report.pulled
                }
                return (remote.count, pushed, pulled, exchanged.missing.count)
            }
            console.print(
                "Rebuilt from \(server): \(lists) list\(lists == 1 ? "" : "s"), \(pulled) operations pulled, "
                    + "\(pushed) unsynced changes pushed.")
            if closed > 0 {
                console.print(
                    "\(closed) encrypted list\(closed == 1 ? " has" : "s have") no keys on this device now: sign in"
                        + " again ('basket login \(config.account ?? "NAME")') to open \(closed == 1 ? "it" : "them")"
                        + " from your account, or join with a whole invite code.")
            }
        } else {
            console.print("No server is configured: the replica holds what could be read; the rest is lost.")
        }
        let current = try replica.setting(Context.currentListSetting)
        let lists = try replica.lists()
        if !lists.contains(where: { $0.id.description == current }), let first = lists.first {
            try replica.setSetting(Context.currentListSetting, first.id.description)
        }
    }
}
