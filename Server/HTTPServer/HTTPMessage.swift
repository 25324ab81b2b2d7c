import Foundation

/// An HTTP request, complete with its body.
public struct HTTPRequest: Sendable {
    /// The method, upper case (`GET`).
    public var method: String
    /// The decoded path, without the query string.
    public var path: String
    /// Query arguments, decoded. A repeated name keeps the last value.
    public var query: [String: String]
    /// Header fields by lowercased name.
    public var headers: [String: String]
    /// The body, whole (bounded by the listener before the handler runs).
    public var body: [UInt8]
    /// Values of `{name}` segments of the route that matched.
    public var pathParameters: [String: String] = [:]
    /// The peer's IP address as text ("" when unknown): the proxy's, behind one.
    public var remoteAddress = ""

    /// A request; header names are looked up without case.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The value of header field `name` (any case), nil when absent.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The bearer token of the `Authorization` header, if any.
    public var bearerToken: String? {
        guard let value = headers["authorization"] else { return nil }
        // "Bearer" in any case, then one or more spaces: read on the bytes, it is on every request.
        let bytes = value.utf8
        let scheme = "bearer".utf8
        guard bytes.count > scheme.count + 1,
            zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[bytes.index(bytes.startIndex, offsetBy: scheme.count)] == UInt8(ascii: " ")
        else { return nil }
        let token = value.utf8.dropFirst(scheme.count + 1)
        return String(Substring(token)).trimmingWhitespace()
    }

    /// Whether the client accepts a gzip-encoded answer.
    public var acceptsGzip: Bool { Self.acceptsGzip(header("accept-encoding")) }

    /// Whether the client accepts a brotli-encoded answer (`br`).
    public var acceptsBrotli: Bool { Self.accepts("br", header("accept-encoding")) }

    /// Whether an `Accept-Encoding` value accepts gzip (and does not refuse it with `q=0`).
    static func acceptsGzip(_ acceptEncoding: String?) -> Bool { accepts("gzip", acceptEncoding) }

    /// Whether an `Accept-Encoding` value accepts `coding` (and does not refuse it with `q=0`).
    static func accepts(_ coding: String, _ acceptEncoding: String?) -> Bool {
        acceptEncoding?.lowercased().split(separator: ",").contains { part in
            let token = part.split(separator: ";")[0].trimmingWhitespace()
            return token == coding && !part.replacingAll(" ", with: "").contains("q=0")
        } ?? false
    }
}

/// A request as its header arrives, before any byte of its body is read
/// (``HTTPListener/Configuration/checkHead``).
public struct RequestHead: Sendable {
    /// The method the route answers (`GET`).
    public var method: String
    /// The path, with `{name}` for a parameter segment.
    public var path: String
    /// Header fields by lowercased name.
    public var headers: [String: String]
    /// The peer's IP address as text ("" when unknown).
    public var remoteAddress: String
    /// The announced body size (`Content-Length`), nil for a chunked body.
    public var contentLength: Int?

    /// The head as a request without a body (to authenticate it, say).
    public var request: HTTPRequest {
        var request = HTTPRequest(method: method, path: path, headers: headers)
        request.remoteAddress = remoteAddress
        return request
    }
}

/// What to do with a request's body, decided from its head.
public enum HeadVerdict: Sendable {
    /// Read it, up to this many bytes (a longer one is refused with 413). Requests with the same
    /// `share` (the application's name for who sends it, such as an account) hold at most
    /// ``HTTPListener/Configuration/maxBufferedBodyBytesPerShare`` of bodies at once, whatever
    /// addresses they come from.
    case read(maxBodyBytes: Int, share: String? = nil)
    /// Answer this without keeping any of the body (an unauthenticated large push, say).
    case refuse(HTTPResponse)
}

/// An HTTP response.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields, in order, names as written.
    public var headers: [(String, String)]
    /// The body bytes.
    public var body: [UInt8]

    /// An answer with `status`, `headers` and `body`.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a body and its content type.
    public static func body(_ body: [UInt8], status: Int = 200, contentType: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: body)
    }

    /// `{"error": code, "message": message}` with the given status.
    public static func error(status: Int, code: String, message: String) -> HTTPResponse {
        let object = ["error": code, "message": message]
        let body =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return .body(Array(body), status: status, contentType: "application/json")
    }
}

/// An error that knows its HTTP answer (a store's "disk full", say): the router answers with it
/// instead of a 500.
public protocol HTTPErrorConvertible: Error {
    /// The answer this error is sent as.
    var httpError: HTTPError { get }
}

/// An error that answers the request: a status and `{"error": code, "message": message}`.
public struct HTTPError: HTTPErrorConvertible, Sendable, CustomStringConvertible {
    /// The HTTP status code (4xx, 5xx).
    public var status: Int
    /// A stable machine-readable code (`not_found`), the body's `error`.
    public var code: String
    /// Words for a person, the body's `message`.
    public var message: String
    /// Extra header fields (`Retry-After`, …).
    public var headers: [(String, String)] = []

    /// An error answered with `status` and the JSON body `{"error": code, "message": message}`.
    public init(_ status: Int, _ code: String, _ message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The answer: `status` and the JSON body, with the extra headers.
    public var response: HTTPResponse {
        var response = HTTPResponse.error(status: status, code: code, message: message)
        response.headers += headers
        return response
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// Itself.
    public var httpError: HTTPError { self }

    /// A 400 with `message` (and `code`, default `bad_request`).
    public static func badRequest(_ message: String, code: String = "bad_request") -> HTTPError {
        HTTPError(400, code, message)
    }
    /// A 404 `not_found`.
    public static func notFound(_ message: String = "no such resource") -> HTTPError {
        HTTPError(404, "not_found", message)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(s)
    }

    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
