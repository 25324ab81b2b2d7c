import Foundation
import Testing

@testable import BasketServer

/// The fast path for push bodies (`{"ops": "…"}`): the same string as a JSON parser reads, or nil
/// for anything else so the strict parser answers.
struct JSONBodyTests {
    static func parsed(_ body: String) -> [UInt8]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            object.count == 1, let text = object["ops"] as? String
        else { return nil }
        return Array(text.utf8)
    }

    @Test func theFastPathReadsWhatAParserReads() {
        let bodies = [
            #"{"ops":"basket-ops 1\nL 0123\n"}"#,
            #"  { "ops" : "plain text, no escapes at all" }  "#,
            #"{"ops":"quote \" backslash \\ slash \/ tab \t cr \r bs \b ff \f"}"#,
            #"{"ops":"é 🙂 キュウリ"}"#,
            #"{"ops":""}"#,
            #"{"ops":"\\\\"}"#,
            #"{"ops":"ends with escape \n"}"#,
        ]
        for body in bodies {
            let fast = JSONBody.onlyString(Array(body.utf8), key: "ops")
            #expect(fast != nil, "\(body)")
            #expect(fast == Self.parsed(body), "\(body)")
        }
    }

    @Test func anythingElseIsLeftToTheStrictParser() {
        let bodies = [
            #"{"ops":"unicode \u00e9 escape"}"#,  // \u: the strict parser's
            "{\"ops\":\"raw control \u{1} byte\"}",
            #"{"ops":"unterminated"#,
            #"{"ops":"x"} trailing"#,
            #"{"ops":"x","more":1}"#,
            #"{"other":"x"}"#,
            #"["ops"]"#,
            #"{"ops":"bad escape \q"}"#,
            #"{"ops":"ends in a backslash\"#,
        ]
        for body in bodies { #expect(JSONBody.onlyString(Array(body.utf8), key: "ops") == nil, "\(body)") }
    }
}
