import BasketCore
import Testing

/// The table of routes both clients request (`Wire.Route`).
struct RouteTests {
    @Test func aFilledSegmentStaysOneSegment() {
        #expect(Wire.Route.members.path("0123abcd") == "/v1/lists/0123abcd/members")
        // A name cannot reach another path: '/', '.', '?', '%' and non-ASCII are escaped.
        #expect(
            Wire.Route.removeMember.path("L1", "../../tokens?x=%")
                == "/v1/lists/L1/members/%2E%2E%2F%2E%2E%2Ftokens%3Fx%3D%25")
        #expect(Wire.Route.setRole.path("L1", "Zoë") == "/v1/lists/L1/members/Zo%C3%AB")
        #expect(Wire.Route.lists.path() == "/v1/lists")
    }

    @Test func everyRouteIsNamedOnceAndEveryPatternWithItsMethodOnce() {
        let all = Wire.Route.all
        #expect(Set(all.map(\.name)).count == all.count)
        #expect(Set(all.map(\.description)).count == all.count)
        #expect(all.allSatisfy { ["GET", "POST", "PUT", "DELETE"].contains($0.method) && $0.pattern.hasPrefix("/") })
    }
}
