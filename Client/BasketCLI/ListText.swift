package import BasketCore
import BasketReplica

/// A list as text to copy or share (`basket ls --format text|markdown`; the web client's twin
/// is list-text.js, held to it by the conformance vectors): the items to buy, by aisle in the
/// list's order, each with its quantity and note.
package enum ListText {
    /// How the text is written.
    package enum Format: String, CaseIterable, Sendable {
        /// Plain lines: the title, each aisle, "- 2 milk".
        case text
        /// Markdown: a heading per aisle and a task per item ("- [ ] 2 milk"), its marks escaped.
        case markdown
    }

    /// The heading of the items without an aisle.
    package static let otherAisle = "Other"

    /// `items` of the list `title` (whose aisle order is `aisles`) in `format`: what is to buy,
    /// grouped as `basket ls` groups it; "Nothing to buy." when nothing is.
    package static func render(title: String, items: [Item], aisles: [String], format: Format) -> String {
        let toBuy = items.filter { !$0.isChecked && !$0.isDeleted }
        let groups = AisleGroup.grouping(toBuy, aisles: aisles)
        let headed = groups.contains { $0.category != nil }
        var lines: [String] = []
        switch format {
        case .text: lines.append(title)
        case .markdown: lines.append("# " + escaped(title))
        }
        if toBuy.isEmpty { lines += ["", "Nothing to buy."] }
        // A blank line before each group; in Markdown, one after its heading too.
        for group in groups {
            lines.append("")
            if headed {
                let heading = group.category ?? otherAisle
                lines += format == .markdown ? ["## " + escaped(heading), ""] : [heading]
            }
            lines += group.items.map { line($0, format) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One item: "- 2 milk — organic" ("- [ ] …" in Markdown).
    static func line(_ item: Item, _ format: Format) -> String {
        var text = item.quantity.map { $0 + " " } ?? ""
        text += item.name
        if let note = item.note { text += " — " + note }
        return format == .markdown ? "- [ ] " + escaped(text) : "- " + text
    }

    /// `text` with the characters Markdown reads as marks escaped by a backslash.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\`*_[]<>#|~".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
