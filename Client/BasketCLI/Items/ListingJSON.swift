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
            out += Array(#"{"category":"#.utf8)
            appendOptional(item.category, to: &out)
            out += Array(#","checked":"#.utf8)
            out += Array((item.isChecked ? "true" : "false").utf8)
            out += Array(#","deleted":"#.utf8)
            out += Array((item.isDeleted ? "true" : "false").utf8)
            out += Array(#","id":""#.utf8)
            out += Array(item.id.description.utf8)
            out += Array(#"","name":"#.utf8)
            JSONText.appendQuoted(item.name, to: &out)
            out += Array(#","note":"#.utf8)
            appendOptional(item.note, to: &out)
            out += Array(#","quantity":"#.utf8)
            appendOptional(item.quantity, to: &out)
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

    static func appendOptional(_ value: String?, to out: inout [UInt8]) {
        if let value { JSONText.appendQuoted(value, to: &out) } else { out += Array("null".utf8) }
    }
}
