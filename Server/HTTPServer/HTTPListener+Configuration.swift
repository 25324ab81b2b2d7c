import Foundation

extension HTTPListener {
    /// Where and how the listener serves, with its limits.
    public struct Configuration: Sendable {
        /// The address to listen on: an IPv4 or IPv6 literal. Default loopback.
        public var host = "127.0.0.1"
        /// The port; 0 picks a free one (read it back from ``HTTPListener/port``).
        public var port = 8080
        /// libmicrohttpd's thread pool. Handlers run on these threads.
        public var threads = 2
        /// Bodies larger than this are refused with 413.
        public var maxBodyBytes = 4 << 20
        /// Idle connections are closed after this many seconds.
        public var connectionTimeoutSeconds = 90
        /// Open connections at most (long-poll watchers included).
        public var connectionLimit = 20_000
        /// Open connections from one client address (an IPv4 address, an IPv6 /64) at most, and
        /// four times as many from one IPv6 /56 (one home: 256 /64s, which at 256 connections each
        /// would fill ``connectionLimit``); 0 for no limit (behind a proxy every connection comes
        /// from the proxy's address, and the proxy limits per client instead).
        public var connectionsPerAddress = 0
        /// libmicrohttpd's memory for one connection: the request's head and read buffer, the
        /// answer's head. A head that does not fit is refused (431). libmicrohttpd clears it after
        /// every request, so it costs time on each request as well as memory on each connection.
        public var connectionMemoryBytes = 64 * 1024
        /// Request bodies held in memory at once, over every connection, in bytes, charged as the
        /// bytes arrive (never by what a header announces). A request whose body would pass it is
        /// answered 503 (Retry-After) and the rest of its body is not kept.
        public var maxBufferedBodyBytes = 256 << 20
        /// The share of ``maxBufferedBodyBytes`` the connections of one client address (an IPv4
        /// address or an IPv6 /64) may hold at once; past it, 503 as above.
        public var maxBufferedBodyBytesPerAddress = 32 << 20
        /// The share of ``maxBufferedBodyBytes`` the requests of one share (``HeadVerdict/read(maxBodyBytes:share:)``:
        /// an account, for the Basket server) may hold at once, whatever their addresses; past it, 503
        /// as above. Without it, eight addresses of one account filled the whole budget.
        public var maxBufferedBodyBytesPerShare = 32 << 20
        /// A body must arrive within this many seconds plus one second for every
        /// ``minimumBodyBytesPerSecond`` it announces (its limit, when chunked); a slower one has
        /// its connection closed. While a body is being read, a connection idle this long is closed too.
        public var bodyGraceSeconds = 10
        /// A body slower than this many bytes a second is given up on (a slow sender holds no thread).
        public var minimumBodyBytesPerSecond = 16 << 10
        /// Decides from a request's head, before any byte of its body is read, how large a body
        /// to read (at most ``maxBodyBytes``) or what to answer without keeping the body. Called
        /// only for requests that announce a body.
        public var checkHead: (@Sendable (RequestHead) -> HeadVerdict)?
        /// Answers at least this large are gzip-compressed for clients that accept it.
        public var gzipMinimumBytes = 1_024
        /// The longest an HTTP thread waits for an event before it looks at its connections again
        /// (milliseconds). Nothing should need it: it bounds what a lost wake-up would cost.
        /// Tests raise it, so that one would show.
        public var idleWakeMilliseconds = 1_000
        /// Header fields every answer carries, errors included, unless the handler set the same
        /// field itself (a page's own Content-Security-Policy, say).
        public var headersForEveryAnswer: [(String, String)] = []
        /// Called once per finished request, after the answer went out (the access log, metrics).
        public var onRequestCompleted: (@Sendable (CompletedRequest) -> Void)?

        /// Defaults: 127.0.0.1:8080 and the limits above.
        public init(host: String = "127.0.0.1", port: Int = 8080) {
            self.host = host
            self.port = port
        }
    }

    /// What the access log and metrics see of a finished request.
    public struct CompletedRequest: Sendable {
        /// The request's method.
        public var method: String
        /// The request's path, as sent.
        public var path: String
        /// The route that matched (its pattern), for metrics.
        public var route: String
        /// The status answered.
        public var status: Int
        /// Bytes of the answer's body.
        public var responseBytes: Int
        /// From the request's head arriving to the answer's last byte.
        public var seconds: Double
        /// False when the client went away before the answer was sent.
        public var completed: Bool
    }
}
