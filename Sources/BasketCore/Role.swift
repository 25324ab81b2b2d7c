/// A member's rights on a list: a viewer reads, an editor also writes and invites, an owner also
/// removes members. Ordered: `.viewer < .editor < .owner`.
public enum Role: String, Hashable, Sendable, CaseIterable, Comparable, Codable {
    /// Reads the list and pulls; cannot push.
    case viewer
    /// Also pushes operations and invites others.
    case editor
    /// Also removes members; the list's creator.
    case owner

    /// Whether the role may push operations (every role but viewer).
    public var canPush: Bool { self != .viewer }

    public static func < (a: Role, b: Role) -> Bool { a.rank < b.rank }

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .owner: 2
        }
    }
}
