import BasketCore
import BasketModel

/// The trace as one self-contained HTML page: inline SVG and CSS, no script, nothing fetched.
/// A lane per device and one for the server along the steps; each write a dot with its field,
/// value and hybrid timestamp; pushes and pulls as arrows between a device and the server;
/// offline stretches and server losses shaded, restarts marked; then the registers that saw
/// concurrent writes with the winner and why, each device's final list, and every step in words.
extension Trace {
    /// The page.
    public func html() -> String {
        var page = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)): what happened</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; background: #fff; }
            h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
            .scroll { overflow-x: auto; border: 1px solid #ddd; }
            svg text { font: 11px system-ui, sans-serif; fill: #1b1b1b; }
            svg .lane-name { font-weight: 600; font-size: 13px; }
            table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
            .lists { display: flex; flex-wrap: wrap; gap: 2rem; } .lists ul { padding-left: 1.2rem; }
            .failed { color: #b00020; font-weight: 600; }
            code { font-size: 12px; }
            </style>
            </head>
            <body>
            <h1>\(escape(title))</h1>
            <p>\(devices.count) devices, \(steps.count) steps. Dots are writes (hover for the value and hybrid
            timestamp), arrows are pushes to the server and pulls from it, grey stretches are a device
            offline, red ones the server losing data.</p>

            """
        page += "<div class=\"scroll\">\n" + svg() + "\n</div>\n"
        page += contestsTable()
        page += finalListsSection()
        page += stepsTable()
        page += "</body>\n</html>\n"
        return page
    }

    /// Step columns and lane rows, in pixels: a column is wider when its step syncs several
    /// devices (each sync's arrows get a slot of their own).
    var column: Int { steps.count > 120 ? 18 : 34 }
    static let laneHeight = 64
    static let left = 110
    /// Room above the first lane for the writes' labels (none past 120 steps).
    var top: Int { steps.count > 120 ? 24 : 80 }

    /// Where each step's column starts and how wide it is.
    struct Layout {
        var starts: [Int]
        var widths: [Int]
        var end: Int

        /// The middle of a step's column, or of its slot `slot` of `slots`.
        func x(_ step: Int, slot: Int = 0, of slots: Int = 1) -> Int {
            guard slots > 1 else { return starts[step] + widths[step] / 2 }
            return starts[step] + 4 + (widths[step] - 8) * (2 * slot + 1) / (2 * slots)
        }
    }

    func layout() -> Layout {
        var starts: [Int] = []
        var widths: [Int] = []
        var x = Self.left
        for step in steps {
            let syncs = step.events.filter { if case .synced = $0 { true } else { false } }.count
            let width = max(column, 14 * syncs + 8)
            starts.append(x)
            widths.append(width)
            x += width
        }
        return Layout(starts: starts, widths: widths, end: x)
    }

    func laneY(_ lane: String) -> Int {
        let index = devices.firstIndex(of: lane) ?? devices.count
        return top + index * Self.laneHeight + Self.laneHeight / 2
    }

    func svg() -> String {
        let layout = self.layout()
        let width = layout.end + 20
        let height = top + (devices.count + 1) * Self.laneHeight + 24
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" role="img" \
            aria-label="Run of \(escape(title)): \(devices.count) device lanes and the server's">
            <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" \
            orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>

            """
        // Lanes: a band and a name each, the server last.
        for (index, lane) in (devices + ["server"]).enumerated() {
            let y = top + index * Self.laneHeight
            out += "<g role=\"group\" aria-label=\"lane \(escape(lane))\">"
            out += "<rect x=\"0\" y=\"\(y)\" width=\"\(width)\" height=\"\(Self.laneHeight)\" "
            out += "fill=\"\(index % 2 == 0 ? "#f7f7f9" : "#ffffff")\"/>"
            out += "<line x1=\"\(Self.left)\" y1=\"\(y + Self.laneHeight / 2)\" x2=\"\(width - 10)\" "
            out += "y2=\"\(y + Self.laneHeight / 2)\" stroke=\"#bbb\"/>"
            out += "<text class=\"lane-name\" x=\"8\" y=\"\(y + Self.laneHeight / 2 + 4)\">\(escape(lane))</text></g>\n"
        }
        // Step numbers along the bottom.
        for index in steps.indices where steps.count <= 120 || index % 5 == 0 {
            out += "<text x=\"\(layout.x(index) - 4)\" y=\"\(height - 8)\" fill=\"#777\">\(index + 1)</text>"
        }
        out += "\n" + shading(layout) + marks(layout)
        out += "</svg>"
        return out
    }

    /// Offline stretches (grey) and server losses (red), restarts (a dashed line).
    func shading(_ layout: Layout) -> String {
        var out = ""
        var offlineSince: [String: Int] = [:]
        func band(_ lane: String, from: Int, to: Int, color: String, label: String) -> String {
            let y = laneY(lane) - Self.laneHeight / 2 + 4
            let (left, right) = (layout.starts[from], layout.starts[to] + layout.widths[to])
            return "<rect role=\"img\" aria-label=\"\(escape(label))\" x=\"\(left)\" y=\"\(y)\" "
                + "width=\"\(right - left)\" height=\"\(Self.laneHeight - 8)\" fill=\"\(color)\" "
                + "opacity=\"0.35\"><title>\(escape(label))</title></rect>\n"
        }
        for (index, step) in steps.enumerated() {
            for event in step.events {
                switch event {
                case .offline(let device): offlineSince[device] = offlineSince[device] ?? index
                case .online(let device):
                    if let since = offlineSince.removeValue(forKey: device) {
                        out += band(
                            device, from: since, to: index, color: "#9e9e9e",
                            label: "\(device) offline, steps \(since + 1)–\(index + 1)")
                    }
                case .serverLostData:
                    out += band(
                        "server", from: index, to: index, color: "#d32f2f",
                        label: "the server lost data at step \(index + 1)")
                case .serverRestarted:
                    let y = laneY("server")
                    out +=
                        "<line role=\"img\" aria-label=\"server restart at step \(index + 1)\" "
                        + "x1=\"\(layout.x(index))\" y1=\"\(y - 26)\" x2=\"\(layout.x(index))\" y2=\"\(y + 26)\" stroke=\"#333\" "
                        + "stroke-dasharray=\"4 3\"><title>server restart at step \(index + 1)</title></line>\n"
                default: break
                }
            }
        }
        for (device, since) in offlineSince.sorted(by: { $0.key < $1.key }) {
            out += band(
                device, from: since, to: max(since, steps.count - 1), color: "#9e9e9e",
                label: "\(device) offline from step \(since + 1)")
        }
        return out
    }

    /// Writes as dots, syncs as arrows.
    func marks(_ layout: Layout) -> String {
        var out = ""
        for (index, step) in steps.enumerated() {
            let syncs = step.events.filter { if case .synced = $0 { true } else { false } }.count
            var slot = 0
            for event in step.events {
                let x = { layout.x(index) }
                switch event {
                case .wrote(let device, let writes, _):
                    for (n, op) in writes.enumerated() {
                        let y = laneY(device) - 10 + (n % 3) * 10
                        let text = describe(op)
                        out += "<g role=\"img\" aria-label=\"write by \(escape(device)): \(escape(text))\">"
                        out += "<circle cx=\"\(x())\" cy=\"\(y)\" r=\"4.5\" fill=\"\(color(of: device))\">"
                        out +=
                            "<title>\(escape(device)) wrote \(escape(text)) at \(op.version.timestamp)</title></circle>"
                        out += "</g>\n"
                    }
                    if steps.count <= 120, let first = writes.first {
                        let label = describe(first) + (writes.count > 1 ? " +\(writes.count - 1)" : "")
                        out +=
                            "<text x=\"\(x() + 6)\" y=\"\(laneY(device) - 16)\" "
                            + "transform=\"rotate(-30 \(x() + 6) \(laneY(device) - 16))\">"
                            + "\(escape(String(label.prefix(22))))</text>\n"
                    }
                case .synced(let device, let pushed, let pulled, let reached):
                    let (from, to) = (laneY(device), laneY("server"))
                    let at = layout.x(index, slot: slot, of: syncs)
                    slot += 1
                    guard reached else {
                        out += "<g role=\"img\" aria-label=\"\(escape(device)) could not reach the server\">"
                        out += "<text x=\"\(at - 4)\" y=\"\(from + 22)\" fill=\"#b00020\">×</text>"
                        out += "<title>\(escape(device)) could not reach the server</title></g>\n"
                        continue
                    }
                    if pushed > 0 {
                        let label = "\(device) pushes \(pushed) write\(pushed == 1 ? "" : "s") to the server"
                        out += arrow(at - 3, from + 6, at - 3, to - 6, label: label, color: "#1565c0")
                    }
                    if !pulled.isEmpty {
                        let label =
                            "\(device) pulls \(pulled.count) write\(pulled.count == 1 ? "" : "s") from the server: "
                            + pulled.prefix(6).map(describe).joined(separator: "; ")
                            + (pulled.count > 6 ? "…" : "")
                        out += arrow(at + 3, to - 6, at + 3, from + 6, label: label, color: "#2e7d32")
                    }
                default: break
                }
            }
        }
        return out
    }

    func arrow(_ x1: Int, _ y1: Int, _ x2: Int, _ y2: Int, label: String, color: String) -> String {
        "<g role=\"img\" aria-label=\"\(escape(label))\"><line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\" "
            + "stroke=\"\(color)\" stroke-width=\"1.6\" marker-end=\"url(#arrow)\"/>"
            + "<title>\(escape(label))</title></g>\n"
    }

    func color(of device: String) -> String {
        let palette = ["#6a1b9a", "#ef6c00", "#00838f", "#ad1457", "#558b2f", "#4527a0", "#c62828", "#283593"]
        return palette[(devices.firstIndex(of: device) ?? 0) % palette.count]
    }

    /// "Milk.checked = true", "list.title = "Weekend"".
    func describe(_ op: Op) -> String {
        let target = op.item == .list ? "list" : names[op.item] ?? "item \(op.item.description.prefix(8))"
        return "\(target).\(op.field.rawValue) = \(op.value)"
    }

    func contestsTable() -> String {
        let contests = self.contests
        var out = "<h2 id=\"winners\">Registers written concurrently: who won and why</h2>\n"
        guard !contests.isEmpty else { return out + "<p>No register saw concurrent writes.</p>\n" }
        out += "<table aria-labelledby=\"winners\"><thead><tr><th>Register</th><th>Writes (winner first)</th>"
        out += "<th>Winner</th><th>Why</th></tr></thead><tbody>\n"
        for contest in contests {
            let register = (contest.name.map { "\($0)" } ?? "the list") + " · " + contest.field.rawValue
            let writes = contest.writes.map { op in
                "<li><code>\(escape(op.value.description))</code> by \(escape(device(of: op.version.replica))) at "
                    + "<code>\(op.version.timestamp)</code></li>"
            }.joined()
            out += "<tr><td>\(escape(register))</td><td><ul>\(writes)</ul></td>"
            out += "<td><code>\(escape(contest.writes[0].value.description))</code> by "
            out += "\(escape(device(of: contest.writes[0].version.replica)))</td>"
            out += "<td>\(escape(contest.reason))</td></tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    func device(of replica: ReplicaID) -> String {
        replicas.first { $0.value == replica }?.key ?? "replica \(replica.description.prefix(8))"
    }

    func finalListsSection() -> String {
        var out = "<h2>Each device's list at the end</h2>\n<div class=\"lists\">\n"
        for device in devices {
            out += "<section aria-label=\"\(escape(device))'s list\"><h3>\(escape(device))</h3>"
            guard let list = finalLists[device] else {
                out += "<p>(no list)</p></section>\n"
                continue
            }
            out += "<p>\(escape(list.title ?? "(untitled)"))</p><ul>"
            for item in list.items.values.sorted(by: { $0.name < $1.name }) {
                out += "<li>\(escape(item.description))</li>"
            }
            out += list.items.isEmpty ? "<li>(empty)</li>" : ""
            out += "</ul></section>\n"
        }
        return out + "</div>\n"
    }

    func stepsTable() -> String {
        var out = "<h2 id=\"steps\">Every step</h2>\n<table aria-labelledby=\"steps\"><thead><tr><th>#</th>"
        out += "<th>Step</th><th>What happened</th></tr></thead><tbody>\n"
        for (index, step) in steps.enumerated() {
            let happened = step.events.map { event -> String in
                switch event {
                case .wrote(let device, let writes, _):
                    return "\(device) wrote "
                        + writes.map { "\(describe($0)) at \($0.version.timestamp)" }
                        .joined(separator: ", ")
                case .synced(let device, let pushed, let pulled, let reached):
                    return reached
                        ? "\(device) pushed \(pushed), pulled \(pulled.count)" : "\(device) could not reach the server"
                case .offline(let device): return "\(device) offline"
                case .online(let device): return "\(device) online"
                case .serverRestarted: return "server restarted"
                case .serverBackedUp: return "server backed up"
                case .serverLostData: return "server lost data since its last backup"
                case .timeMoved(let ms): return "every clock +\(ms) ms"
                case .clockMoved(let device, let ms): return "\(device)'s clock \(ms >= 0 ? "+" : "")\(ms) ms"
                }
            }
            out += "<tr\(step.failed ? " class=\"failed\"" : "")><td>\(index + 1)</td>"
            out +=
                "<td><code>\(escape(step.label))</code></td><td>\(escape(happened.joined(separator: "; ")))</td></tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
