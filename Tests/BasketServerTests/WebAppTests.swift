import BasketServer
import Foundation
import HTTPServer
import TestSupport
import Testing

/// The web client as the server serves it: the page, the service worker, the manifest and the
/// versioned files, with their caching and security headers.
struct WebAppTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Client/web").standardized.path

    func get(_ router: Router, _ path: String) throws -> HTTPResponse {
        try #require(router.answer(HTTPRequest(method: "GET", path: path)))
    }

    func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test func servesThePageWithAStrictPolicyAndTheVersionedFilesForAYear() throws {
        let web = try WebApp(directory: Self.directory)
        #expect(web.version.count == 12 && web.version.allSatisfy(\.isHexDigit))
        let router = BasketService(store: try SQLiteStore(path: ":memory:")).router(web: web)

        let page = try get(router, "/")
        #expect(page.status == 200)
        #expect(header(page, "Content-Type") == "text/html; charset=utf-8")
        #expect(header(page, "Cache-Control") == "no-cache")
        let policy = try #require(header(page, "Content-Security-Policy"))
        #expect(policy.contains("script-src 'self';") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
        #expect(header(page, "X-Content-Type-Options") == "nosniff")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("/a/\(web.version)/app.js") && !html.contains("__BASKET_"))
        // No inline script: every <script> has a src.
        #expect(!html.contains("<script>") && !html.contains("<script type=\"module\">"))

        let script = try get(router, "/a/\(web.version)/app.js")
        #expect(script.status == 200)
        #expect(header(script, "Content-Type") == "text/javascript; charset=utf-8")
        #expect(header(script, "Cache-Control") == "public, max-age=31536000, immutable")
        #expect(header(script, "Content-Security-Policy") == WebApp.contentSecurityPolicy)

        let worker = String(decoding: try get(router, "/sw.js").body, as: UTF8.self)
        #expect(worker.contains("\"/a/\(web.version)/app.js\"") && !worker.contains("__BASKET_"))
        let manifest = try get(router, "/manifest.webmanifest")
        #expect(header(manifest, "Content-Type") == "application/manifest+json")
        let icons = try JSONSerialization.jsonObject(with: Data(manifest.body)) as? [String: Any]
        #expect((icons?["icons"] as? [[String: Any]])?.count == 4)
        #expect(try get(router, "/a/\(web.version)/icon-192.png").body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func anOldVersionOrAnUnknownFileIsNotFound() throws {
        let web = try WebApp(directory: Self.directory)
        let router = BasketService(store: try SQLiteStore(path: ":memory:")).router(web: web)
        for path in ["/a/000000000000/app.js", "/a/\(web.version)/nothing.js", "/a/\(web.version)/..", "/index.html"] {
            let response = try get(router, path)
            #expect(response.status == 404, "\(path)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("\"error\":\"not_found\""), "\(path)")
        }
        // Without a web client, / is not served at all.
        let bare = BasketService(store: try SQLiteStore(path: ":memory:")).router()
        #expect(try get(bare, "/").status == 404)
    }

    @Test func theVersionFollowsTheFilesAndAFolderOutOfBoundsIsRefused() throws {
        let folder = TemporaryDirectory("basket-web")
        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file(name)))
        }
        try write("index.html", "<script type=module src=/a/__BASKET_VERSION__/app.js></script>")
        try write("sw.js", "const assets = __BASKET_ASSETS__;")
        try write("manifest.webmanifest", "{}")
        try write("app.js", "1")
        try write("notes.txt", "not served")
        try write(".hidden.js", "not served")
        let first = try WebApp(directory: folder.path)
        let router = BasketService(store: try SQLiteStore(path: ":memory:")).router(web: first)
        #expect(try get(router, "/a/\(first.version)/notes.txt").status == 404)
        #expect(try get(router, "/a/\(first.version)/.hidden.js").status == 404)
        #expect(
            String(decoding: try get(router, "/sw.js").body, as: UTF8.self)
                == "const assets = [\"/a/\(first.version)/app.js\",\"/a/\(first.version)/index.html\","
                + "\"/a/\(first.version)/manifest.webmanifest\",\"/a/\(first.version)/sw.js\"];")
        try write("app.js", "2")
        #expect(try WebApp(directory: folder.path).version != first.version)

        try Data(count: WebApp.maxFileBytes + 1).write(to: URL(fileURLWithPath: folder.file("big.js")))
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.path) }
        try FileManager.default.removeItem(atPath: folder.file("big.js"))
        try FileManager.default.removeItem(atPath: folder.file("index.html"))
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.path) }
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.file("missing")) }
    }
}
