import BasketCore
import Foundation
import Testing

/// `Wire.ErrorCode` is the one list of the API's errors: docs/api.md's table says the same codes
/// under the same statuses, neither more nor fewer.
struct ErrorCodeTests {
    static let apiDoc = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../docs/api.md").standardized

    /// The table's rows: each status and the codes written in backquotes at the start of its items.
    static func documented() throws -> [String: Int] {
        let text = try String(contentsOf: apiDoc, encoding: .utf8)
        let table = try #require(text.components(separatedBy: "| status | error codes |").last)
        var codes: [String: Int] = [:]
        for line in table.split(separator: "\n").dropFirst() {  // the |---| line
            guard line.hasPrefix("| ") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let status = Int(cells[0]) else { continue }
            // Every `code` that opens an item: at the start of the cell or after ", " / "), ".
            let items = cells[1].components(separatedBy: ", ")
            for item in items where item.hasPrefix("`") {
                let code = item.dropFirst().prefix { $0 != "`" }
                if code.allSatisfy({ $0.isLowercase || $0 == "_" }) { codes[String(code)] = status }
            }
        }
        return codes
    }

    @Test func docsAPIListsEveryCodeUnderItsStatus() throws {
        let documented = try Self.documented()
        let declared = Dictionary(uniqueKeysWithValues: Wire.ErrorCode.allCases.map { ($0.rawValue, $0.status) })
        for (code, status) in declared {
            #expect(documented[code] == status, "\(code) (\(status)) is not in docs/api.md's table under \(status)")
        }
        for (code, status) in documented where declared[code] == nil {
            Issue.record("docs/api.md lists \(code) (\(status)), which Wire.ErrorCode does not have")
        }
    }

    @Test func everyCodeIsAnErrorStatusAndTravelsAsItsRawValue() {
        for code in Wire.ErrorCode.allCases {
            #expect((400..<600).contains(code.status))
            #expect(Wire.ErrorCode(rawValue: code.rawValue) == code)
            #expect(code.rawValue.allSatisfy { $0.isLowercase || $0 == "_" })
        }
    }
}
