import Foundation

/// The unit per-address limits count: an IPv4 address, or an IPv6 address's /64 network. One
/// subscriber commonly holds a whole /64 (2^64 addresses), so counting each IPv6 address apart
/// would give one attacker unlimited addresses. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`)
/// count as their IPv4 address.
enum AddressGroup {
    /// The group of `address` (a numeric IPv4 or IPv6 address as text); text that is neither is
    /// its own group.
    static func of(_ address: String) -> String {
        guard address.utf8.contains(UInt8(ascii: ":")) else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let octets = withUnsafeBytes(of: &bytes) { Array($0) }
        if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xff && octets[11] == 0xff {
            return octets[12...].map(String.init).joined(separator: ".")
        }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }
}
