/// An operation ("op", as in an op log): one write to one register, `(list, item, field,
/// value, timestamp, replica)`. Not `Operation`, which Foundation has.
///
/// Applying the same operation twice, or a set of operations in any order, gives the same state.
public struct Op: Hashable, Sendable, CustomStringConvertible {
    /// The list written to.
    public var list: ListID
    /// The item written to; ``ItemID/list`` for list fields.
    public var item: ItemID
    /// The register written.
    public var field: Field
    /// The value written (``Value/null`` clears an optional field).
    public var value: Value
    /// When and by whom: decides which write a register keeps.
    public var version: Version

    /// An operation writing `value` to `field` of `item` in `list`, at `version`.
    public init(list: ListID, item: ItemID, field: Field, value: Value, version: Version) {
        self.list = list
        self.item = item
        self.field = field
        self.value = value
        self.version = version
    }

    /// The version's timestamp.
    public var timestamp: HybridTimestamp { version.timestamp }
    /// The replica that made the write.
    public var replica: ReplicaID { version.replica }

    /// What identifies an operation: pushing or applying it twice is a no-op.
    public struct Identity: Hashable, Sendable {
        /// The item written to.
        public var item: ItemID
        /// The register written.
        public var field: Field
        /// The write's version.
        public var version: Version
    }

    /// The operation's identity: two operations with the same one are the same write.
    public var identity: Identity { Identity(item: item, field: field, version: version) }

    /// Why an operation is refused (``validate()``).
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// A list-level field on an item, or an item field on the list.
        case wrongTarget(Field)
        /// A value of the wrong kind for the field (text for `checked`, …).
        case wrongType(Field, Value)
        /// A name that breaks a rule of ``ItemName``.
        case invalidName(ItemName.Problem)
        /// A quantity, note or category that breaks a rule of ``ItemName``.
        case invalidText(Field, ItemName.Problem)
        /// The replica id 0, which no device has.
        case zeroReplica

        public var description: String {
            switch self {
            case .wrongTarget(let field):
                return field.isListField
                    ? "field \(field.rawValue) belongs to the list, not to an item"
                    : "field \(field.rawValue) belongs to an item, not to the list"
            case .wrongType(let field, let value): return "field \(field.rawValue) cannot hold \(value)"
            case .invalidName(let problem): return "invalid name: \(problem)"
            case .invalidText(let field, let problem): return "invalid \(field.rawValue): \(problem)"
            case .zeroReplica: return "replica id 0 is reserved"
            }
        }
    }

    /// Checks that the field fits the target and the value fits the field.
    public func validate() throws(Problem) {
        if field.isListField != (item == .list) { throw .wrongTarget(field) }
        if version.replica.rawValue == 0 { throw .zeroReplica }
        switch (field.kind, value) {
        case (.flag, .bool), (.optionalText, .null): return
        case (.text, .text(let name)):
            do throws(ItemName.Problem) {
                try ItemName.check(name, for: field)
            } catch {
                throw .invalidName(error)
            }
        case (.optionalText, .text(let text)):
            do throws(ItemName.Problem) {
                try ItemName.check(text, for: field)
            } catch {
                throw .invalidText(field, error)
            }
        case (.flag, .null), (.flag, .text), (.text, .null), (.text, .bool), (.optionalText, .bool):
            throw .wrongType(field, value)
        }
    }

    public var description: String { "\(list)/\(item).\(field.rawValue) = \(value) @ \(version)" }
}
