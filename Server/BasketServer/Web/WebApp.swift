import BasketCore
import Foundation
import Gzip
public import HTTPServer
import Synchronization

/// The web client (Client/web), read into memory once at start and served on the same origin as
/// the API:
///
/// - `GET /` is the page, `GET /sw.js` the service worker, `GET /manifest.webmanifest` the web app
///   manifest: never cached without asking (`Cache-Control: no-cache`), so a new version is seen
///   at the next start; their tag is the version (`ETag`), and asking again with it
///   (`If-None-Match`) gets 304 while the version is the same;
/// - `GET /a/{version}/{file}` every file, cached for a year (`immutable`): `version` is a hash of
///   every file, so a changed file gets a new address. An old version's address answers 404.
///
/// Every answer carries a Content-Security-Policy that allows scripts, styles, images, workers
/// and connections from this origin only, and no inline script; the page cannot be framed.
/// In the page, the service worker and the manifest, `__BASKET_VERSION__` becomes the version and
/// `__BASKET_ASSETS__` (in the service worker) the JSON array of the files' addresses.
public struct WebApp: Sendable {
    /// The files' version: the first 12 hex digits of SHA-256 over their names and contents.
    public let version: String
    let files: [String: File]
    let page: File
    let worker: File
    let manifest: File

    struct File: Sendable {
        var body: [UInt8]
        var contentType: String
        /// The body gzipped once at start (at zlib's best level), when that is smaller.
        var gzipped: [UInt8]? = nil
        /// The body in brotli at its best quality, once made: a fifth smaller than gzip for the
        /// scripts. Made after start, off the listener (about 2 ms a KB: a second for the whole
        /// client), so a server starts as fast as before; until then gzip is sent.
        var brotli = Later()
    }

    /// A value made after start, read by every request.
    final class Later: Sendable {
        private let value = Mutex<[UInt8]?>(nil)
        /// The value, or nil while it is not made yet (or was not worth making).
        var bytes: [UInt8]? { value.withLock { $0 } }
        func set(_ bytes: [UInt8]) { value.withLock { $0 = bytes } }
    }

    /// Why a web client folder cannot be served.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// At most this many files, each at most this many bytes: the folder is read into memory.
    public static let maxFiles = 96
    /// The largest file of the web client that is served (larger ones are refused at start).
    public static let maxFileBytes = 2 << 20

    /// Scripts need no charset: modules and workers are always read as UTF-8.
    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "webmanifest": "application/manifest+json",
        "json": "application/json",
    ]

    /// The policy every answer of the web client carries.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self';"
        + " manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// Reads the web client in `directory` (index.html, sw.js and manifest.webmanifest required;
    /// files of other kinds, hidden files and folders are left out).
    public init(directory: String) throws(LoadError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw LoadError(description: "cannot read the web client in \(directory): \(error.localizedDescription)")
        }
        var raw: [String: File] = [:]
        for name in names where !name.hasPrefix(".") {
            guard let ext = name.split(separator: ".").last, let type = Self.contentTypes[String(ext)] else { continue }
            guard
                name.utf8.allSatisfy({
                    $0 < 0x80 && ($0 == 0x2D || $0 == 0x2E || $0 == 0x5F || isalnum(Int32($0)) != 0)
                })
            else { continue }
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            guard raw.count < Self.maxFiles else {
                throw LoadError(description: "the web client has more than \(Self.maxFiles) files")
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw LoadError(description: "cannot read \(path)")
            }
            guard data.count <= Self.maxFileBytes else {
                throw LoadError(description: "\(path) is larger than \(Self.maxFileBytes) bytes")
            }
            var body = Array(data)
            // Scripts and style sheets are served without comments and indentation (WebMinifier).
            if name.hasSuffix(".js") {
                body = WebMinifier.javaScript(body)
            } else if name.hasSuffix(".css") {
                body = WebMinifier.css(body)
            }
            raw[name] = File(body: body, contentType: type)
        }
        for required in ["index.html", "sw.js", "manifest.webmanifest"] where raw[required] == nil {
            throw LoadError(description: "the web client in \(directory) has no \(required)")
        }
        // The page's module and every module it imports, as one script served as app.js
        // (WebBundler); the modules stay served one by one too. The service worker likewise, as
        // a classic script (a module service worker is not in every browser a family uses).
        var bundled: Set<String> = []
        let modules = raw.filter { $0.key.hasSuffix(".js") }.mapValues(\.body)
        do {
            if raw["app.js"] != nil {
                let bundle = try WebBundler.bundle(entry: "app.js", modules: modules)
                raw["app.js"]?.body = bundle.code
                bundled = Set(bundle.names).subtracting(["app.js"])
            }
            raw["sw.js"]?.body = try WebBundler.bundle(entry: "sw.js", modules: modules).code
        } catch {
            throw LoadError(description: "cannot bundle the web client in \(directory): \(error.description)")
        }
        var hashed: [UInt8] = []
        for name in raw.keys.sorted() {
            hashed += Array(name.utf8) + [0] + raw[name]!.body + [0]
        }
        let version = String(Hex.encode(SHA256.hash(hashed)).prefix(12))
        // Not kept ahead: the catalogue's files (one per language: a page fetches its own
        // language's when a list is opened, and the service worker keeps what was fetched), the
        // icons in PNG (the browser fetches them when the app is installed; a start does not need
        // them), the page, the worker and the manifest, which have addresses of their own, and
        // the modules in app.js's bundle.
        let assets = raw.keys.sorted()
            .filter {
                !$0.hasPrefix("catalogue-") && !$0.hasSuffix(".png") && !bundled.contains($0)
                    && !["index.html", "sw.js", "manifest.webmanifest"].contains($0)
            }
            .map { "\"/a/\(version)/\($0)\"" }.joined(separator: ",")
        func substituted(_ name: String) -> File {
            var file = raw[name]!
            let text = String(decoding: file.body, as: UTF8.self)
                .replacingOccurrences(of: "__BASKET_VERSION__", with: version)
                .replacingOccurrences(of: "__BASKET_ASSETS__", with: "[\(assets)]")
            file.body = Array(text.utf8)
            file.brotli = Later()
            return file
        }
        self.version = version
        var files = raw
        files["index.html"] = substituted("index.html")
        files["sw.js"] = substituted("sw.js")
        files["manifest.webmanifest"] = substituted("manifest.webmanifest")
        for (name, file) in files where file.body.count >= 256 && !file.contentType.hasPrefix("image/png") {
            if let gzipped = Gzip.compress(file.body, level: 9), gzipped.count < file.body.count {
                files[name]?.gzipped = gzipped
            }
        }
        self.files = files
        self.page = files["index.html"]!
        self.worker = files["sw.js"]!
        self.manifest = files["manifest.webmanifest"]!
        // Brotli at its best quality, off the start: the page's own files first (a first visit's),
        // then the catalogues.
        let compressible = files.filter { $0.value.gzipped != nil }.sorted {
            ($0.key.hasPrefix("catalogue-") ? 1 : 0, $0.key) < ($1.key.hasPrefix("catalogue-") ? 1 : 0, $1.key)
        }.map(\.value)
        let done = brotliMade
        Thread.detachNewThread {
            for file in compressible {
                if let brotli = Brotli.compress(file.body), brotli.count < file.gzipped?.count ?? file.body.count {
                    file.brotli.set(brotli)
                }
            }
            done.set()
        }
    }

    /// Set once every file's brotli is made (or found not worth it): ``brotliIsMade``.
    let brotliMade = Flag()

    /// Whether every file that gets a brotli encoding has it already (the tests wait for it).
    public var brotliIsMade: Bool { brotliMade.isSet }

    /// A flag set once, from any thread.
    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    /// The web client's routes.
    public func register(_ r: inout RouterBuilder) {
        let tag = "\"\(version)\""
        r.on("GET", "/", answer: { [page] request in Self.response(page, request, tag: tag, document: true) })
        r.on("GET", "/sw.js", answer: { [worker] request in Self.response(worker, request, tag: tag, document: true) })
        r.on(
            "GET", "/manifest.webmanifest",
            answer: { [manifest] request in Self.response(manifest, request, tag: tag, document: false) })
        r.on(
            "GET", "/a/{version}/{file}",
            answer: { [version, files] request in
                guard request.pathParameters["version"] == version, let name = request.pathParameters["file"],
                    let file = files[name]
                else { throw HTTPError.notFound("no such file of the web client (it may be of an older version)") }
                return Self.response(file, request, tag: nil, document: false)
            })
    }

    /// A file's answer. The page and the service worker (`document`) carry the web client's
    /// policy; the other files carry the strict one every answer of the server has
    /// (``BasketService/headersForEveryAnswer``, added by the listener: a script's or an image's
    /// policy governs nothing, and each of a first visit's thirty answers is 0.2 KB shorter).
    /// A versioned file (`tag` nil) is cached for a year; the others are asked for again at each
    /// start with the version as their tag, and a browser that has this version gets 304.
    static func response(_ file: File, _ request: HTTPRequest, tag: String?, document: Bool) -> HTTPResponse {
        var response: HTTPResponse
        if let tag, let asked = request.header("if-none-match"),
            asked.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
        {
            response = HTTPResponse(status: 304)
        } else if request.acceptsBrotli, let brotli = file.brotli.bytes {
            response = HTTPResponse.body(brotli, contentType: file.contentType)
            response.headers += [("Content-Encoding", "br"), ("Vary", "Accept-Encoding")]
        } else if let gzipped = file.gzipped, request.acceptsGzip {
            response = HTTPResponse.body(gzipped, contentType: file.contentType)
            response.headers += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
        } else {
            response = HTTPResponse.body(file.body, contentType: file.contentType)
        }
        if let tag {
            response.headers += [("Cache-Control", "no-cache"), ("ETag", tag)]
        } else {
            response.headers.append(("Cache-Control", "max-age=31536000, immutable"))
        }
        if document {
            response.headers += [
                ("Content-Security-Policy", contentSecurityPolicy),
                ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),
                ("X-Frame-Options", "DENY"),
            ]
        } else {
            response.headers.append(("X-Content-Type-Options", "nosniff"))
        }
        return response
    }

    /// The web client folder of a checkout or an installation: `Client/web` under the current
    /// folder, then beside the executable (`.build/<configuration>/` of a checkout,
    /// `<prefix>/bin` with `<prefix>/share/basket/web`); nil when there is none.
    public static func defaultDirectory(executable: String) -> String? {
        let binary = (executable as NSString).deletingLastPathComponent
        let candidates = [
            FileManager.default.currentDirectoryPath + "/Client/web",
            binary + "/../../Client/web",
            binary + "/../../../Client/web",
            binary + "/../share/basket/web",
        ]
        return candidates.map { ($0 as NSString).standardizingPath }.first {
            FileManager.default.fileExists(atPath: $0 + "/index.html")
        }
    }
}
