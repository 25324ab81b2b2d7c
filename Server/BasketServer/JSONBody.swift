import Foundation
import HTTPServer

/// A strictly read JSON object body: only the named fields, with the right types.
struct JSONBody {
    private let object: [String: Any]

    /// Parses the request body as one JSON object whose keys are all in `allowed`.
    init(_ request: HTTPRequest, allowed: Set<String>) throws {
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

    func string(_ key: String, required: Bool = true, maxLength: Int = 10_000) throws -> String? {
        guard let value = object[key], !(value is NSNull) else {
            if required { throw HTTPError.badRequest("'\(key)' is required", code: "missing_field") }
            return nil
        }
        // Booleans and numbers bridge from NSNumber; only real strings count.
        guard let text = value as? String, !(value is NSNumber) else {
            throw HTTPError.badRequest("'\(key)' must be a string", code: "wrong_type")
        }
        if text.count > maxLength {
            throw HTTPError.badRequest("'\(key)' is longer than \(maxLength) characters", code: "too_long")
        }
        return text
    }
}

/// Builds a JSON answer from plain values, keys sorted.
func json(_ value: [String: Any], status: Int = 200) -> HTTPResponse {
    let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data("{}".utf8)
    return .body(Array(data), status: status, contentType: "application/json")
}
