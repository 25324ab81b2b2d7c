import BasketCore
import Foundation
import HTTPServer

/// Request bodies read strictly into their ``Wire`` types, and answers written from them.
enum JSONBody {
    /// The body as `Body`: a JSON object with no key `Body` does not have, every field of the right
    /// type, text within its limits (``WireRequest/check()``). Each refusal is a 400 with the code
    /// docs/api.md lists (`invalid_json`, `unknown_field`, `missing_field`, `wrong_type`,
    /// `invalid_parameter`, `too_long`, `control_character`); a body of another media type is a 415.
    static func decode<Body: WireRequest>(_: Body.Type, from request: HTTPRequest) throws -> Body {
        try requireJSONContentType(request)
        guard !request.body.isEmpty else {
            throw HTTPError.badRequest("the body must be a JSON object", code: .invalidJSON)
        }
        guard String(validating: request.body, as: UTF8.self) != nil else {
            throw HTTPError.badRequest("the body is not valid UTF-8", code: .invalidJSON)
        }
        let data = Data(request.body)
        let decoder = JSONDecoder()
        let keys: [String]
        do {
            keys = try decoder.decode(ObjectKeys.self, from: data).keys
        } catch DecodingError.typeMismatch {
            throw HTTPError.badRequest("the body must be a JSON object", code: .invalidJSON)
        } catch {
            throw HTTPError.badRequest("the body is not valid JSON", code: .invalidJSON)
        }
        if let field = Set(keys).subtracting(Body.fields).sorted().first {
            throw HTTPError.badRequest("unknown field '\(field.prefix(64))'", code: .unknownField)
        }
        let body: Body
        do {
            body = try decoder.decode(Body.self, from: data)
        } catch let error as DecodingError {
            throw refusal(error)
        }
        do throws(Wire.Refusal) {
            try body.check()
        } catch {
            throw HTTPError.badRequest(error.message, code: error.code)
        }
        return body
    }

    /// A decoding error as the API's refusal, naming the field.
    static func refusal(_ error: DecodingError) -> HTTPError {
        func name(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
        switch error {
        case .keyNotFound(let key, let context):
            return .badRequest("'\(name(context.codingPath + [key]))' is required", code: .missingField)
        case .valueNotFound(_, let context):
            return .badRequest("'\(name(context.codingPath))' is required", code: .missingField)
        case .typeMismatch(let type, let context) where type == String.self || type == Bool.self:
            return .badRequest(
                "'\(name(context.codingPath))' must be a \(type == String.self ? "string" : "boolean")",
                code: .wrongType)
        case .typeMismatch(_, let context), .dataCorrupted(let context):
            return .badRequest("'\(name(context.codingPath))' must be a whole number", code: .invalidParameter)
        @unknown default:
            return .badRequest("the body is not valid JSON", code: .invalidJSON)
        }
    }

    /// The keys of a JSON object, whatever their values.
    private struct ObjectKeys: Decodable {
        var keys: [String]

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        }
    }

    /// A body sent as something else than JSON is refused (415); no `Content-Type` is taken as
    /// JSON unless `stated`: sign-in and signup must state it, so that no other site's page can
    /// post them from a visitor's browser without a CORS preflight (a form or a `fetch` with no
    /// `Content-Type` can; `application/json` cannot), and lock the visitor's address out.
    static func requireJSONContentType(_ request: HTTPRequest, stated: Bool = false) throws {
        guard let value = request.header("content-type") else {
            guard stated else { return }
            throw HTTPError(.unsupportedMediaType, "this route takes a body stated as application/json")
        }
        let media =
            value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard media.lowercased() == "application/json" else {
            throw HTTPError(
                .unsupportedMediaType, "the body must be application/json, not '\(media.prefix(100))'")
        }
    }
}

/// An answer from its ``Wire`` type, keys sorted.
func answer(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
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
            // A run of plain bytes is copied whole: most of a push is plain text.
            let run = i
            body.withUnsafeBufferPointer { bytes in
                while i < n, bytes[i] >= 0x20, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") { i += 1 }
            }
            if i > run { out.append(contentsOf: body[run..<i]) }
            guard i < n else { break }
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
