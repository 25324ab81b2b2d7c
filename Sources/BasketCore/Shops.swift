/// The shops an item is marked for (its ``Field/shops`` register): shop ids as hex, separated by
/// commas. shops.js is its twin; the conformance vectors hold them together.
public enum ShopMarks {
    /// The most shops one item may be marked for.
    public static let maxShops = 16

    /// The ids in a stored value, in order; a piece that is no id is skipped (a value from an old or
    /// hostile peer never stops a read).
    public static func parse(_ text: String?) -> [ItemID] {
        guard let text else { return [] }
        var ids: [ItemID] = []
        for piece in text.split(separator: ",") {
            if let id = ItemID(hex: piece), !ids.contains(id) { ids.append(id) }
            if ids.count == maxShops { break }
        }
        return ids
    }

    /// The stored value for `ids`: sorted, without repeats; nil for none (bought anywhere).
    public static func format(_ ids: some Sequence<ItemID>) -> String? {
        let sorted = Set(ids).sorted()
        return sorted.isEmpty ? nil : sorted.map(\.description).joined(separator: ",")
    }

    /// Whether an item marked `marks` is shown at the shop `shop` of a list whose shops are
    /// `shops`: unmarked items (and items marked only for shops that no longer exist) everywhere,
    /// marked ones only at the shops they are marked for.
    public static func isShown(marks: [ItemID], at shop: ItemID, shops: Set<ItemID>) -> Bool {
        let live = marks.filter { shops.contains($0) }
        return live.isEmpty || live.contains(shop)
    }
}

/// Where an item was found in each shop (its ``Field/places`` register): `SHOPID=aisle` pairs
/// separated by semicolons, sorted by shop id.
public enum ShopPlaces {
    /// The aisle for each shop in a stored value; a malformed pair is skipped.
    public static func parse(_ text: String?) -> [ItemID: String] {
        guard let text else { return [:] }
        var places: [ItemID: String] = [:]
        for pair in text.split(separator: ";") {
            guard let equals = pair.firstIndex(of: "="), let id = ItemID(hex: pair[..<equals]) else { continue }
            let aisle = pair[pair.index(after: equals)...].split(separator: " ").joined(separator: " ")
            if !aisle.isEmpty { places[id] = aisle }
        }
        return places
    }

    /// The stored value for `places`, sorted by shop id; nil for none.
    public static func format(_ places: [ItemID: String]) -> String? {
        let pairs = places.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return pairs.isEmpty ? nil : pairs.joined(separator: ";")
    }
}

/// A shop's aisle order: the hand-set order, the aisles an owner pinned, and what the trips taught
/// (its ``Field/learned`` register). shop-order.js is its twin, held to it by the conformance
/// vectors, so a phone and a terminal learn the same order from the same trips.
///
/// Each aisle the trips taught has a score (a place times 1,000). A trip moves each aisle it
/// visited a quarter of the way from its score towards the place the trip gave it: the trip's
/// aisles, in the order they were visited, take the places those aisles hold in the current
/// order. So one odd trip moves little, and two neighbouring aisles swap after three trips that
/// agree. Pinned aisles are left out of learning and keep their place in the hand-set order.
public enum ShopOrder {
    /// How much of the way a trip moves an aisle: one part in this many.
    public static let stepDivisor = 4
    /// A place in the order is worth this many points of score.
    public static let placeScore = 1_000
    /// The most aisles a learned order keeps.
    public static let maxAisles = 64

    /// What a shop's trips taught.
    public struct Learned: Hashable, Sendable {
        /// How many trips taught it.
        public var trips: Int
        /// When the last of them ended (milliseconds since 1970).
        public var last: Int64
        /// The aisles and their scores, in their learned order.
        public var scores: [Score]

        /// An aisle's name and score.
        public struct Score: Hashable, Sendable {
            /// The aisle (a category name).
            public var aisle: String
            /// Its score: lower comes first.
            public var score: Int

            /// An aisle with this score.
            public init(aisle: String, score: Int) {
                self.aisle = aisle
                self.score = score
            }
        }

        /// A learned order with these parts.
        public init(trips: Int, last: Int64, scores: [Score]) {
            self.trips = trips
            self.last = last
            self.scores = scores
        }

        /// The stored value: `TRIPS LAST aisle=score, aisle=score`.
        public var text: String {
            "\(trips) \(last) " + scores.map { "\($0.aisle)=\($0.score)" }.joined(separator: ", ")
        }

        /// The learned order in a stored value; nil when it is not one (never an error).
        public init?(text: String?) {
            guard let text else { return nil }
            let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, let trips = ShopOrder.number(parts[0]), let last = ShopOrder.number(parts[1]) else {
                return nil
            }
            var scores: [Score] = []
            var keys: Set<String> = []
            for piece in parts.count == 3 ? parts[2].split(separator: ",") : [] {
                guard let equals = piece.lastIndex(of: "="),
                    let score = ShopOrder.number(piece[piece.index(after: equals)...])
                else { continue }
                let aisle = piece[..<equals].split(separator: " ").joined(separator: " ")
                guard !aisle.isEmpty, keys.insert(ItemKey.normalize(aisle)).inserted else { continue }
                scores.append(Score(aisle: aisle, score: Int(score)))
                if scores.count == maxAisles { break }
            }
            self.init(trips: Int(trips), last: last, scores: ShopOrder.sorted(scores))
        }
    }

    /// A number as the learned order writes it: 1 to 15 decimal digits, nothing else (so that a
    /// value from a hostile peer reads the same in Swift and in JavaScript).
    static func number(_ text: Substring) -> Int64? {
        guard (1...15).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }

    /// Scores in order: by score, then as they were.
    static func sorted(_ scores: [Learned.Score]) -> [Learned.Score] {
        scores.enumerated().sorted { ($0.element.score, $0.offset) < ($1.element.score, $1.offset) }.map(\.element)
    }

    /// The aisles without repeats (by key), each once as first spelled.
    static func unique(_ aisles: [String]) -> [String] {
        var keys: Set<String> = []
        return aisles.filter { !$0.isEmpty && keys.insert(ItemKey.normalize($0)).inserted }
    }

    /// The shop's order: the learned order (else the hand-set `base`) with the aisles of `base`
    /// it does not know after it, and each pinned aisle (of `base`) at its place in `base`.
    public static func order(base: [String], pinned: [String], learned: Learned?) -> [String] {
        let base = unique(base)
        let pinnedKeys = Set(pinned.map(ItemKey.normalize)).intersection(base.map(ItemKey.normalize))
        var free = unique((learned?.scores.map(\.aisle) ?? []) + base)
        free.removeAll { pinnedKeys.contains(ItemKey.normalize($0)) }
        for (place, aisle) in base.enumerated() where pinnedKeys.contains(ItemKey.normalize(aisle)) {
            free.insert(aisle, at: min(place, free.count))
        }
        return free
    }

    /// The learned order after one more trip that visited `trip`'s aisles in that order, ending
    /// at `at`. Aisles holding a comma, and pinned ones, teach nothing; a trip of fewer than two
    /// aisles counts as a trip but moves nothing.
    public static func learn(
        trip: [String], base: [String], pinned: [String], learned: Learned?, at: Int64
    ) -> Learned {
        let pinnedKeys = Set(pinned.map(ItemKey.normalize)).intersection(unique(base).map(ItemKey.normalize))
        let visited = unique(trip.filter { !$0.contains(",") && !$0.contains("=") })
            .filter { !pinnedKeys.contains(ItemKey.normalize($0)) }
        var current = order(base: base, pinned: pinned, learned: learned)
            .filter { !pinnedKeys.contains(ItemKey.normalize($0)) && !$0.contains(",") && !$0.contains("=") }
        current = unique(current + visited)
        if current.count > maxAisles { current = Array(current.prefix(maxAisles)) }
        let place = Dictionary(
            current.enumerated().map { (ItemKey.normalize($1), $0) }, uniquingKeysWith: { a, _ in a })
        let known = Dictionary(
            (learned?.scores ?? []).map { (ItemKey.normalize($0.aisle), $0.score) }, uniquingKeysWith: { a, _ in a })
        var scores = current.enumerated().map { index, aisle in
            Learned.Score(aisle: aisle, score: known[ItemKey.normalize(aisle)] ?? index * placeScore)
        }
        let moving = visited.filter { place[ItemKey.normalize($0)] != nil }
        if moving.count >= 2 {
            let slots = moving.compactMap { place[ItemKey.normalize($0)] }.sorted()
            for (aisle, slot) in zip(moving, slots) {
                let index = place[ItemKey.normalize(aisle)]!
                let target = slot * placeScore
                scores[index].score += (target - scores[index].score) / stepDivisor
            }
        }
        return Learned(trips: (learned?.trips ?? 0) + 1, last: at, scores: sorted(scores))
    }
}

/// Items a household buys again and again, from the times they were checked off. usuals.js is its
/// twin; the conformance vectors hold them together.
public enum Usuals {
    /// Purchases an item needs to be a usual.
    public static let minimumPurchases = 3
    /// Check-offs this close after a counted one are the same purchase (a slip of the thumb, the
    /// same trip): 12 hours.
    public static let sameTrip: Int64 = 12 * 3_600_000
    /// The most recent purchases the interval is taken from: habits change.
    public static let window = 16

    /// What makes an item a usual.
    public struct Pattern: Hashable, Sendable {
        /// Purchases counted (after any dismissal; at most ``Usuals/window``).
        public var purchases: Int
        /// The median gap between them, in milliseconds.
        public var interval: Int64
        /// The last purchase.
        public var last: Int64
        /// When it is due again: the last purchase plus the interval.
        public var due: Int64

        /// A pattern with these parts.
        public init(purchases: Int, interval: Int64, last: Int64, due: Int64) {
            self.purchases = purchases
            self.interval = interval
            self.last = last
            self.due = due
        }
    }

    /// The pattern of an item checked off at `checks` (milliseconds, any order), dismissed at
    /// `dismissed` (check-offs until then do not count); nil when fewer than
    /// ``minimumPurchases`` purchases count.
    public static func pattern(checks: [Int64], dismissed: Int64? = nil) -> Pattern? {
        var purchases: [Int64] = []
        for at in checks.sorted() where dismissed.map({ at > $0 }) ?? true {
            if let last = purchases.last, at - last < sameTrip { continue }
            purchases.append(at)
        }
        if purchases.count > window { purchases.removeFirst(purchases.count - window) }
        guard purchases.count >= minimumPurchases, let last = purchases.last else { return nil }
        let gaps = zip(purchases.dropFirst(), purchases).map { $0 - $1 }.sorted()
        let middle = gaps.count / 2
        let interval = gaps.count % 2 == 1 ? gaps[middle] : (gaps[middle - 1] + gaps[middle]) / 2
        return Pattern(purchases: purchases.count, interval: interval, last: last, due: last + interval)
    }

    /// The time in a stored ``Field/dismissed`` value; nil when none or not a number.
    public static func dismissedAt(_ text: String?) -> Int64? { text.flatMap { ShopOrder.number(Substring($0)) } }
}
