import BasketCore
import BasketModel
import BasketReplica
import BasketTrace
import Foundation

/// `basket scenario run --trace FILE.html`: the run recorded as it goes (``ScenarioRunner/Run``
/// calls the recorder at each step) and drawn at the end, passed or failed.
extension ScenarioRunner {
    /// Adds each device's final list and replica id, and writes the page.
    func writeTrace(of run: Run, to path: String) {
        guard let recorder = run.recorder else { return }
        for device in run.scenario.devices {
            guard let replica = try? run.open(run.folder + "/" + device + "/basket.sqlite") else { continue }
            recorder.device(device, isReplica: replica.replicaID)
            if let list = try? replica.lists().first,
                let items = try? replica.items(in: list.id, filter: .all)
            {
                recorder.finish(device, showing: ReferenceModel.List(title: list.title, shown: items))
            }
        }
        do {
            try recorder.trace.html().write(toFile: path, atomically: true, encoding: .utf8)
            console.print("trace written to \(path)")
        } catch {
            console.error("Error: cannot write the trace to \(path): \(error.localizedDescription)")
        }
    }
}

extension ScenarioRunner.Run {
    /// One sync of `device`, recorded: how many of its writes the server took (its outbox
    /// before and after) and the writes of others it received.
    func sync(_ device: String, line: Int, unreachableIsFine: Bool = false) throws {
        guard let recorder else {
            try basket(device, ["sync"], line: line, unreachableIsFine: unreachableIsFine)
            return
        }
        let path = folder + "/" + device + "/basket.sqlite"
        func state() throws -> (ops: [Op], waiting: Int, replica: ReplicaID) {
            let replica = try open(path)
            let list = try replica.lists().first?.id
            return (
                try list.map { try replica.operations(in: $0) } ?? [], try replica.outbox.count(), replica.replicaID
            )
        }
        let before = try state()
        try basket(device, ["sync"], line: line, unreachableIsFine: unreachableIsFine)
        let after = try state()
        let known = Set(before.ops)
        let pulled = after.ops.filter { !known.contains($0) && $0.version.replica != after.replica }
        recorder.record(
            .synced(
                device: device, pushed: max(0, before.waiting - after.waiting), pulled: pulled,
                reached: lastStatus == 0 || pulled.count > 0 || after.waiting < before.waiting))
    }
}
