public import BasketCore
public import BasketModel
import BasketReplica
import BasketTrace
import Foundation

/// A lab runs scenario files (`basket-lab run`): the steps of ``ScenarioRun`` on the lab's devices,
/// server, network and clock, in this process.
extension Lab: ScenarioWorld {
    /// A lab of `scenario`'s devices, their clocks as the scenario starts them.
    public convenience init(for scenario: Scenario) async throws {
        try await self.init(devices: scenario.devices, clockOffsets: ScenarioRun(scenario).start.clocks)
    }

    public func perform(_ edit: Edit, on device: String) throws {
        do {
            try make(edit, on: device)
        } catch let error as ReplicaError {
            throw Finding(description: "\(device): \(edit) failed: \(error)")
        }
    }

    public func refuse(_ edit: Edit, on device: String) throws {
        let replica = self.replica(device)
        let before = (try shown(device), try replica.operations(in: list).count, try replica.outbox.count())
        do {
            try make(edit, on: device)
            throw Finding(description: "\(device): \(edit) was not refused")
        } catch is ReplicaError {}
        let after = (try shown(device), try replica.operations(in: list).count, try replica.outbox.count())
        guard before == after else { throw Finding(description: "\(device): \(edit) changed the list") }
    }

    /// The account of `device` on the lab's server.
    func account(_ device: String) -> String { "device\(index(device))" }

    public func setRole(_ role: Role, of member: String, by device: String) async throws {
        do {
            try await members[index(device)].transport.setRole(role, of: account(member), in: list)
        } catch {
            throw Finding(description: "\(device): giving \(member) the role \(role.rawValue) failed: \(error)")
        }
    }

    public func removeMember(_ member: String, by device: String) async throws {
        do {
            try await members[index(device)].transport.removeMember(account(member), from: list)
        } catch {
            throw Finding(description: "\(device): removing \(member) failed: \(error)")
        }
    }

    @discardableResult
    public func syncLists(of device: String, faults: UInt64) async throws -> Bool {
        try await sync(device, faults: faults, everyList: true)
    }

    public func discardRefused(_ device: String) async throws {
        _ = try await syncLists(of: device, faults: 0)
        let replica = self.replica(device)
        let state = try replica.syncState(of: list)
        if state.role == .viewer || state.noLongerMember { _ = try replica.discardPending(in: list) }
    }

    public func forge(_ victim: String, by forger: String) async throws {
        guard var forged = try replica(victim).operations(in: list).max(by: { $0.version < $1.version }) else {
            throw Finding(description: "\(victim) has no write to forge")
        }
        switch forged.value {
        case .bool(let flag): forged.value = .bool(!flag)
        default: forged.value = .text("Forged by \(forger)")
        }
        // Whether the server takes it or not, the expectations say what every device shows after.
        _ = try? await members[index(forger)].transport.push([forged], to: list)
    }

    public func setOnline(_ device: String, _ online: Bool) {
        if online { heal(device) } else { partition(device) }
    }

    public func moveClock(of device: String, by milliseconds: Int64) {
        time.move(index(device), by: milliseconds)
        recorder?.record(.clockMoved(device: device, milliseconds: milliseconds))
    }

    public func moveTime(by milliseconds: Int64) {
        advance(milliseconds: UInt64(max(0, milliseconds)))
    }

    /// A second passes between two steps of a scenario in real time, as between two commands
    /// a person types (the lab's clock otherwise stands still: two devices' writes would tie).
    public func nextStepInRealTime() {
        time.advance(1_000)
    }

    public func disagreement(_ device: String) throws -> ReferenceModel.Disagreement? {
        try disagreement(replica(device))
    }
}
