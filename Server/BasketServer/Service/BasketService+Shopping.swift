import BasketCore
import HTTPServer
import Synchronization

/// "I'm going shopping": who is shopping for a list, told live to its open pages and terminals
/// (their parked long-polls end with the statuses) and, to phones that asked, by Web Push.
extension BasketService {
    /// How long a status lasts when nobody says they are done.
    static let shoppingMilliseconds: Int64 = 3 * 3_600_000
    /// How long "done shopping" is still shown to the others.
    static let shoppingDoneMilliseconds: Int64 = 3_600_000

    func shopping(_ request: HTTPRequest) throws -> HTTPResponse {
        let (_, list, _) = try membership(request)
        return try shoppingAnswer(list)
    }

    func startShopping(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        guard let access = try store.access(of: account.id, in: list) else { throw HTTPError.notFound("no such list") }
        guard access.role.canPush else { throw HTTPError(.forbidden, "a viewer cannot go shopping for the list") }
        let body = try JSONBody.decode(Wire.ShoppingStart.self, from: request)
        let shop: String?
        if access.encrypted {
            // An encrypted list's shop name travels sealed, as its values do: the server keeps and
            // relays it (in the status, the pages, the push messages) without reading it.
            if let sealed = body.shop, Sealed.parse(sealed) == nil {
                throw HTTPError.badRequest(
                    "'shop' of an encrypted list is the shop's name sealed (\(Sealed.prefix)…)", code: .invalidTitle)
            }
            shop = body.shop
        } else {
            do throws(ItemName.Problem) {
                shop = try body.shop.map { raw throws(ItemName.Problem) in try ItemName.clean(raw, for: .title) }
            } catch {
                throw HTTPError.badRequest("'shop' is not a shop's name: \(error)", code: .invalidTitle)
            }
            if let shop, shop.utf8.count > Wire.ShoppingStart.maxShopBytes {
                throw HTTPError.badRequest(
                    "'shop' is at most \(Wire.ShoppingStart.maxShopBytes) bytes", code: .tooLong)
            }
        }
        let now = Int64(configuration.clock())
        try store.startShopping(
            list: list, account: account.id, shop: shop, now: now, until: now + Self.shoppingMilliseconds)
        pushNotifier?.record(
            PushNotifier.Event(
                list: list, kind: .shopping, account: account.id, name: account.name, count: 0, shop: shop))
        return try shoppingChanged(list, at: now)
    }

    func stopShopping(_ request: HTTPRequest) throws -> HTTPResponse {
        let (account, list, _) = try membership(request)
        var bought = 0
        if let raw = request.query["bought"] {
            guard let number = Int(raw), (0...100_000).contains(number) else {
                throw HTTPError.badRequest("'bought' must be a whole number in 0...100000", code: .invalidParameter)
            }
            bought = number
        }
        let now = Int64(configuration.clock())
        if try store.stopShopping(list: list, account: account.id, now: now, bought: bought) {
            pushNotifier?.record(
                PushNotifier.Event(list: list, kind: .done, account: account.id, name: account.name, count: bought))
            return try shoppingChanged(list, at: now)
        }
        return try shoppingAnswer(list)
    }

    /// The statuses of `list` now.
    func shoppingStatuses(_ list: ListID) throws -> [Wire.ShoppingStatus] {
        let now = Int64(configuration.clock())
        return try store.shopping(of: list, now: now, endedSince: now - Self.shoppingDoneMilliseconds)
    }

    func shoppingAnswer(_ list: ListID) throws -> HTTPResponse {
        answer(Wire.Shopping(shopping: try shoppingStatuses(list), serverTime: configuration.clock()))
    }

    /// What a page says of `list` beside its operations: who is shopping now (and who finished
    /// lately) and how many texts wait in its inbox.
    static func togetherNews(_ list: ListID, store: any Store, configuration: Configuration) throws -> (
        shopping: [Wire.ShoppingStatus], inbox: Int
    ) {
        let now = Int64(configuration.clock())
        return (
            try store.shopping(of: list, now: now, endedSince: now - shoppingDoneMilliseconds),
            try store.inbox(of: list).count
        )
    }

    /// Ends this instance's parked long-polls of `list` with a page carrying its statuses, and
    /// answers the change with them (other instances hear of it from the store).
    func shoppingChanged(_ list: ListID, at now: Int64) throws -> HTTPResponse {
        let statuses = try shoppingStatuses(list)
        Self.togetherChanged(
            list, at: now, watchers: watchers, store: store, configuration: configuration, times: together)
        return answer(Wire.Shopping(shopping: statuses, serverTime: configuration.clock()))
    }

    /// Notes that who is shopping for `list`, or its inbox, changed now (``TogetherTimes``), and
    /// ends its parked long-polls with the page, the statuses and the inbox's count.
    static func togetherChanged(
        _ list: ListID, at now: Int64, watchers: Watchers, store: any Store, configuration: Configuration,
        times: TogetherTimes
    ) {
        // The writer's time: every instance notes the same one for the same change, so a
        // long-poll that heard it on one instance is not answered again by another.
        times.note(list, at: now)
        guard let news = try? togetherNews(list, store: store, configuration: configuration) else { return }
        wake(list, watchers: watchers, store: store, configuration: configuration) {
            $0.shopping = news.shopping
            $0.inbox = news.inbox
            $0.together = times.time(of: list) ?? now
        }
    }

    /// Answers every parked long-poll of `list` with the page after its cursor, and what `adding`
    /// adds to it (who is shopping, how many texts wait in the inbox).
    static func wake(
        _ list: ListID, watchers: Watchers, store: any LogStore, configuration: Configuration,
        adding: @escaping (inout Wire.Page) -> Void
    ) {
        watchers.dismissAll(list: list) { after, limit in
            do {
                let page = try store.page(of: list, after: after, limit: limit, maxBytes: configuration.maxPageBytes)
                return pageResponse(page, serverTime: configuration.clock(), adding: adding)
            } catch {
                return StoreError.unavailable.httpError.response
            }
        }
    }
}

/// When who is shopping for each list, or its inbox, last changed, by this instance's clock (as
/// it heard: other instances' changes arrive by the store's notifications). A long-poll that says
/// when it last heard (`together=`) is answered at once when a change came since. At most
/// ``capacity`` lists; when full, the oldest times go (their long-polls then just wait).
final class TogetherTimes: Sendable {
    private let times = Mutex<[ListID: Int64]>([:])
    static let capacity = 100_000

    func note(_ list: ListID, at now: Int64) {
        times.withLock { times in
            if times[list] == nil, times.count >= Self.capacity {
                let cut = times.values.sorted()[times.count / 2]
                times = times.filter { $0.value > cut }
            }
            times[list] = max(now, times[list] ?? 0)
        }
    }

    func time(of list: ListID) -> Int64? { times.withLock { $0[list] } }
}
