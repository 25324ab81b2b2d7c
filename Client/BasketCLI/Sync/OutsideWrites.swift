import BasketReplica

/// Notices writes that other processes made to the replica file (a second terminal, a watch,
/// a script): the interactive mode and `sync --watch` ask at every turn of their loops (ten
/// times a second) and redraw, print and send what they find.
struct OutsideWrites {
    let replica: Replica
    private var version: Int64?

    init(_ replica: Replica) {
        self.replica = replica
        version = try? replica.fileVersion()
    }

    /// Whether another process committed to the file since the last call.
    mutating func happened() -> Bool {
        guard let now = try? replica.fileVersion() else { return false }
        defer { version = now }
        return version != nil && now != version
    }
}
