import Foundation
import Gzip
import HTTPServer
import TestSupport
import Testing

@testable import BasketServer

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
        #expect(header(script, "Content-Type") == "text/javascript")
        #expect(header(script, "Cache-Control") == "max-age=31536000, immutable")
        // A script's own policy would govern nothing: it gets the server's strict one, which the
        // listener adds to every answer (BasketService.headersForEveryAnswer), and nosniff.
        #expect(header(script, "Content-Security-Policy") == nil)
        #expect(header(script, "X-Content-Type-Options") == "nosniff")
        #expect(header(script, "Content-Encoding") == nil)
        // The page is asked for again at each start: with this version's tag, 304 and no body.
        #expect(header(page, "ETag") == "\"\(web.version)\"")
        var again = HTTPRequest(method: "GET", path: "/")
        again.headers["if-none-match"] = "\"000000000000\", \"\(web.version)\""
        let notModified = try #require(router.answer(again))
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        again.headers["if-none-match"] = "\"000000000000\""
        #expect(try #require(router.answer(again)).status == 200)
        let worker0 = try get(router, "/sw.js")
        #expect(header(worker0, "Content-Security-Policy") == WebApp.contentSecurityPolicy)

        // Asked for gzip, a file comes gzipped once at start; it decodes to the file as served
        // without comments (the browser tests run the client so).
        var gzipRequest = HTTPRequest(method: "GET", path: "/a/\(web.version)/app.js")
        gzipRequest.headers["accept-encoding"] = "gzip"
        let zipped = try #require(router.answer(gzipRequest))
        #expect(header(zipped, "Content-Encoding") == "gzip")
        #expect(Gzip.decompress(zipped.body) == script.body)
        // Asked for brotli too, once it is made (after start, off the listener): brotli, smaller
        // than gzip, decoding to the same file; refused with q=0, gzip.
        let deadline = Date().addingTimeInterval(60)
        while !web.brotliIsMade && Date() < deadline { usleep(10_000) }
        #expect(web.brotliIsMade)
        gzipRequest.headers["accept-encoding"] = "gzip, deflate, br, zstd"
        let brotli = try #require(router.answer(gzipRequest))
        #expect(header(brotli, "Content-Encoding") == "br" && header(brotli, "Vary") == "Accept-Encoding")
        #expect(Brotli.decompress(brotli.body) == script.body)
        #expect(brotli.body.count < zipped.body.count * 9 / 10)
        gzipRequest.headers["accept-encoding"] = "br;q=0, gzip"
        #expect(header(try #require(router.answer(gzipRequest)), "Content-Encoding") == "gzip")
        #expect(Brotli.decompress(Array(brotli.body.dropLast(3))) == nil)  // cut short: refused
        let module = try get(router, "/a/\(web.version)/search-index.js")
        let source = try String(contentsOfFile: Self.directory + "/search-index.js", encoding: .utf8)
        #expect(source.contains("/**") && !String(decoding: module.body, as: UTF8.self).contains("/**"))
        #expect(module.body.count < source.utf8.count * 9 / 10)
        // app.js is the bundle of every module the page imports; the worker keeps the bundle, not
        // the modules in it (which are still served one by one).
        let bundle = String(decoding: script.body, as: UTF8.self)
        #expect(
            bundle.contains("const $m_search_index = (() => {") && bundle.contains("const $m_list_screen = (() => {"))
        #expect(!bundle.contains("\nimport ") && !bundle.contains("\nexport "))
        let assets = String(decoding: try get(router, "/sw.js").body, as: UTF8.self)
        #expect(assets.contains("/a/\(web.version)/app.js\"") && !assets.contains("/search.js\""))
        #expect(assets.contains("/a/\(web.version)/app.css\""))

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
        // The worker is served bundled with what it imports (WebBundler), its assets filled in.
        let worker = String(decoding: try get(router, "/sw.js").body, as: UTF8.self)
        #expect(worker.contains("const assets = [\"/a/\(first.version)/app.js\"];"), "\(worker)")
        #expect(!worker.contains("__BASKET_ASSETS__") && !worker.contains("import "), "\(worker)")
        try write("app.js", "2")
        #expect(try WebApp(directory: folder.path).version != first.version)

        try Data(count: WebApp.maxFileBytes + 1).write(to: URL(fileURLWithPath: folder.file("big.js")))
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.path) }
        try FileManager.default.removeItem(atPath: folder.file("big.js"))
        try FileManager.default.removeItem(atPath: folder.file("index.html"))
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.path) }
        #expect(throws: WebApp.LoadError.self) { try WebApp(directory: folder.file("missing")) }
    }

    @Test func scriptsLoseCommentsAndIndentationAndNothingElse() {
        func js(_ text: String) -> String {
            String(decoding: WebMinifier.javaScript(Array(text.utf8)), as: UTF8.self)
        }
        #expect(
            js("/** A doc. */\nexport function f(a) {\n  // a comment\n  return a / 2; // half\n}\n")
                == "export function f(a) {\nreturn a / 2;\n}\n")
        // Strings, templates and regular expressions are copied as they are.
        #expect(js("const s = \"// not a comment /* */\";\n") == "const s = \"// not a comment /* */\";\n")
        #expect(
            js("const t = `line\n    indented // kept ${a /* gone */ + `in ${b}`} end`;\n")
                == "const t = `line\n    indented // kept ${a + `in ${b}`} end`;\n")
        #expect(js("x = a.replace(/\\/\\//g, \"/\");\n") == "x = a.replace(/\\/\\//g, \"/\");\n")
        #expect(js("if (/[/*]/.test(s)) return /a\\/*/;\n") == "if (/[/*]/.test(s)) return /a\\/*/;\n")
        #expect(js("const half = (a) / 2 / b; // two divisions\n") == "const half = (a) / 2 / b;\n")
        #expect(js("const o = { a: 1 }; const r = x ? /b/ : c;\n") == "const o = { a: 1 }; const r = x ? /b/ : c;\n")
        // Two lines stay two (no statement runs into the next), a comment between them or not.
        #expect(js("a = b\n/* between\n lines */\n(c)\n") == "a = b\n(c)\n")
        #expect(js("a = b /* x */ + c\n\n\n   d()\n") == "a = b + c\nd()\n")
        let css = String(
            decoding: WebMinifier.css(Array("/* A rule. */\n.a {\n  content: \" /* kept */ \";\n}\n".utf8)),
            as: UTF8.self)
        #expect(css == ".a {\ncontent: \" /* kept */ \";\n}\n")
    }

    @Test func theBundleOrdersModulesAfterWhatTheyImportAndRefusesWhatItCannotRead() throws {
        func modules(_ files: [String: String]) -> [String: [UInt8]] { files.mapValues { Array($0.utf8) } }
        let (code, names) = try WebBundler.bundle(
            entry: "app.js",
            modules: modules([
                "app.js":
                    "import { twice, unused as u } from \"./b.js\";\nimport * as a from \"./a.js\";\nconsole.log(twice(a.one));\n",
                "b.js":
                    "import { one } from \"./a.js\";\nexport function twice(x) {\nreturn 2 * x * one;\n}\nexport const unused = 0;\n",
                "a.js": "export const one = 1;\n", "other.js": "export class NotImported {}\n",
            ]))
        #expect(names == ["a.js", "b.js", "app.js"])
        #expect(
            String(decoding: code, as: UTF8.self)
                == "// Basket's web client: a.js, b.js, app.js (WebBundler).\n"
                + "const $m_a = (() => {\nconst one = 1;\n\nreturn { one };\n})();\n"
                + "const $m_b = (() => {\nconst { one } = $m_a;\nfunction twice(x) {\nreturn 2 * x * one;\n}\nconst unused = 0;\n\n"
                + "return { twice, unused };\n})();\n"
                + "(() => {\nconst { twice, unused: u } = $m_b;\nconst a = $m_a;\nconsole.log(twice(a.one));\n\n})();\n"
        )
        for (files, problem) in [
            (["app.js": "import \"./a.js\";\n", "a.js": ""], "an import the bundler does not read"),
            (["app.js": "import { x } from \"./missing.js\";\n"], "no module missing.js"),
            (
                [
                    "app.js": "import { x } from \"./a.js\";\n",
                    "a.js": "import { y } from \"./app.js\";\nexport const x = 1;\n",
                ], "import cycle"
            ),
            (["app.js": "export default 1;\n"], "an export the bundler does not read"),
        ] {
            #expect(throws: WebBundler.Failure.self, "\(problem)") {
                do {
                    _ = try WebBundler.bundle(entry: "app.js", modules: modules(files))
                } catch let failure as WebBundler.Failure {
                    #expect(failure.description.contains(problem), "\(failure.description)")
                    throw failure
                }
            }
        }
    }

    /// Every module of the web client, minified, is still JavaScript that parses (node --check, where
    /// Node is installed: Scripts/check-web.sh installs it).
    @Test func everyMinifiedModuleParses() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") else { return }
        let folder = TemporaryDirectory("basket-minified")
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.directory) where name.hasSuffix(".js") {
            let source = try #require(FileManager.default.contents(atPath: Self.directory + "/" + name))
            let out = folder.file(name.replacingOccurrences(of: ".js", with: ".mjs"))
            try Data(WebMinifier.javaScript(Array(source))).write(to: URL(fileURLWithPath: out))
            let node = Process()
            node.executableURL = URL(fileURLWithPath: "/usr/bin/node")
            node.arguments = ["--check", out]
            let errors = Pipe()
            node.standardError = errors
            try node.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            node.waitUntilExit()
            #expect(node.terminationStatus == 0, "\(name): \(message)")
        }
        // And the bundle the page loads.
        let web = try WebApp(directory: Self.directory)
        let bundle = try get(
            BasketService(store: try SQLiteStore(path: ":memory:")).router(web: web), "/a/\(web.version)/app.js")
        let out = folder.file("bundle.mjs")
        try Data(bundle.body).write(to: URL(fileURLWithPath: out))
        let node = Process()
        node.executableURL = URL(fileURLWithPath: "/usr/bin/node")
        node.arguments = ["--check", out]
        try node.run()
        node.waitUntilExit()
        #expect(node.terminationStatus == 0)
    }
}
