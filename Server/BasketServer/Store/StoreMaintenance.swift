/// Looking after a store: other instances' commits, gauges, compaction, statistics, new
/// epochs after a restore (`basket-server compact`, `stats`, `renew-epochs`, `/metrics`).
public protocol StoreMaintenance: Sendable {
    /// Calls `handler` for pushes and token or password changes committed by other server instances
    /// on the same store, so their long-polls wake here too and their revocations reach this one's
    /// session cache. A store that one process owns never calls it.
    func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void)
    /// Stops reporting commits and closes connections (the server is stopping).
    func close()
    /// The backend's own figures for /metrics (connections, whether it listens, …).
    func gauges() -> [StoreGauge]
    /// The schema versions opening the store applied (empty when it was up to date).
    var appliedMigrations: Range<Int> { get }

    /// Drops operations superseded in their register and received before `before`.
    func compact(receivedBefore before: Int64) throws -> Int
    /// What the store holds now.
    func statistics() throws -> StoreStatistics
    /// Gives every list a new epoch, so clients push again what the store forgot (after a restore).
    func renewEpochs() throws -> Int
}

extension StoreMaintenance {
    /// A store that one process owns has nobody else's commits to report.
    public func watchCommits(_ handler: @escaping @Sendable (CommitEvent) -> Void) {}
    /// Nothing to close.
    public func close() {}
    /// No gauges of its own.
    public func gauges() -> [StoreGauge] { [] }
}
