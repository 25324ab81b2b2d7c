import BasketCore
import Curl
import Foundation
import Synchronization

/// Sends Web Push messages about lists: what happened is gathered per list, and a list gets at
/// most one message per ``Settings/interval`` (``PushStore/claimPushSlot(list:now:interval:)``
/// decides across instances): the first change is told at once, the ones that follow within the
/// interval together when it ends ("Anna added 5 items").
///
/// Everything here runs off the HTTP threads: one thread gathers and decides, a small pool posts
/// (libcurl blocks), taking turns by push service so one slow service does not hold the others'.
/// Every collection is bounded: lists waiting (``Settings/maxWaitingLists``), events per list (one
/// per kind and person), item ids per event, messages waiting to be posted.
final class PushNotifier: @unchecked Sendable {
    // `@unchecked Sendable`: `signalled` is touched only under `condition`; the rest is Sendable.
    struct Settings: Sendable {
        /// The shortest time between two messages about one list, in milliseconds.
        var interval: Int64 = 60_000
        /// Where messages may be posted.
        var endpoints = PushEndpoints()
        /// The VAPID subject: a contact for push services' operators.
        var subject = "mailto:postmaster@localhost"
        /// How long a push service keeps a message for a phone that is off (RFC 8030 §5.2).
        var ttlSeconds = 6 * 3600
        /// Lists with events waiting at once; events of more are dropped (and counted).
        var maxWaitingLists = 10_000
        /// Item ids one event carries (the count says how many there were).
        var maxItemsPerEvent = 40
        /// Subscriptions one message about a list goes to at most.
        var maxTargets = 500
        /// Threads posting, and messages that may wait for them.
        var senders = 2
        var sendQueue = 2_000
        /// Seconds one post may take, and the most answer read.
        var timeoutSeconds = 10.0
        var maxAnswerBytes = 4_096
    }

    /// One thing one person did to a list.
    struct Event: Sendable {
        var list: ListID
        var kind: Wire.PushKind
        var account: Int64
        var name: String
        var count: Int
        var items: [ItemID] = []
        var shop: String? = nil
        /// An encrypted list's added items' `name` operations, sealed as pushed: the service
        /// worker opens them with the phone's keys to name items its copy does not have yet.
        var sealedNames: [Op] = []
    }

    /// Sealed names one event carries at most (``Event/sealedNames``): with the ids, a message
    /// stays well within the 4 KiB a push service takes.
    static let maxSealedNames = 6

    /// What is waiting for one list.
    struct Waiting {
        /// When its message may go (Unix milliseconds): now for a list that had none lately.
        var due: Int64
        /// When its first event happened.
        var first: Int64
        /// One event per kind and person, in the order they first happened.
        var events: [Event] = []
    }

    private struct State {
        var waiting: [ListID: Waiting] = [:]
        var closed = false
    }

    /// Counters for /metrics.
    struct Counts: Sendable {
        var sent = 0
        var failed = 0
        var gone = 0
        var dropped = 0
    }

    let settings: Settings
    private let store: any Store
    private let key: PushKeys
    private let clock: @Sendable () -> UInt64
    /// Token ages past which a device's subscriptions hear nothing (its token has expired).
    private let tokenIdle: Int64
    private let tokenLifetime: Int64
    /// Wakes the gathering thread; `signalled` (under it) keeps a wake-up given while the thread
    /// was not waiting.
    private let condition = NSCondition()
    private var signalled = false
    private let state = Mutex(State())
    private let senders: WorkPool
    private let handles = CurlHandles(maxIdle: 4)
    private let counts = Mutex(Counts())

    init(
        store: any Store, key: PushKeys, settings: Settings, clock: @escaping @Sendable () -> UInt64, tokenIdle: Int64,
        tokenLifetime: Int64
    ) {
        self.store = store
        self.key = key
        self.settings = settings
        self.clock = clock
        self.tokenIdle = tokenIdle
        self.tokenLifetime = tokenLifetime
        senders = WorkPool(
            name: "push-send", threads: settings.senders, queueLimit: settings.sendQueue,
            perKeyLimit: settings.sendQueue / 2)
        let thread = Thread { [self] in run() }
        thread.name = "basket-push"
        thread.start()
    }

    /// The counters so far.
    var counters: Counts { counts.withLock { $0 } }

    /// Lists with events waiting.
    var waitingLists: Int { state.withLock { $0.waiting.count } }

    /// Notes `event`; its list's message goes at once when the list had none lately, else when
    /// the interval ends.
    func record(_ event: Event) {
        let now = Int64(clock())
        var event = event
        event.items = Array(event.items.prefix(settings.maxItemsPerEvent))
        event.sealedNames = Array(event.sealedNames.prefix(Self.maxSealedNames))
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.waiting[event.list] == nil {
                guard state.waiting.count < settings.maxWaitingLists else { return false }
                state.waiting[event.list] = Waiting(due: now, first: now)
            }
            state.waiting[event.list]!.add(event, maxItems: settings.maxItemsPerEvent)
            return true
        }
        guard accepted else {
            counts.withLock { $0.dropped += 1 }
            return
        }
        wake()
    }

    private func wake() {
        condition.withLock {
            signalled = true
            condition.signal()
        }
    }

    /// Stops gathering; messages queued for posting are still posted.
    func close() {
        state.withLock { $0.closed = true }
        wake()
        senders.close()
    }

    // MARK: - The gathering thread

    private func run() {
        while true {
            let now = Int64(clock())
            let (due, next, closed) = state.withLock { state in
                let due = state.waiting.filter { $0.value.due <= now }.map(\.key)
                let next = state.waiting.values.map(\.due).filter { $0 > now }.min()
                return (due, next, state.closed)
            }
            if closed { return }
            for list in due { flush(list, now: now) }
            if !due.isEmpty { continue }
            condition.withLock {
                // Woken by a new event, or when the next list is due (at least every second, so
                // a clock that jumps is followed).
                let wait = min(Double((next ?? now + 1_000) - now) / 1000, 1)
                if !signalled { _ = condition.wait(until: Date(timeIntervalSinceNow: max(wait, 0.001))) }
                signalled = false
            }
        }
    }

    /// Sends what waits for `list` when its slot can be taken, else waits until it can.
    private func flush(_ list: ListID, now: Int64) {
        let nextSlot: Int64?
        do {
            nextSlot = try store.claimPushSlot(list: list, now: now, interval: settings.interval)
        } catch {
            // The store cannot say now: try again in a few seconds.
            state.withLock { $0.waiting[list]?.due = now + 5_000 }
            return
        }
        if let nextSlot {
            state.withLock { $0.waiting[list]?.due = max(nextSlot, now + 1) }
            return
        }
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: list) }) else { return }
        let targets: [PushTarget]
        do {
            targets = try store.pushTargets(
                of: list, tokensUsedSince: now - tokenIdle, madeSince: now - tokenLifetime, limit: settings.maxTargets)
        } catch {
            counts.withLock { $0.failed += 1 }
            return
        }
        for target in targets {
            // Nobody hears of what they did themselves, nor of kinds they did not ask for.
            let events = waiting.events.filter {
                $0.account != target.account && target.kinds.contains(PushKinds($0.kind))
            }
            guard !events.isEmpty else { continue }
            let message = Wire.PushMessage(
                list: list, at: waiting.first,
                events: events.map {
                    Wire.PushMessage.Event(
                        kind: $0.kind, who: $0.name, count: $0.count, items: $0.items, shop: $0.shop,
                        ops: $0.sealedNames.isEmpty
                            ? nil : String(decoding: OperationCodec.encode($0.sealedNames), as: UTF8.self))
                })
            send(message, to: target)
        }
    }

    // MARK: - Posting

    private func send(_ message: Wire.PushMessage, to target: PushTarget) {
        guard let url = try? settings.endpoints.check(target.endpoint), let audience = VAPID.audience(of: url) else {
            // Stored before a policy that refuses it now: it ends.
            try? store.deletePushSubscription(endpoint: target.endpoint)
            return
        }
        let admitted = senders.submit(key: audience) { [self] in
            post(message, to: target, audience: audience)
        }
        if admitted != .queued { counts.withLock { $0.dropped += 1 } }
    }

    private func post(_ message: Wire.PushMessage, to target: PushTarget, audience: String) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var plaintext = Array(try encoder.encode(message))
            var smaller = message
            if plaintext.count > WebPushMessage.maxPlaintext {
                // Too many sealed names: the ids still name what the phone's copy has.
                for index in smaller.events.indices { smaller.events[index].ops = nil }
                plaintext = Array(try encoder.encode(smaller))
            }
            if plaintext.count > WebPushMessage.maxPlaintext {
                // Too many ids: the counts alone still say it.
                for index in smaller.events.indices { smaller.events[index].items = [] }
                plaintext = Array(try encoder.encode(smaller))
            }
            let receiver = try WebPushMessage.Receiver(p256dh: target.p256dh, auth: target.auth)
            let body = try WebPushMessage.encrypt(plaintext, for: receiver)
            let authorization = try VAPID.authorization(
                audience: audience, subject: settings.subject, key: try key.current(), now: Int64(clock() / 1000))
            var request = CurlRequest(
                method: "POST", url: target.endpoint,
                headers: [
                    ("Authorization", authorization), ("Content-Encoding", "aes128gcm"),
                    ("Content-Type", "application/octet-stream"), ("TTL", "\(settings.ttlSeconds)"),
                    ("Urgency", message.events.contains { $0.kind == .shopping } ? "high" : "normal"),
                    ("Topic", String(message.list.description.prefix(32))),
                ], body: body, deadline: settings.timeoutSeconds, maxAnswerBytes: settings.maxAnswerBytes)
            request.acceptsGzip = false
            request.protocols = settings.endpoints.isAllowedPrivately(target.endpoint) ? "http,https" : "https"
            request.allowsAddress = settings.endpoints.addressCheck(for: target.endpoint)
            let answer = try handles.performBlocking(request)
            switch answer.status {
            case 200..<300: counts.withLock { $0.sent += 1 }
            case 404, 410:
                // The browser unsubscribed or the subscription expired (RFC 8030 §7.3).
                try? store.deletePushSubscription(endpoint: target.endpoint)
                counts.withLock { $0.gone += 1 }
            default: counts.withLock { $0.failed += 1 }
            }
        } catch CurlError.addressRefused {
            // The name now resolves to an address nobody may reach from here: the subscription ends.
            try? store.deletePushSubscription(endpoint: target.endpoint)
            counts.withLock { $0.failed += 1 }
        } catch {
            counts.withLock { $0.failed += 1 }
        }
    }
}

extension PushNotifier.Waiting {
    /// Adds `event` to the one of its kind and person, or as a new one.
    mutating func add(_ event: PushNotifier.Event, maxItems: Int) {
        if let index = events.firstIndex(where: { $0.kind == event.kind && $0.account == event.account }) {
            switch event.kind {
            case .added, .done:
                events[index].count += event.count
                events[index].items = Array((events[index].items + event.items).prefix(maxItems))
                events[index].sealedNames = Array(
                    (events[index].sealedNames + event.sealedNames).prefix(PushNotifier.maxSealedNames))
            case .shopping:
                events[index] = event
            }
        } else {
            events.append(event)
        }
    }
}
