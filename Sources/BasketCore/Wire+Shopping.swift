extension Wire {
    /// One member's "I'm going shopping" on a list: live while `ended` is absent and `until` has
    /// not passed; once ended, what they bought (kept for an hour, so the others are told).
    public struct ShoppingStatus: Codable, Hashable, Sendable {
        /// The member (their account name).
        public var who: String
        /// The shop, when they named one.
        public var shop: String?
        /// When they said so, Unix milliseconds.
        public var since: Int64
        /// When it ends by itself, Unix milliseconds.
        public var until: Int64
        /// When they said they were done, Unix milliseconds.
        public var ended: Int64?
        /// How many items they checked off while shopping (with `ended`).
        public var bought: Int?

        /// A status as it travels.
        public init(who: String, shop: String?, since: Int64, until: Int64, ended: Int64? = nil, bought: Int? = nil) {
            self.who = who
            self.shop = shop
            self.since = since
            self.until = until
            self.ended = ended
            self.bought = bought
        }

        /// The status as JSON, as `JSONEncoder` writes it, for pages written by hand.
        func appendJSON(to body: inout [UInt8]) {
            body.append(UInt8(ascii: "{"))
            if let bought { body.append(contentsOf: #""bought":\#(bought),"#.utf8) }
            if let ended { body.append(contentsOf: #""ended":\#(ended),"#.utf8) }
            if let shop {
                body.append(contentsOf: #""shop":"#.utf8)
                JSONText.appendQuoted(shop, to: &body)
                body.append(UInt8(ascii: ","))
            }
            body.append(contentsOf: #""since":\#(since),"until":\#(until),"who":"#.utf8)
            JSONText.appendQuoted(who, to: &body)
            body.append(UInt8(ascii: "}"))
        }

        /// Whether the member is shopping at `now` (said so, not done, not expired).
        public func isShopping(at now: Int64) -> Bool { ended == nil && until > now }
    }

    /// `GET`, `PUT` and `DELETE /v1/lists/{id}/shopping`: who is shopping for the list now, and
    /// who finished within the last hour.
    public struct Shopping: Codable, Hashable, Sendable {
        /// The statuses, oldest first.
        public var shopping: [ShoppingStatus]
        /// The server's clock when it answered (a device with a wrong clock still shows the right
        /// "since" and knows when a status ends).
        public var serverTime: UInt64

        /// The statuses as they travel.
        public init(shopping: [ShoppingStatus], serverTime: UInt64) {
            self.shopping = shopping
            self.serverTime = serverTime
        }
    }

    /// `PUT /v1/lists/{id}/shopping`: "I'm going shopping", at `shop` when given.
    public struct ShoppingStart: WireRequest, Hashable {
        /// The shop, if the member names one.
        public var shop: String?

        /// Going shopping, at `shop` when given.
        public init(shop: String? = nil) { self.shop = shop }

        /// The JSON keys of the body.
        public enum CodingKeys: String, CodingKey, CaseIterable { case shop }
        public static let fields = CodingKeys.allCases.map(\.rawValue)
        /// The longest shop name, in bytes.
        public static let maxShopBytes = 100

        /// Within the longest an encrypted list's sealed shop name may be (``Sealed/shopPlace(of:shop:)``);
        /// a plain list's is held to ``maxShopBytes`` by the server.
        public func check() throws(Refusal) {
            try Refusal.text(shop, CodingKeys.shop, maxBytes: Sealed.maxTextBytes(for: .shop))
        }
    }
}
