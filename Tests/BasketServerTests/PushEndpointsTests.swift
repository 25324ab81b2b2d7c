import Curl
import Foundation
import Testing

@testable import BasketServer

/// Which addresses the server may post push messages to: public unicast ones, never the
/// server's own network, whatever spelling an address takes.
struct PushEndpointsTests {
    static func v4(_ text: String) -> CurlAddress { PushEndpoints.literalAddress(text)! }

    @Test(arguments: [
        "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "127.255.255.254", "169.254.169.254", "172.16.0.1",
        "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.168.1.1", "198.18.0.1", "198.51.100.7", "203.0.113.9",
        "224.0.0.1", "255.255.255.255", "::", "::1", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "64:ff9b::a9fe:a9fe",
        "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "2001:db8::1", "2002:c0a8:0101::1", "100::1",
    ])
    func privateAndSpecialAddressesAreRefused(_ address: String) {
        #expect(!PushEndpoints.isPublic(Self.v4(address)), "\(address)")
    }

    @Test(arguments: [
        "8.8.8.8", "142.250.74.110", "172.32.0.1", "100.128.0.1", "2a00:1450:4001::200e", "::ffff:8.8.8.8",
    ])
    func publicAddressesAreTaken(_ address: String) {
        #expect(PushEndpoints.isPublic(Self.v4(address)), "\(address)")
    }

    @Test func endpointsAreCheckedAsWrittenAndAllowedPrefixesLiftTheRules() throws {
        let strict = PushEndpoints()
        #expect(try strict.check("https://fcm.googleapis.com/fcm/send/abc").host == "fcm.googleapis.com")
        #expect(throws: PushEndpoints.Refusal.notHTTPS) { try strict.check("http://fcm.googleapis.com/x") }
        #expect(throws: PushEndpoints.Refusal.privateAddress) { try strict.check("https://[::1]:8443/x") }
        #expect(throws: PushEndpoints.Refusal.privateAddress) { try strict.check("https://push.localhost/x") }
        #expect(throws: PushEndpoints.Refusal.credentials) { try strict.check("https://a:b@push.example.net/x") }
        #expect(throws: PushEndpoints.Refusal.tooLong) {
            try strict.check("https://push.example.net/" + String(repeating: "a", count: 1_100))
        }
        let testing = PushEndpoints(allowedPrefixes: ["http://127.0.0.1:9000/push/"])
        #expect(try testing.check("http://127.0.0.1:9000/push/a").port == 9000)
        #expect(throws: PushEndpoints.Refusal.notHTTPS) { try testing.check("http://127.0.0.1:9001/push/a") }
        #expect(testing.addressCheck(for: "http://127.0.0.1:9000/push/a")(Self.v4("127.0.0.1")))
        #expect(!testing.addressCheck(for: "https://push.example.net/a")(Self.v4("127.0.0.1")))
    }
}
