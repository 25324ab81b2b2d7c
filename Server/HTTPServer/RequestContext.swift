internal import CMicroHTTPD
import Foundation
import Synchronization

/// The requests waiting for an answer (long-polls), for stop() to answer. Split over 16 locks by
/// request: every long-poll enters and leaves it, from every HTTP thread at once, and one lock
/// was where 10,000 watchers woken together queued.
final class SuspendedRequests: Sendable {
    private final class Shard: Sendable {
        let table = Mutex<[ObjectIdentifier: RequestContext]>([:])
    }
    private let shards = (0..<16).map { _ in Shard() }

    private func shard(_ context: RequestContext) -> Shard {
        // By address: objects are 16-byte aligned, so the bits above the lowest four.
        shards[Int((UInt(bitPattern: Unmanaged.passUnretained(context).toOpaque()) >> 4) % UInt(shards.count))]
    }

    func insert(_ context: RequestContext) { shard(context).table.withLock { $0[ObjectIdentifier(context)] = context } }

    func remove(_ context: RequestContext) {
        shard(context).table.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(context)) }
    }

    var all: [RequestContext] { shards.flatMap { shard in shard.table.withLock { Array($0.values) } } }

    var count: Int { shards.reduce(0) { total, shard in total + shard.table.withLock { $0.count } } }
}

/// The state of one request between libmicrohttpd's calls.
final class RequestContext: @unchecked Sendable {
    // `@unchecked Sendable`: fields other than `responder` are touched only on the MHD thread
    // that owns the connection; `responder` is thread-safe.
    let method: String
    let path: String
    var headers: [String: String] = [:]
    var query: [String: String] = [:]
    var body: [UInt8] = []
    var tooLarge = false
    /// The most body this request may have (``HeadVerdict/read(maxBodyBytes:share:)``).
    var bodyLimit = 0
    /// The answer decided from the head (``HeadVerdict/refuse(_:)``): the body is not kept.
    var refusal: HTTPResponse?
    /// When the body must have arrived (uptime nanoseconds), once a body is expected.
    var bodyDeadline: UInt64?
    /// Body bytes reserved from the server's budget (released when the request completes).
    var reserved = 0
    var overBudget = false
    let remoteAddress: String
    /// The client's address group, for its share of the body budget.
    let addressKey: ConnectionCounts.Address?
    /// Who sends it, as the application named it from the head (``HeadVerdict``), for that
    /// share of the body budget.
    var share: String?
    var dispatched = false
    var isSuspended = false
    /// Whether the request was ever suspended (so its completion has a table entry to remove).
    var wasSuspended = false
    /// The socket its loop watches for the client hanging up while it is suspended, or -1.
    var watchedSocket: Int32 = -1
    var status = 0
    var responseBytes = 0
    let started = DispatchTime.now().uptimeNanoseconds
    let responder = Responder()
    let connection: OpaquePointer

    init(method: String, path: String, connection: OpaquePointer) {
        self.method = method
        self.path = path
        self.connection = connection
        var buffer = [CChar](repeating: 0, count: 64)
        var key = ConnectionCounts.Address(high: 0, low: 0)
        var grouped: Int32 = 0
        remoteAddress =
            basket_mhd_client_address(connection, &buffer, socklen_t(buffer.count), &key.high, &key.low, &grouped) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        addressKey = grouped != 0 ? key : nil
    }

    /// Whether the body is kept as it arrives (not refused, too large or over budget).
    var keepsBody: Bool { !tooLarge && !overBudget && refusal == nil }
}
