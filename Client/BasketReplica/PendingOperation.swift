public import BasketCore

/// A local operation not yet acknowledged by a server.
public struct PendingOperation: Hashable, Sendable {
    /// Position in the outbox; acknowledge up to it.
    public var sequence: Int64
    /// The write.
    public var operation: Op
}

/// Writes of one list waiting in the outbox, in the form they are sent: their lines of the text
/// encoding under the list's header, read as stored.
struct OutboxBatch: Sendable {
    /// The encoded writes.
    var text: OperationText
    /// How many writes the text holds.
    var count: Int
    /// The outbox position of the last one: acknowledge through it.
    var lastSequence: Int64
}
