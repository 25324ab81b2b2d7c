import BasketCore
import BasketReplica
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
        let aside = path + ".damaged-" + formatter.string(from: Date())
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
            let (lists, pushed, pulled) = try runBlocking {
                let remote = try await transport.lists()
                var pushed = 0
                var pulled = 0
                for list in remote {
                    let report = try await engine.adopt(list.id, role: list.role)
                    pushed += report.pushed
                    pulled += report.pulled
                }
                return (remote.count, pushed, pulled)
            }
            console.print(
                "Rebuilt from \(server): \(lists) list\(lists == 1 ? "" : "s"), \(pulled) operations pulled, "
                    + "\(pushed) unsynced changes pushed.")
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
