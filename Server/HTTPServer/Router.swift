import Dispatch
import Synchronization

/// Answers one request, now or later: call ``respond(_:)`` exactly once, from any thread.
/// A handler that returns without responding leaves the connection suspended (long-poll) until
/// it does; no thread is held meanwhile.
public final class Responder: Sendable {
    private struct State {
        var response: HTTPResponse?
        var onReady: (@Sendable () -> Void)?
        var onHangUp: (@Sendable () -> Void)?
        var route = "unmatched"
    }
    private let state = Mutex(State())

    /// The route pattern that matched (for logs and metrics), set by the router.
    public internal(set) var route: String {
        get { state.withLock { $0.route } }
        set { state.withLock { $0.route = newValue } }
    }

    init() {}

    /// Answers the request. Later calls are ignored: the first answer wins.
    public func respond(_ response: HTTPResponse) {
        let callback: (@Sendable () -> Void)? = state.withLock { state in
            guard state.response == nil else { return nil }
            state.response = response
            state.onHangUp = nil
            defer { state.onReady = nil }
            return state.onReady
        }
        callback?()
    }

    /// Answers with an error's JSON: its own answer for an ``HTTPErrorConvertible``, else a 500
    /// that tells the client nothing of the internals (the operator's log gets the error).
    public func fail(_ error: any Error) {
        if let known = error as? any HTTPErrorConvertible {
            respond(known.httpError.response)
        } else {
            Router.reportInternalError("\(route): \(error)")
            respond(HTTPError(500, "internal", "internal error").response)
        }
    }

    /// Runs `handler` if the client hangs up while this request waits for its answer (a parked
    /// long-poll whose device went away), once, on the listener's thread: it should forget the
    /// request quickly. Not run once an answer was given; replaces an earlier handler.
    public func onHangUp(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if state.response == nil { state.onHangUp = handler }
        }
    }

    /// The client hung up before the answer: runs the hang-up handler, then answers 499 (nginx's
    /// "client closed request", for the access log) so the connection resumes and is closed.
    func hangUp() {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            defer { state.onHangUp = nil }
            return state.response == nil ? state.onHangUp : nil
        }
        handler?()
        respond(HTTPResponse.error(status: 499, code: "client_closed", message: "the client closed the connection"))
    }

    /// Whether an answer was given already.
    public var hasResponded: Bool { state.withLock { $0.response != nil } }

    /// The response if there is one. Otherwise runs `suspend` and registers `resume` to run once
    /// the response arrives, both under the lock that ``respond(_:)`` takes: so `resume` can
    /// never run before `suspend` has.
    func takeOrSuspend(_ suspend: () -> Void, resume: @escaping @Sendable () -> Void) -> HTTPResponse? {
        state.withLock { state in
            if let response = state.response { return response }
            suspend()
            state.onReady = resume
            return nil
        }
    }

    func take() -> HTTPResponse? { state.withLock { $0.response } }
}

/// Routes requests by method and path pattern (`/v1/lists/{id}/ops`).
public final class Router: Sendable {
    /// Handles one request; a thrown error is answered by ``Responder/fail(_:)``.
    public typealias Handler = @Sendable (HTTPRequest, Responder) throws -> Void

    struct Route: Sendable {
        var method: String
        var pattern: String
        /// "METHOD pattern", for logs and metrics.
        var name: String
        var segments: [Segment]
        var handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private let table: [Route]
    /// The routes of each number of path segments (indices into `table`, in its order): a request
    /// is matched against those only, without copying the others.
    private let bySegmentCount: [[Int]]

    private static let internalErrorReporter = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends errors that became a 500 to `report` (the operator's log) instead of to the client.
    public static func onInternalError(_ report: @escaping @Sendable (String) -> Void) {
        internalErrorReporter.withLock { $0 = report }
    }

    /// Reports an internal error (nothing of it goes to the client).
    public static func reportInternalError(_ text: String) {
        internalErrorReporter.withLock { $0 }?(text)
    }

    /// Builds a router; see ``RouterBuilder``.
    public init(_ build: (inout RouterBuilder) -> Void) {
        var builder = RouterBuilder()
        build(&builder)
        table = builder.routes
        var bySegmentCount: [[Int]] = []
        for (index, route) in table.enumerated() {
            while bySegmentCount.count <= route.segments.count { bySegmentCount.append([]) }
            bySegmentCount[route.segments.count].append(index)
        }
        self.bySegmentCount = bySegmentCount
    }

    /// Every (method, pattern) served, in registration order.
    public var routes: [(method: String, pattern: String)] { table.map { ($0.method, $0.pattern) } }

    /// Dispatches a request: a matching route's handler, else 404 (or 405 when only the method differs).
    /// A thrown ``HTTPError`` becomes its JSON answer; any other error a 500.
    public func handle(_ request: HTTPRequest, _ responder: Responder) {
        // Split on the bytes: splitting a String by Character walks grapheme clusters.
        let parts = request.path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
        var methodMismatch = false
        for index in parts.count < bySegmentCount.count ? bySegmentCount[parts.count] : [] {
            guard let parameters = Self.match(table[index].segments, parts) else { continue }
            let route = table[index]
            guard route.method == request.method || (route.method == "GET" && request.method == "HEAD") else {
                methodMismatch = true
                continue
            }
            responder.route = route.name
            var request = request
            request.pathParameters = parameters
            do {
                try route.handler(request, responder)
            } catch {
                responder.fail(error)
            }
            return
        }
        if methodMismatch {
            responder.fail(HTTPError(405, "method_not_allowed", "\(request.method) is not allowed on \(request.path)"))
        } else {
            responder.fail(HTTPError.notFound("no route for \(request.method) \(request.path)"))
        }
    }

    /// Handles a request in this process, without a socket, and waits up to `timeout` seconds
    /// for its answer (for tools that run a service in-process, like a simulation).
    public func answer(_ request: HTTPRequest, timeout: Double = 30) -> HTTPResponse? {
        let responder = Responder()
        handle(request, responder)
        let answered = DispatchSemaphore(value: 0)
        if let ready = responder.takeOrSuspend({}, resume: { answered.signal() }) { return ready }
        guard answered.wait(timeout: .now() + timeout) == .success else { return nil }
        return responder.take()
    }

    static func match(_ segments: [Segment], _ parts: [Substring]) -> [String: String]? {
        guard segments.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let text): if !text.utf8.elementsEqual(part.utf8) { return nil }
            case .parameter(let name): parameters[name] = String(part)
            }
        }
        return parameters
    }
}

/// Collects routes for a ``Router``.
public struct RouterBuilder {
    var routes: [Router.Route] = []

    /// A handler that answers through the responder (possibly later).
    public mutating func on(_ method: String, _ pattern: String, _ handler: @escaping Router.Handler) {
        let segments = pattern.split(separator: "/").map { part -> Router.Segment in
            part.hasPrefix("{") && part.hasSuffix("}")
                ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        routes.append(
            Router.Route(
                method: method, pattern: pattern, name: "\(method) \(pattern)", segments: segments, handler: handler))
    }

    /// A handler that answers at once.
    public mutating func on(
        _ method: String, _ pattern: String, answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        on(method, pattern) { request, responder in responder.respond(try answer(request)) }
    }
}
