public import BasketCore

/// Why a sync call failed.
public enum SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No server could be reached (no network, server down): the outbox is kept.
    case unreachable(String)
    /// The server refused a timestamp too far ahead of its clock.
    case clockSkew(serverTime: UInt64, offsetMilliseconds: UInt64)
    /// The server answered with an error.
    case server(status: Int, code: String, message: String)
    /// The answer could not be read, or broke the protocol (a hostile or broken server).
    case badResponse(String)
    /// The server answered with a redirect, which is not followed: the token would go along.
    case redirected(status: Int, location: String)

    public var description: String {
        switch self {
        case .unreachable(let why): return "cannot reach the server: \(why)"
        case .clockSkew(_, let offset): return "this device's clock is \(offset / 1000) s ahead of the server's"
        case .server(let status, let code, let message): return "the server refused (\(status) \(code)): \(message)"
        case .badResponse(let why): return "the server's answer could not be read: \(why)"
        case .redirected(let status, let location):
            return
                "the server answered \(status), a redirect to '\(location)', which Basket does not follow (the token "
                + "would go along); if that is the server's new address, run: basket remote set \(location)"
        }
    }

    /// The server's error code, when it answered with one.
    public var code: String? {
        if case .server(_, let code, _) = self { return code }
        if case .clockSkew = self { return ClockSkewError.code }
        return nil
    }

    /// The server's words, when it answered with an error; else the description.
    public var message: String {
        if case .server(_, _, let message) = self { return message }
        return description
    }

    /// The server's error code as the API's (nil for another failure, or a code this client does
    /// not know: a newer server's), to match on instead of the code's text.
    public var errorCode: Wire.ErrorCode? { code.flatMap(Wire.ErrorCode.init(rawValue:)) }

    /// An answer refused past `limit` bytes, counted after gzip was undone.
    public static func answerTooLarge(limit: Int) -> SyncError {
        .badResponse("an answer of more than \(limit) bytes (at most \(limit))")
    }

    /// A request stopped at its deadline of `seconds`: hung if the server had not `began` to
    /// answer, too slow if it had.
    public static func noWholeAnswer(within seconds: Double, began: Bool) -> SyncError {
        .unreachable(
            began
                ? "the server sent no whole answer within \(Int(seconds)) s"
                : "the server did not answer within \(Int(seconds)) s")
    }
}
