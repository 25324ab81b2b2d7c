import Foundation

/// A plain text table, the benchmarks' output.
struct Table {
    var title: String
    var header: [String]
    var rows: [[String]] = []

    mutating func add(_ row: String...) { rows.append(row) }

    func render() -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == 0
                    ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[i] - cell.count) + cell
            }.joined(separator: " | ")
        }
        var out = "\n## \(title)\n\n" + line(header) + "\n"
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-") + "\n"
        for row in rows { out += line(row) + "\n" }
        return out
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func formatRate(_ perSecond: Double) -> String {
    if perSecond >= 1e6 { return String(format: "%.2f M", perSecond / 1e6) }
    if perSecond >= 1e3 { return String(format: "%.0f k", perSecond / 1e3) }
    return String(format: "%.0f", perSecond)
}

func formatMillis(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }

/// Options of the form `--name N` (positive whole numbers), each applied through `set`.
func parseNumericOptions(_ arguments: [String], _ set: (String, Int) -> Bool) throws {
    var i = 0
    while i < arguments.count {
        guard i + 1 < arguments.count, let n = Int(arguments[i + 1]), n > 0 else {
            throw BenchError("expected a positive number after \(arguments[i])")
        }
        guard set(arguments[i], n) else { throw BenchError("unknown option \(arguments[i])") }
        i += 2
    }
}
