import BasketCore
import BasketReplica

/// Lists whose waiting changes stay on this device (`basket --no-sync`), kept as settings of the
/// replica file so every process using it sees them: a `LiveSync` of any process (a running
/// `sync --watch`, the interactive mode) asks ``isHeld(_:)`` before it sends, until an explicit
/// sync or a write that sends lets them go.
extension Replica {
    /// Keeps `list`'s waiting changes on this device until ``release(_:)``.
    func hold(_ list: ListID) throws { try setSetting(Self.heldSetting(list), "1") }

    /// Lets `list`'s waiting changes go again (every list's when nil).
    func release(_ list: ListID? = nil) throws {
        let lists = try list.map({ [$0] }) ?? lists().map(\.id)
        for id in lists { try setSetting(Self.heldSetting(id), nil) }
    }

    /// Whether `list`'s waiting changes are held back.
    func isHeld(_ list: ListID) throws -> Bool { try setting(Self.heldSetting(list)) != nil }

    /// The setting that marks `list` held.
    static func heldSetting(_ list: ListID) -> String { "held." + list.description }
}
