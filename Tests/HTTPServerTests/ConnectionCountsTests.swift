import Testing

@testable import HTTPServer

/// The per-address connection limit, unit by unit: an IPv4 address, an IPv6 /64, and an IPv6
/// /56 (one home's 256 /64s) at four addresses' worth.
struct ConnectionCountsTests {
    static func ipv6(_ high: UInt64) -> ConnectionCounts.Address { .init(high: high, low: 0) }

    @Test func oneHomesNetworkHoldsFourAddressesWorthAndNoMore() {
        let counts = ConnectionCounts(total: 10_000, perAddress: 10)
        // Forty /64s of one /56 (2001:db8:0:100::/56): 40 connections, then the /56 is full.
        var admitted = 0
        for subnet in 0..<40 {
            for _ in 0..<10 {
                let address = Self.ipv6(0x2001_0db8_0000_0100 | UInt64(subnet))
                if counts.admits(address) {
                    counts.opened(address)
                    admitted += 1
                }
            }
        }
        #expect(admitted == 40)
        // Another home's /64 and an IPv4 address are admitted; one of the first home's closes,
        // and one more of it comes in.
        #expect(counts.admits(Self.ipv6(0x2001_0db8_0000_0200)))
        #expect(counts.admits(ConnectionCounts.Address(high: 0, low: 0xffff_0a00_0001)))
        let first = Self.ipv6(0x2001_0db8_0000_0100)
        #expect(!counts.admits(Self.ipv6(0x2001_0db8_0000_01ff)))
        counts.closed(first)
        #expect(counts.admits(Self.ipv6(0x2001_0db8_0000_01ff)))
        #expect(counts.open == 39)
    }

    @Test func oneAddressHoldsItsLimit() {
        let counts = ConnectionCounts(total: 10_000, perAddress: 3)
        let address = ConnectionCounts.Address(high: 0, low: 0xffff_7f00_0001)
        for _ in 0..<3 {
            #expect(counts.admits(address))
            counts.opened(address)
        }
        #expect(!counts.admits(address))
        #expect(address.network == nil)
    }
}
