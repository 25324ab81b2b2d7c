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
        /// A value of `shops` or `dismissed` not in its format (what is expected, in words).
        case invalidFormat(Field, String)
        /// An encrypted list's register holding a value that is not sealed text within its bound.
        case notSealed(Field)

        public var description: String {
            switch self {
            case .wrongTarget(let field):
                switch field.target {
                case .list: return "field \(field.rawValue) belongs to the list, not to an item"
                case .item: return "field \(field.rawValue) belongs to an item, not to the list"
                case .shop: return "field \(field.rawValue) belongs to a shop, not to the list"
                }
            case .invalidFormat(let field, let expected): return "invalid \(field.rawValue): \(expected)"
            case .notSealed(let field):
                return "field \(field.rawValue) of an encrypted list holds sealed values only (\(Sealed.prefix)…)"
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
            try Self.checkFormat(text, of: field)
        case (.flag, .null), (.flag, .text), (.text, .null), (.text, .bool), (.optionalText, .bool):
            throw .wrongType(field, value)
        }
    }

    /// Checks what a server can check of an encrypted list's operation: the register's target,
    /// the replica, and a value that is sealed text within the field's bound (``Sealed``). The
    /// value's own rules are the members' devices' to check once they open it.
    public func validateSealed() throws(Problem) {
        if field.isListField != (item == .list) { throw .wrongTarget(field) }
        if version.replica.rawValue == 0 { throw .zeroReplica }
        guard Sealed.isWellFormed(self) else { throw .notSealed(field) }
    }

    /// The formats the clients parse strictly: shop ids in `shops`, a time in `dismissed`.
    static func checkFormat(_ text: String, of field: Field) throws(Problem) {
        switch field {
        case .shops:
            let ids = text.split(separator: ",", omittingEmptySubsequences: false)
            guard ids.count <= ShopMarks.maxShops, ids.allSatisfy({ ItemID(hex: $0) != nil }) else {
                throw .invalidFormat(
                    field, "at most \(ShopMarks.maxShops) shop ids (32 hex digits) separated by commas")
            }
        case .dismissed:
            guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw .invalidFormat(field, "milliseconds since 1970 in decimal digits")
            }
        default: return
        }
    }

    public var description: String { "\(list)/\(item).\(field.rawValue) = \(value) @ \(version)" }
}
