import Foundation
import HTTPServer

/// A strictly read JSON object body: only the named fields, with the right types.
struct JSONBody {
    let object: [String: Any]

    /// Parses the request body as one JSON object whose keys are all in `allowed`.
    init(_ request: HTTPRequest, allowed: Set<String>) throws {
        try Self.requireJSONContentType(request)
        guard !request.body.isEmpty else {
            throw HTTPError.badRequest("the body must be a JSON object", code: "invalid_json")
        }
        guard String(validating: request.body, as: UTF8.self) != nil else {
            throw HTTPError.badRequest("the body is not valid UTF-8", code: "invalid_json")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(request.body), options: [])
        } catch {
            throw HTTPError.badRequest("the body is not valid JSON", code: "invalid_json")
        }
        guard let object = parsed as? [String: Any] else {
            throw HTTPError.badRequest("the body must be a JSON object", code: "invalid_json")
        }
        let unknown = Set(object.keys).subtracting(allowed)
        if let field = unknown.sorted().first {
            throw HTTPError.badRequest("unknown field '\(field)'", code: "unknown_field")
        }
        self.object = object
    }

    /// A body sent as something else than JSON is refused (415); no `Content-Type` is taken as JSON.
    static func requireJSONContentType(_ request: HTTPRequest) throws {
        guard let value = request.header("content-type") else { return }
        let media =
            value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard media.lowercased() == "application/json" else {
            throw HTTPError(
                415, "unsupported_media_type", "the body must be application/json, not '\(media.prefix(100))'")
        }
    }

    /// The string field `key`, at most `maxBytes` bytes of UTF-8. Control characters are refused
    /// unless `allowControl` (an operation encoding carries tabs and newlines).
    func string(_ key: String, required: Bool = true, maxBytes: Int = 10_000, allowControl: Bool = false) throws
        -> String?
    {
        guard let value = object[key], !(value is NSNull) else {
            if required { throw HTTPError.badRequest("'\(key)' is required", code: "missing_field") }
            return nil
        }
        // Booleans and numbers bridge from NSNumber; only real strings count.
        guard let text = value as? String, !(value is NSNumber) else {
            throw HTTPError.badRequest("'\(key)' must be a string", code: "wrong_type")
        }
        if text.utf8.count > maxBytes {
            throw HTTPError.badRequest("'\(key)' is longer than \(maxBytes) bytes", code: "too_long")
        }
        if !allowControl, text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw HTTPError.badRequest("'\(key)' cannot contain control characters", code: "control_character")
        }
        return text
    }
}

extension JSONBody {
    /// The whole-number field `key` within `range`, or nil when absent.
    func integer(_ key: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !(value is String),
            let whole = Int64(exactly: number.doubleValue), range.contains(whole)
        else {
            throw HTTPError.badRequest(
                "'\(key)' must be a whole number in \(range.lowerBound)...\(range.upperBound)",
                code: "invalid_parameter")
        }
        return whole
    }
}

/// Builds a JSON answer from plain values, keys sorted.
func json(_ value: [String: Any], status: Int = 200) -> HTTPResponse {
    let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data("{}".utf8)
    return .body(Array(data), status: status, contentType: "application/json")
}

extension JSONBody {
    /// The fast path for bodies of exactly one string field, `{"KEY": "…"}` (pushes are large):
    /// the unescaped UTF-8 bytes of the string, or nil when the body has any other shape, so the
    /// strict parser can say what is wrong.
    static func onlyString(_ body: [UInt8], key: String) -> [UInt8]? {
        var i = 0
        let n = body.count
        func skipSpace() {
            while i < n, body[i] == 0x20 || body[i] == 0x0A || body[i] == 0x0D || body[i] == 0x09 { i += 1 }
        }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard i < n, body[i] == byte else { return false }
            i += 1
            return true
        }
        guard expect(UInt8(ascii: "{")), expect(UInt8(ascii: "\"")) else { return nil }
        let keyBytes = Array(key.utf8)
        guard i + keyBytes.count < n, Array(body[i..<(i + keyBytes.count)]) == keyBytes else { return nil }
        i += keyBytes.count
        guard expect(UInt8(ascii: "\"")), expect(UInt8(ascii: ":")), expect(UInt8(ascii: "\"")) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(n)
        while i < n {
            let byte = body[i]
            i += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard expect(UInt8(ascii: "}")) else { return nil }
                skipSpace()
                return i == n ? out : nil
            case UInt8(ascii: "\\"):
                guard i < n else { return nil }
                let escape = body[i]
                i += 1
                switch escape {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                default: return nil  // \u and anything unusual: the strict parser handles it
                }
            case 0..<0x20: return nil
            default: out.append(byte)
            }
        }
        return nil
    }
}
