/// A last-writer-wins register: the value written with the greatest ``Version``.
public struct Register: Hashable, Sendable {
    /// The winning value.
    public var value: Value
    /// The version of the write that set it.
    public var version: Version

    /// A register holding `value`, written at `version`.
    public init(value: Value, version: Version) {
        self.value = value
        self.version = version
    }

    /// Whether a write `(value, version)` beats this register's current one.
    public func isBeaten(by version: Version, value: Value) -> Bool {
        #if DEBUG
            if PlantedRule.plants(.firstWriterWins), version != self.version { return version < self.version }
            if PlantedRule.plants(.lowerReplicaWinsTies), version.timestamp == self.version.timestamp,
                version.replica != self.version.replica
            {
                return version.replica.rawValue < self.version.replica.rawValue
            }
        #endif
        if version != self.version { return version > self.version }
        return Value.tieBreak(self.value, value)
    }

    /// Keeps the later write; returns whether the register changed.
    @discardableResult
    public mutating func merge(_ other: Register) -> Bool {
        guard isBeaten(by: other.version, value: other.value) else { return false }
        self = other
        return true
    }

    /// The later of the two writes.
    public func merging(_ other: Register) -> Register {
        var copy = self
        copy.merge(other)
        return copy
    }
}
