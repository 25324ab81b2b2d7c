import BasketCore
import Foundation
public import HTTPServer

/// The web client (Client/web), read into memory once at start and served on the same origin as
/// the API:
///
/// - `GET /` is the page, `GET /sw.js` the service worker, `GET /manifest.webmanifest` the web app
///   manifest: never cached without asking (`Cache-Control: no-cache`), so a new version is seen
///   at the next start;
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
    }

    /// Why a web client folder cannot be served.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// At most this many files, each at most this many bytes: the folder is read into memory.
    public static let maxFiles = 64
    public static let maxFileBytes = 2 << 20

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
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
            raw[name] = File(body: Array(data), contentType: type)
        }
        for required in ["index.html", "sw.js", "manifest.webmanifest"] where raw[required] == nil {
            throw LoadError(description: "the web client in \(directory) has no \(required)")
        }
        var hashed: [UInt8] = []
        for name in raw.keys.sorted() {
            hashed += Array(name.utf8) + [0] + raw[name]!.body + [0]
        }
        let version = String(Hex.encode(SHA256.hash(hashed)).prefix(12))
        // Not kept ahead: the catalogue's files (one per language: a page fetches its own
        // language's when needed, and the service worker keeps what was fetched) and the large
        // icons (the browser fetches them when the app is installed; a start does not need them).
        let assets = raw.keys.sorted().filter { !$0.hasPrefix("catalogue-") && !$0.contains("-512") }
            .map { "\"/a/\(version)/\($0)\"" }.joined(separator: ",")
        func substituted(_ name: String) -> File {
            var file = raw[name]!
            let text = String(decoding: file.body, as: UTF8.self)
                .replacingOccurrences(of: "__BASKET_VERSION__", with: version)
                .replacingOccurrences(of: "__BASKET_ASSETS__", with: "[\(assets)]")
            file.body = Array(text.utf8)
            return file
        }
        self.version = version
        self.page = substituted("index.html")
        self.worker = substituted("sw.js")
        self.manifest = substituted("manifest.webmanifest")
        var files = raw
        files["index.html"] = page
        files["sw.js"] = worker
        files["manifest.webmanifest"] = manifest
        self.files = files
    }

    /// The web client's routes.
    public func register(_ r: inout RouterBuilder) {
        r.on("GET", "/", answer: { [page] _ in Self.response(page, immutable: false) })
        r.on("GET", "/sw.js", answer: { [worker] _ in Self.response(worker, immutable: false) })
        r.on("GET", "/manifest.webmanifest", answer: { [manifest] _ in Self.response(manifest, immutable: false) })
        r.on(
            "GET", "/a/{version}/{file}",
            answer: { [version, files] request in
                guard request.pathParameters["version"] == version, let name = request.pathParameters["file"],
                    let file = files[name]
                else { throw HTTPError.notFound("no such file of the web client (it may be of an older version)") }
                return Self.response(file, immutable: true)
            })
    }

    static func response(_ file: File, immutable: Bool) -> HTTPResponse {
        var response = HTTPResponse.body(file.body, contentType: file.contentType)
        response.headers += [
            ("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache"),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]
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
