public import BasketCore
import Foundation

/// Who is shopping for a list, as this device last heard from the server (a long-poll that
/// ended with the statuses, or `GET /v1/lists/{id}/shopping`): kept in the replica file so a
/// command shows it without asking, and judged by the server's clock (a device whose clock is
/// wrong still knows when a status ends).
public struct ShoppingNews: Codable, Hashable, Sendable {
    /// The statuses as the server gave them.
    public var statuses: [Wire.ShoppingStatus]
    /// The server's clock when it gave them (Unix ms).
    public var serverTime: UInt64
    /// This device's clock when they arrived (Unix ms).
    public var receivedAt: UInt64

    /// The statuses, when they arrived.
    public init(statuses: [Wire.ShoppingStatus], serverTime: UInt64, receivedAt: UInt64) {
        self.statuses = statuses
        self.serverTime = serverTime
        self.receivedAt = receivedAt
    }

    /// The server's clock at this device's `now`.
    public func serverNow(at now: UInt64) -> Int64 { Int64(now) + Int64(serverTime) - Int64(receivedAt) }

    /// Who is shopping at this device's `now`.
    public func shopping(at now: UInt64) -> [Wire.ShoppingStatus] {
        let server = serverNow(at: now)
        return statuses.filter { $0.isShopping(at: server) }
    }

    /// Who finished shopping within the last hour, at this device's `now`.
    public func done(at now: UInt64) -> [Wire.ShoppingStatus] {
        let server = serverNow(at: now)
        return statuses.filter { $0.ended.map { $0 > server - 3_600_000 } ?? false }
    }
}

extension Replica {
    private static func shoppingKey(_ list: ListID) -> String { "shopping.\(list)" }

    /// Keeps what the server said about who is shopping for `list`.
    public func saveShopping(_ statuses: [Wire.ShoppingStatus], of list: ListID, serverTime: UInt64) throws {
        let news = ShoppingNews(
            statuses: statuses, serverTime: serverTime, receivedAt: HybridClock.wallClockMilliseconds())
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try setSetting(Self.shoppingKey(list), String(decoding: try encoder.encode(news), as: UTF8.self))
    }

    /// What the server last said about who is shopping for `list` (nil: nothing yet).
    public func shoppingNews(of list: ListID) throws -> ShoppingNews? {
        guard let text = try setting(Self.shoppingKey(list)) else { return nil }
        return try? JSONDecoder().decode(ShoppingNews.self, from: Data(text.utf8))
    }

    /// How many items this device checked off in `list` since `time` (Unix ms) that are still
    /// checked: what "done shopping" tells the others it bought.
    public func checkedByThisDevice(in list: ListID, since time: UInt64) throws -> Int {
        let me = replicaID
        let (changes, _) = try changes(in: list, since: time)
        var bought = Set<ItemID>()
        for change in changes where change.replica == me {
            for write in change.writes where write.kind == .checked && write.isWinner { bought.insert(change.item) }
        }
        return bought.count
    }
}
