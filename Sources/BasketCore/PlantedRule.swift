#if DEBUG
    internal import Foundation

    /// A wrong merge rule planted on purpose, to show that the conflict lab catches it (the tests
    /// of docs/conflicts.md's "Planted rules"). Debug builds only: a release build has no such
    /// switch. A process plants one when started with `BASKET_PLANTED_RULE` set to a raw value;
    /// every one of them converges (every device is equally wrong), so only a comparison with an
    /// independent model, or the hybrid clock's promise, shows it.
    package enum PlantedRule: String, CaseIterable, Sendable {
        /// Of two writes to one register, the earlier one wins.
        case firstWriterWins = "first-writer-wins"
        /// Equal timestamps are broken by the lower replica id (the rule says the larger).
        case lowerReplicaWinsTies = "lower-replica-wins-ties"
        /// A remove beats every add of the item, however much later.
        case removeBeatsLaterAdd = "remove-beats-later-add"
        /// A winning quantity write also unchecks the item (as of the quantity's version).
        case quantityClearsCheck = "quantity-clears-check"
        /// The hybrid clock does not move past the timestamps it receives: a device with a slow
        /// clock writes "before" what it has already seen.
        case clockIgnoresReceived = "clock-ignores-received"

        /// The rule this process plants, from `BASKET_PLANTED_RULE` (nil: none).
        package static let active: PlantedRule? = ProcessInfo.processInfo.environment["BASKET_PLANTED_RULE"]
            .flatMap(PlantedRule.init(rawValue:))

        /// Whether this process plants `rule`.
        package static func plants(_ rule: PlantedRule) -> Bool { active == rule }
    }
#endif
