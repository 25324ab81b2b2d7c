import BasketCore
public import Foundation
public import PlatformCrypto

/// Voluntary Application Server Identification (RFC 8292): the `Authorization` header that tells
/// a push service a message comes from the server its subscription was made for. A JWT signed
/// with ES256 by the server's key pair, whose public key the browser was given when it
/// subscribed (`GET /v1/push/key`).
public enum VAPID {
    /// How long a token is good for: RFC 8292 §2 allows at most 24 hours.
    public static let lifetimeSeconds: Int64 = 12 * 3600

    /// The header's value for a message to `endpoint`: `vapid t=<JWT>, k=<public key>`.
    /// - Parameters:
    ///   - audience: the origin of the push service (`https://push.example.net`).
    ///   - subject: a contact for the push service's operator (`mailto:` or `https:`).
    ///   - key: the server's key pair, which signs.
    ///   - now: Unix seconds.
    public static func authorization(audience: String, subject: String, key: P256Key, now: Int64) throws -> String {
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = Claims(aud: audience, exp: now + lifetimeSeconds, sub: subject)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Base64URL.encode(try encoder.encode(claims))
        let signingInput = header + "." + body
        let signature = try key.signES256(Array(signingInput.utf8))
        return "vapid t=\(signingInput).\(Base64URL.encode(signature)), k=\(Base64URL.encode(key.publicKeyBytes))"
    }

    /// What a push service checks (RFC 8292 §2–3), for the tests' receiver: the header is a
    /// `vapid` one whose key is `publicKey`, whose signature verifies with it, whose audience is
    /// `audience` and which has not expired at `now` (nor expires more than 24 hours after it).
    /// Returns the subject, or nil when any check fails.
    public static func verify(_ authorization: String, publicKey: [UInt8], audience: String, now: Int64) -> String? {
        guard authorization.hasPrefix("vapid ") else { return nil }
        var parameters: [String: String] = [:]
        for part in authorization.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { parameters[String(pair[0])] = String(pair[1]) }
        }
        guard let token = parameters["t"], let k = parameters["k"], Base64URL.decode(k) == publicKey,
            let key = try? P256Key(publicKey: publicKey)
        else { return nil }
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3, let signature = Base64URL.decode(String(pieces[2])),
            key.verifyES256(signature, of: Array("\(pieces[0]).\(pieces[1])".utf8)),
            let headerBytes = Base64URL.decode(String(pieces[0])),
            let header = try? JSONDecoder().decode([String: String].self, from: Data(headerBytes)),
            header["alg"] == "ES256", let claimBytes = Base64URL.decode(String(pieces[1])),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes)),
            claims.aud == audience, claims.exp > now, claims.exp <= now + 24 * 3600
        else { return nil }
        return claims.sub
    }

    struct Claims: Codable {
        var aud: String
        var exp: Int64
        var sub: String
    }

    /// The origin of an endpoint URL (`https://host[:port]`), the token's audience.
    public static func audience(of endpoint: URL) -> String? {
        guard let scheme = endpoint.scheme?.lowercased(), let host = endpoint.host else { return nil }
        let port = endpoint.port.map { ":\($0)" } ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed.lowercased())\(port)"
    }
}
