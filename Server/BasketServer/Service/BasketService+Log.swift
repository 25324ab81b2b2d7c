import BasketCore
import HTTPServer

/// Each list's operation log: push, pull, long-poll.
extension BasketService {
    /// Bodies from this size on (16 KiB, a couple of hundred operations) are decoded and stored on
    /// a push thread (``pushWork``). libmicrohttpd serves each connection on the thread that
    /// accepted it, and one thread often accepts a burst of them: four clients pushing at once
    /// were served one after another by one thread, with the other core idle. One push of
    /// thousands of operations takes milliseconds, which no other connection of its thread should
    /// wait for; on push threads, pushes decode while the store writes others.
    static let offloadedPushBytes = 16 << 10

    func push(_ request: HTTPRequest, _ responder: Responder) throws {
        if request.body.count >= Self.offloadedPushBytes,
            pushWork.answer(responder, { [self] in try push(request) }) == .queued
        {
            return
        }
        responder.respond(try push(request))
    }

    func push(_ request: HTTPRequest) throws -> HTTPResponse {
        let account = try authenticate(request)
        let list = try listID(request)
        guard let access = try store.access(of: account.id, in: list) else { throw HTTPError.notFound("no such list") }
        let role = access.role
        guard role.canPush else { throw HTTPError(.forbidden, "a viewer cannot change the list") }
        let encoded: [UInt8]
        try JSONBody.requireJSONContentType(request)
        if let fast = JSONBody.onlyString(request.body, key: Wire.Push.CodingKeys.ops.rawValue) {
            encoded = fast
        } else {
            encoded = try JSONBody.decode(Wire.Push.self, from: request).ops.bytes
        }
        let operations: [Op]
        do {
            operations = try OperationCodec.decode(encoded, sealed: access.encrypted)
        } catch {
            if access.encrypted, (try? OperationCodec.decode(encoded, sealed: false)) != nil {
                throw Self.listEncrypted
            }
            throw HTTPError.badRequest("'ops' is not a valid operation encoding: \(error)", code: .invalidOps)
        }
        guard operations.count <= configuration.maxBatch else {
            throw HTTPError.badRequest(
                "a push holds at most \(configuration.maxBatch) operations", code: .batchTooLarge)
        }
        if let stray = operations.first(where: { $0.list != list }) {
            throw HTTPError.badRequest("operation for list \(stray.list) pushed to list \(list)", code: .wrongList)
        }
        if role != .owner, operations.contains(where: { $0.field == .archived }) {
            throw HTTPError(.ownerOnly, "only an owner can archive or unarchive the list; nothing was stored")
        }
        if role != .owner, operations.contains(where: { $0.field == .pinned }) {
            throw HTTPError(.ownerOnly, "only an owner can pin a shop's aisles; nothing was stored")
        }
        let now = configuration.clock()
        if let latest = operations.map(\.timestamp).max() {
            do throws(ClockSkewError) {
                try HybridClock.check(latest, wallMilliseconds: now)
            } catch {
                return answer(
                    Wire.ErrorBody(
                        error: ClockSkewError.code, message: error.description, serverTime: now,
                        offsetMilliseconds: error.offsetMilliseconds), status: 400)
            }
        }
        // An encrypted list's values name the key epoch each is sealed under (OperationCodec checked
        // the form): the store takes them only within the list's epochs, under its lock.
        let keyEpochs = access.encrypted ? Self.keyEpochs(of: operations) : nil
        let result: AppendResult
        do {
            result = try store.append(
                operations, to: list, receivedAt: Int64(now),
                limits: ListLimits(
                    maxItems: configuration.maxItemsPerList, maxBytes: configuration.maxBytesPerList,
                    maxReplicasPerMember: configuration.maxReplicasPerMember,
                    maxReplicasPerList: configuration.maxReplicasPerList,
                    // A member who is not an owner adds at most half of the list's quotas.
                    pusherItems: role == .owner ? .max : configuration.maxItemsPerList / 2,
                    pusherBytes: role == .owner ? .max : configuration.maxBytesPerList / 2, keyEpochs: keyEpochs,
                    sealed: access.encrypted),
                pusher: account.id)
        } catch StoreError.listEncrypted {
            throw Self.listEncrypted
        } catch StoreError.identityConflict(let count) {
            throw HTTPError(
                .identityConflict,
                "\(count) operation(s) of this push have the identity (item, field, timestamp, replica) of stored "
                    + "operations with other values; nothing of this push was stored. Stamp them anew and push again.")
        } catch StoreError.rotationDue {
            throw HTTPError(
                .rotationRequired,
                "a member left this encrypted list or was removed: it takes no change until a remaining owner's or"
                    + " editor's device gives it a new key; nothing of this push was stored")
        } catch StoreError.staleKey(let keyEpoch) {
            throw HTTPError(
                .staleKey,
                "this push is sealed under a key this list no longer takes (its newest is \(keyEpoch)): take the new"
                    + " key from the account's envelope and seal again; nothing of this push was stored")
        } catch StoreError.replicaTaken {
            throw HTTPError(
                .replicaTaken,
                "this push holds operations of a replica id another account pushed to this list first; nothing of "
                    + "this push was stored. A device takes a new replica id and stamps its writes anew.")
        } catch StoreError.tooManyReplicas {
            throw HTTPError(
                .tooManyReplicas,
                "this push would bind more device ids to the list than one account (\(configuration.maxReplicasPerMember))"
                    + " or the list (\(configuration.maxReplicasPerList)) may have; nothing of this push was stored")
        } catch StoreError.memberShareFull {
            throw HTTPError(
                .memberShareFull,
                "you have added half of what this list may hold (\(configuration.maxItemsPerList / 2) items or "
                    + "\(configuration.maxBytesPerList / 2_097_152) MiB), the most a member who is not an owner may;"
                    + " removing and unchecking still work; nothing of this push was stored")
        } catch StoreError.tooManyItems {
            throw HTTPError(
                .tooManyItems,
                "the list would hold more than \(configuration.maxItemsPerList) items, the most this server keeps in"
                    + " one list; nothing of this push was stored")
        } catch StoreError.listTooLarge {
            throw HTTPError(
                .listTooLarge,
                "the list would hold more than \(configuration.maxBytesPerList / 1_048_576) MiB, the most this server"
                    + " keeps for one list; nothing of this push was stored")
        }
        if result.accepted > 0 {
            metrics.countAccepted(result.accepted)
            notePushed(operations, to: list, by: account, encrypted: access.encrypted)
        }
        // A push of duplicates wakes too: it may be the retry of a push whose instance died before
        // it told anyone (publishing wakes only watchers behind the head, so it costs nothing else).
        if result.accepted > 0 || result.duplicates > 0 { watchers.publish(list: list, cursor: result.cursor) }
        return answer(
            Wire.PushResult(
                accepted: result.accepted, duplicates: result.duplicates, cursor: result.cursor, epoch: result.epoch,
                serverTime: now))
    }

    /// A plain push to an encrypted list: it was converted since the device last heard.
    static let listEncrypted = HTTPError(
        .listEncrypted,
        "this list is encrypted end to end now: a device takes its keys from the account's envelope, changes its"
            + " copy and seals its writes; nothing of this push was stored")

    /// The lowest and highest key epoch `operations`' sealed values name (nil when none does).
    static func keyEpochs(of operations: [Op]) -> ClosedRange<Int64>? {
        var low = Int64.max
        var high = Int64.min
        for op in operations {
            guard case .text(let text) = op.value, let epoch = Sealed.epoch(of: text) else { continue }
            low = min(low, Int64(epoch))
            high = max(high, Int64(epoch))
        }
        return low <= high ? low...high : nil
    }

    func pull(_ request: HTTPRequest, _ responder: Responder) throws {
        let session = try session(request)
        let account = session.account
        let list = try listID(request)
        func integer(_ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
            guard let raw = request.query[name] else { return value }
            guard let number = Int64(raw), range.contains(number) else {
                throw HTTPError.badRequest(
                    "'\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)",
                    code: .invalidParameter)
            }
            return number
        }
        let after = try integer("after", default: 0, range: 0...Int64.max)
        let limit = Int(
            try integer("limit", default: Int64(configuration.maxPage), range: 1...Int64(configuration.maxPage)))
        let asked = try integer("wait", default: 0, range: 0...Int64(Self.longestWait))
        let wait = min(Double(asked), configuration.maxWaitSeconds)
        // The membership is checked in the page's own read.
        let page: LogPage
        do {
            page = try store.page(
                of: list, after: after, limit: limit, maxBytes: configuration.maxPageBytes, member: account.id)
        } catch StoreError.noSuchList {
            throw HTTPError.notFound("no such list")
        }
        // Who is shopping, or the inbox, changed since the caller last heard (`together`): said
        // now, so a change made while none of its requests was parked is not missed.
        let heard = try integer("together", default: -1, range: -1...Int64.max)
        if heard >= 0, let changed = together.time(of: list), changed > heard {
            responder.respond(try togetherPage(page, list: list, changed: changed))
            return
        }
        if page.count > 0 || wait <= 0 {
            responder.respond(Self.pageResponse(page, serverTime: configuration.clock()))
            return
        }
        try watchers.park(
            list: list, after: after, limit: limit, account: account.id, token: session.tokenHash, seconds: wait,
            responder: responder
        ) { try store.head(of: list).cursor }
    }

    /// `page` with who is shopping for `list`, how many texts wait in its inbox, and when they changed.
    func togetherPage(_ page: LogPage, list: ListID, changed: Int64) throws -> HTTPResponse {
        let news = try Self.togetherNews(list, store: store, configuration: configuration)
        return Self.pageResponse(page, serverTime: configuration.clock()) {
            $0.shopping = news.shopping
            $0.inbox = news.inbox
            $0.together = changed
        }
    }

    /// A page as its answer; `role` when the caller's role changed while it waited, and what
    /// `adding` adds (who is shopping, the inbox) when a change of those ended the wait.
    static func pageResponse(
        _ page: LogPage, serverTime: UInt64, role: Role? = nil, adding: (inout Wire.Page) -> Void = { _ in }
    ) -> HTTPResponse {
        var answer = Wire.Page(
            count: page.count, cursor: page.cursor, epoch: page.epoch, historyComplete: page.historyComplete,
            more: page.more, serverTime: serverTime, ops: OperationText(bytes: page.encoded), role: role)
        adding(&answer)
        return .body(answer.jsonBytes(), contentType: "application/json")
    }
}
