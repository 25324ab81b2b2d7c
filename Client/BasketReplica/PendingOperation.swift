public import BasketCore

/// A local operation not yet acknowledged by a server.
public struct PendingOperation: Hashable, Sendable {
    /// Position in the outbox; acknowledge up to it.
    public var sequence: Int64
    /// The write.
    public var operation: Op
}
