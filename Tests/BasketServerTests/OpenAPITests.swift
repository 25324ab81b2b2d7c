import BasketServer
import Foundation
import HTTPServer
import Testing

struct OpenAPITests {
    /// The (method, path) pairs docs/openapi.yaml documents, read from its `paths:` section.
    static func documented() throws -> Set<String> {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        var result: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(method) { result.insert("\(method) \(path)") }
            }
        }
        return result
    }

    @Test func everyServedRouteIsDocumentedAndBack() throws {
        let store = try SQLiteStore(path: ":memory:")
        let served = Set(BasketService(store: store).router().routes.map { "\($0.method) \($0.pattern)" })
        let documented = try Self.documented()
        #expect(served.count > 10)
        #expect(
            served.subtracting(documented).isEmpty,
            "served but not in docs/openapi.yaml: \(served.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(served).isEmpty,
            "documented but not served: \(documented.subtracting(served).sorted())")
    }
}
