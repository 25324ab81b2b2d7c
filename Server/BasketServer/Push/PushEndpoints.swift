public import Curl
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the server may post Web Push messages. A subscription's endpoint is an address a client
/// chose, and posting to it is a request the server makes on the client's behalf: without care,
/// a way to reach the server's own network (a metadata service, an admin port, a database). So
/// an endpoint is taken only when it is an `https` URL whose host, when it is an address, is a
/// public one; and when the message is posted, every address the name resolves to is checked
/// again as libcurl connects (`CurlRequest/allowsAddress`), so a name that resolves to a private
/// address at sending time is refused too. Proxies from the environment are not used for it.
///
/// `allowedPrefixes` (`--push-allow-endpoint`) lifts both rules for endpoints that begin with one
/// of them: the tests' receiver on 127.0.0.1 over plain HTTP.
public struct PushEndpoints: Sendable {
    /// Endpoints beginning with one of these may be `http` and private.
    public var allowedPrefixes: [String]

    /// The longest endpoint taken, in bytes (browsers' are under 600).
    public static let maxBytes = 1024

    /// A policy that allows private endpoints beginning with `allowedPrefixes` only.
    public init(allowedPrefixes: [String] = []) { self.allowedPrefixes = allowedPrefixes }

    /// Why an endpoint is refused.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// Longer than ``PushEndpoints/maxBytes``.
        case tooLong
        /// Not a URL with a host.
        case notAURL
        /// Not `https` (and not under an allowed prefix).
        case notHTTPS
        /// A host that is an address, but not a public one.
        case privateAddress
        /// A user name or password in the URL.
        case credentials

        public var description: String {
            switch self {
            case .tooLong: "is longer than \(PushEndpoints.maxBytes) bytes"
            case .notAURL: "is not a URL with a host"
            case .notHTTPS: "is not an https URL"
            case .privateAddress: "is not a public address"
            case .credentials: "carries a user name or password"
            }
        }
    }

    /// The endpoint as a URL when it may be posted to.
    public func check(_ endpoint: String) throws(Refusal) -> URL {
        guard endpoint.utf8.count <= Self.maxBytes else { throw .tooLong }
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host,
            !host.isEmpty, endpoint.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 })
        else { throw .notAURL }
        guard url.user == nil, url.password == nil else { throw .credentials }
        if isAllowedPrivately(endpoint) { return url }
        guard scheme == "https" else { throw .notHTTPS }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if let address = Self.literalAddress(bare) {
            guard Self.isPublic(address) else { throw .privateAddress }
        } else if bare.lowercased() == "localhost" || bare.lowercased().hasSuffix(".localhost") {
            throw .privateAddress
        }
        return url
    }

    /// Whether `endpoint` begins with an allowed prefix (and so may be `http` and private).
    public func isAllowedPrivately(_ endpoint: String) -> Bool {
        allowedPrefixes.contains { !$0.isEmpty && endpoint.hasPrefix($0) }
    }

    /// The check made as libcurl connects to `endpoint`: every address when it is allowed
    /// privately, else public ones only.
    func addressCheck(for endpoint: String) -> @Sendable (CurlAddress) -> Bool {
        if isAllowedPrivately(endpoint) { return { _ in true } }
        return { Self.isPublic($0) }
    }

    /// The address a URL's host writes literally (`192.0.2.1`, `2001:db8::1`), nil for a name.
    static func literalAddress(_ host: String) -> CurlAddress? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return .v4(withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return .v6(withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }

    /// Whether `address` is a public unicast address: not loopback, private (RFC 1918, unique
    /// local), link-local, shared (RFC 6598), documentation, benchmarking, multicast, reserved or
    /// unspecified; IPv4 inside IPv6 (mapped, NAT64) is judged as IPv4.
    public static func isPublic(_ address: CurlAddress) -> Bool {
        switch address {
        case .v4(let b):
            guard b.count == 4 else { return false }
            switch (b[0], b[1], b[2]) {
            case (0, _, _), (10, _, _), (127, _, _), (169, 254, _), (192, 168, _): return false
            case (100, 64...127, _), (172, 16...31, _), (198, 18...19, _): return false
            case (192, 0, 0), (192, 0, 2), (198, 51, 100), (203, 0, 113), (192, 88, 99): return false
            case (224...255, _, _): return false
            default: return true
            }
        case .v6(let b):
            guard b.count == 16 else { return false }
            let prefix80IsZero = b[0..<10].allSatisfy { $0 == 0 }
            if prefix80IsZero && b[10] == 0xff && b[11] == 0xff { return isPublic(.v4(Array(b[12...]))) }
            if prefix80IsZero && b[10] == 0 && b[11] == 0 { return false }  // ::, ::1, IPv4-compatible
            if b[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return isPublic(.v4(Array(b[12...]))) }
            if b[0] & 0xfe == 0xfc { return false }  // fc00::/7 unique local
            if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false }  // fe80::/10 link-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return false }  // fec0::/10 site-local
            if b[0] == 0xff { return false }  // multicast
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false }  // documentation
            if b[0] == 0x01 && b[1..<8].allSatisfy({ $0 == 0 }) { return false }  // 100::/64 discard
            if b[0] == 0x20 && b[1] == 0x02 { return isPublic(.v4(Array(b[2..<6]))) }  // 6to4
            return b[0] & 0xe0 == 0x20  // 2000::/3, the global unicast space
        }
    }
}
