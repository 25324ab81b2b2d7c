import BasketCore
import BasketReplica

/// `basket ls --json` written byte by byte: the same bytes `JSONEncoder` gives for `{list,
/// items}` with sorted keys and unescaped slashes, without its generic path per item (a list
/// of 10,000 items went from 9x a process start to about the cost of `basket ls`).
enum ListingJSON {
    /// The listing of `list` holding `items`, with a newline.
    static func bytes(list: ListJSON?, items: [Item], stale: Output.Stale? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + items.count * 170)
        out += Array(#"{"items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            for key in itemKeys {
                out += key.prefix
                guard let field = key.field else {
                    out += Array(item.id.description.utf8)
                    out.append(UInt8(ascii: "\""))
                    continue
                }
                switch item[field] {
                case .null: out += Array("null".utf8)
                case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
                case .text(let text): JSONText.appendQuoted(text, to: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        // No list yet: `{"items":[]}`, as before.
        if let list {
            out += Array(#","list":{"id":"#.utf8)
            JSONText.appendQuoted(list.id, to: &out)
            out += Array(#","title":"#.utf8)
            JSONText.appendQuoted(list.title, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        // A copy that could not be pulled first says how old it is, as Output.Stale encodes it.
        if let stale {
            out += Array(#","stale":{"lastSync":"#.utf8)
            appendOptional(stale.lastSync, to: &out)
            out += Array(#","why":"#.utf8)
            JSONText.appendQuoted(stale.why, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out += Array("}\n".utf8)
        return out
    }

    /// An item's keys in sorted order (as ``Item``'s JSON has them under `.sortedKeys`), each with
    /// the bytes before its value: the id's opening quote is part of its prefix.
    static let itemKeys: [(prefix: [UInt8], field: Field?)] = {
        let keys = [("id", nil)] + Field.itemFields.map { ($0.rawValue, Optional($0)) }
        return keys.sorted { $0.0 < $1.0 }.enumerated().map { index, key in
            let separator = index == 0 ? "" : ","
            return (Array("\(separator)\"\(key.0)\":\(key.1 == nil ? "\"" : "")".utf8), key.1)
        }
    }()

    static func appendOptional(_ value: String?, to out: inout [UInt8]) {
        if let value { JSONText.appendQuoted(value, to: &out) } else { out += Array("null".utf8) }
    }
}
