import BasketCore
import BasketReplica

/// Every shape `--json` prints, in one place as `Wire` holds the server's: a script reads
/// these, so a change here is a change to what scripts see (keys are sorted on output), and
/// docs/cli-json.md, which a test holds every command's output to, changes with it. Each
/// command prints one object; times are ISO 8601 in UTC (``time(_:)``). The listing of
/// `basket ls --json` is written byte by byte by ``ListingJSON`` with the keys of ``Item``'s JSON.
enum Output {
    /// A time for --json, from Unix milliseconds: ISO 8601 in UTC, to the millisecond.
    static func time(_ milliseconds: Int64) -> String { ItemCommands.isoTime(UInt64(max(0, milliseconds))) }

    /// `basket devices --json`.
    struct Devices: Encodable { var devices: [Device] }

    /// One device of `basket devices --json`.
    struct Device: Encodable {
        var id: String
        var name: String
        var created: String
        var lastUsed: String
        var current: Bool
    }

    /// `basket invites --json`.
    struct Invites: Encodable {
        var invites: [Invite]
        /// The add-only keys (`basket share --add-only`), listed with the invites.
        var addOnlyKeys: [AddKey]
    }

    /// One invite of `basket invites --json`.
    struct Invite: Encodable {
        var id: String
        var role: Role
        var createdBy: String
        var expiresAt: String
        var usesLeft: Int
    }

    /// `basket add --json`: one result per name, in the order given.
    struct AddedItems: Encodable {
        var list: String
        var added: [Added]
    }

    /// One name of `basket add --json`.
    struct Added: Encodable {
        var item: Item
        var outcome: String
        var quantityChanged: Bool
    }

    /// `basket check`, `uncheck`, `toggle`, `rm` and `clear --json`: the items as they are now,
    /// however many were named.
    struct Items: Encodable { var items: [Item] }

    /// `basket sync --watch --json`: one line per change, as it arrives.
    struct Watched: Encodable {
        /// "added", "removed" or "changed".
        var change: String
        var item: Item
    }

    /// `basket search --json`.
    struct SearchOffer: Encodable { var name: String }

    /// `basket search --json`.
    struct SearchHit: Encodable {
        var item: Item
        var exact: Bool
        var tier: String
        var score: Int
        func encode(to encoder: any Encoder) throws {
            try item.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(exact, forKey: .exact)
            try c.encode(tier, forKey: .tier)
            try c.encode(score, forKey: .score)
        }
        enum Keys: String, CodingKey { case exact, tier, score }
    }

    /// `basket search --json`.
    struct Search: Encodable {
        var query: String
        var offer: Output.SearchOffer?
        var results: [Output.SearchHit]
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(query, forKey: .query)
            try c.encode(offer, forKey: .offer)
            try c.encode(results, forKey: .results)
        }
        enum Keys: String, CodingKey { case query, offer, results }
    }

    /// `basket suggest --json`.
    struct Suggestions: Encodable { var suggestions: [Suggestion] }

    /// One suggestion of `basket suggest --json`.
    struct Suggestion: Encodable {
        var name: String
        var source: String
        var item: Item?
        var language: String?
    }

    /// `basket history --json`.
    struct HistoryEntry: Encodable {
        var field: String
        var value: String?
        var boolValue: Bool?
        var timestamp: String
        var time: String
        var replica: String
        var by: String?
        var winner: Bool
        var reason: String
    }

    /// `basket history --json`.
    struct History: Encodable {
        var item: Item
        var historyComplete: Bool
        var renamedFrom: String?
        var renamedTo: String?
        var history: [Output.HistoryEntry]
    }

    /// `basket ls --at TIME --json`: the list as it stood then.
    struct ListAt: Encodable {
        var list: String
        var title: String?
        var at: String
        var historyComplete: Bool
        var items: [Item]
        /// How old this device's copy is, when it could not pull first (absent when it did).
        var stale: Stale?
    }

    /// A copy that could not be pulled before it was shown: when it last was, and why not.
    struct Stale: Encodable {
        var lastSync: String?
        var why: String
    }

    /// `basket changes --since TIME --json`.
    struct Changes: Encodable {
        var list: String
        var since: String
        var historyComplete: Bool
        var changes: [Change]
        /// How old this device's copy is, when it could not pull first (absent when it did).
        var stale: Stale?
    }

    /// One device's step on one item: `what` names it ("added", "checked", "renamed"…).
    struct Change: Encodable {
        struct Write: Encodable {
            var field: String
            var value: String?
            var boolValue: Bool?
            var previous: String?
            var previousBool: Bool?
            var won: Bool
        }
        var time: String
        var item: String
        var name: String?
        var replica: String
        var by: String?
        var what: [String]
        var writes: [Write]
    }

    /// `basket undo --json`.
    struct Undone: Encodable {
        var list: String
        var undone: [String]
    }

    /// `basket lists --json`.
    struct Lists: Encodable { var lists: [ListRow] }

    /// One list of `basket lists --json`.
    struct ListRow: Encodable {
        var id: String
        var title: String
        var items: Int
        var unchecked: Int
        var current: Bool
        var archived: Bool
        var role: Role?
        var shared: Bool
        var noLongerMember: Bool
        var encrypted: Bool
    }

    /// `basket aisles --json`.
    struct Aisles: Encodable { var aisles: [String] }

    /// `basket shops --json`.
    struct Shops: Encodable { var shops: [ShopJSON] }

    /// A shop in `basket shops --json`, `shops add --json` and `aisles --shop --json`.
    struct ShopJSON: Encodable {
        var id: String
        var name: String
        /// The order it is walked in (learned, pinned and hand-set together).
        var aisles: [String]
        /// The order set by hand (empty: the list's).
        var order: [String]
        var pinned: [String]
        /// Trips that taught the order (0: none yet) and when the last ended (ISO 8601, or null).
        var trips: Int
        var lastTrip: String?

        init(_ shop: Shop, listAisles: [String]) {
            id = shop.id.description
            name = shop.name
            aisles = shop.aisles(listAisles: listAisles)
            order = shop.order
            pinned = shop.pinned
            trips = shop.learned?.trips ?? 0
            lastTrip = shop.learned.map { ItemCommands.isoTime(UInt64(max(0, $0.last))) }
        }
    }

    /// `basket usuals --json`.
    struct Usuals: Encodable {
        var list: String
        var usuals: [Entry]

        /// One usual: how often it is bought and when it is due (ISO 8601).
        struct Entry: Encodable {
            var id: String
            var name: String
            var purchases: Int
            var intervalDays: Double
            var last: String
            var due: String
            var isDue: Bool
            var onList: Bool
        }
    }

    /// `basket export --json`.
    struct Exported: Encodable {
        var file: String
        var operations: Int
        var bytes: Int
    }

    /// `basket import --json`.
    struct Imported: Encodable {
        var operations: Int
        var new: Int
        var duplicates: Int
        var lists: Int
    }

    /// `basket members --json`.
    struct Members: Encodable { var members: [Member] }

    /// `basket share --add-only --json`: the key, shown once.
    struct NewAddKey: Encodable {
        var key: String
        var id: String
        var name: String
        var list: String
    }

    /// `basket invites --json`: an add-only key beside the invites.
    struct AddKey: Encodable {
        var id: String
        var name: String
        var createdBy: String
        var created: String
    }

    /// A line of `basket sync --watch --json` when someone goes shopping or finishes.
    struct WatchedShopping: Encodable { var shopping: String }

    /// A line of `basket sync --watch --json` when another member's write replaced this device's.
    struct WatchedLost: Encodable { var lost: String }

    /// A line of `basket sync --watch --json` when it filed a text of the list's inbox.
    struct WatchedFiled: Encodable { var filed: String }

    /// `basket shopping --json`: who is shopping for the list, and who finished within the hour.
    struct Shopping: Encodable {
        var list: String
        var shopping: [Status]

        /// One member's status (`Wire.ShoppingStatus`), times in ISO 8601 by this device's clock.
        struct Status: Encodable {
            var who: String
            var shop: String?
            var since: String
            var until: String
            var ended: String?
            var bought: Int?
        }
    }

    /// One member of `basket members --json`.
    struct Member: Encodable {
        var account: String
        var role: Role
        var you: Bool
    }

    /// `basket remote --json`.
    struct Remote: Encodable {
        var server: String?
        var account: String?
        var autoSync: Bool
    }

    /// `basket sync --json`.
    struct Synced: Encodable { var lists: [SyncedList] }

    /// One list of `basket sync --json`.
    struct SyncedList: Encodable {
        var list: String
        var title: String
        var pushed: Int
        var pulled: Int
        var epochChanged: Bool
        var restamped: Int
        var reclaimed: Int
        var refusedPending: Int
        var noLongerMember: Bool
        var unsent: Int
        var discarded: Int
        /// An encrypted list new to this device started from its snapshot (docs/encryption.md).
        var fromSnapshot: Bool
        /// An owner encrypted the list end to end: this device's copy took its keys.
        var converted: Bool
        /// Why the list was not synced (the other lists were); absent when it was.
        var error: String?
    }

    /// `basket share --json`.
    struct NewInvite: Encodable {
        var code: String
        var id: String
        var role: Role
        var list: String
        var usesLeft: Int
        var expiresAt: String
    }

    /// `basket join --json`.
    struct Joined: Encodable {
        var list: String
        var title: String
        var role: Role
    }

    /// `basket status --json`.
    struct ListStatus: Encodable {
        var id: String
        var title: String
        var synced: Bool
        var lastSync: String?
        var cursor: Int64
        /// Writes not yet sent (operations).
        var pending: Int
        /// The same, as a person counts them: items and actions.
        var changes: Int
        var role: Role?
        var noLongerMember: Bool
        /// Changes the server will not take (a viewer's, a former member's), as a person reads them.
        var refused: [String]
    }

    /// `basket status --json`.
    struct Status: Encodable {
        var server: String?
        var account: String?
        var pending: Int
        var changes: Int
        var clockOffsetMilliseconds: Int64
        var lists: [Output.ListStatus]
    }
}

/// The JSON form of a list (in `basket ls --json` and others).
struct ListJSON: Encodable {
    var id: String
    var title: String

    init(_ list: ListInfo) {
        id = list.id.description
        title = list.title
    }
}
