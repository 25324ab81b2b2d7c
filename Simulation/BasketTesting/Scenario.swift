public import BasketCore
import Foundation

/// A conflict scenario: named devices act on one shared list, the network and the server
/// misbehave, and expectations say what every device must show. See docs/conflicts.md.
///
///     # comment
///     alice: add Milk
///     bob: offline
///     bob: check milk
///     alice: clock +10m
///     sync all
///     server: restart
///     expect all: Milk checked
///     expect bob: 1 item
///
/// A run `basket-sim --emit-scenario` writes also uses simulated time (`time: frozen`, then
/// `time +5s`), `maybe` edits, syncs through a faulty network (`sync (faults N)`) and delayed
/// requests (`network: deliver delayed (order N)`); every run ends by comparing each device
/// with the independent model of the merge rules. ``ScenarioRun`` runs one in a ``Lab`` or
/// against real processes (any ``ScenarioWorld``).
public struct Scenario: Sendable {
    /// What one device does.
    public enum Action: Sendable, Equatable {
        /// An edit of the list (`add 2 milk`, `check milk`, `rename Milk to Oat milk`, …).
        case edit(Lab.Edit)
        /// An edit that must be refused and change nothing (`cannot add Cake`).
        case refused(Lab.Edit)
        /// The device's account gives a member another role (`share bob viewer`).
        case setRole(member: String, Role)
        /// The device's account removes a member from the list (`remove member bob`).
        case removeMember(String)
        /// A sync that then drops the changes the server refuses (`discard refused`).
        case discardRefused
        /// The device loses the network.
        case offline
        /// The device gets the network back.
        case online
        /// The device syncs.
        case sync
        /// A sync whose requests meet the faults drawn from this seed (`basket-sim`'s network:
        /// lost, duplicated, delayed, answers lost).
        case syncWithFaults(UInt64)
        /// An edit made only when the item (by its key) is on the device's list, for a rename when
        /// no other item has the new name, for a shop's edit when the shop is there (an add: when
        /// it is not): otherwise nothing happens, as in `basket-sim` (``Lab/Edit/applies(to:)``).
        case maybe(Lab.Edit)
        /// Moves the device's clock by this many milliseconds (cumulative).
        case clock(Int64)
        /// Pushes, with this device's token, the named device's newest write (its replica id and
        /// timestamp) with another value: a member forging another's write.
        case forge(String)
    }

    /// What an `expect` line says a device shows.
    public enum Condition: Sendable, Equatable {
        /// The item is checked (true) or unchecked.
        case checked(String, Bool)
        /// The item's quantity (nil: none).
        case quantity(String, String?)
        /// No item has this name's key.
        case absent(String)
        /// An item of this exact name is on the list.
        case present(String)
        /// The list shows this many items.
        case itemCount(Int)
        /// The list's title.
        case title(String)
        /// The list's shops (not removed), by name.
        case shops([String])
        /// The order a shop is walked in.
        case shopOrder(String, [String])
        /// How many trips taught a shop's order.
        case trips(String, Int)
        /// The item is shown (true) or hidden at the shop.
        case shownAt(String, shop: String, Bool)
        /// Every device shows the same items.
        case same
        /// The device shows what the independent model of the merge rules says for the writes
        /// it holds (BasketModel).
        case model
    }

    /// One line of a scenario.
    public enum Step: Sendable, Equatable {
        /// A device acts.
        case device(String, Action)
        /// Every device online syncs, twice round.
        case syncAll
        /// The server restarts, its store kept.
        case serverRestart
        /// The server's store is backed up.
        case serverBackup
        /// The server goes back to its last backup.
        case serverLoseData
        /// Every clock (the devices' and the server's) moves on by this many milliseconds;
        /// only with `time: frozen`.
        case advanceTime(Int64)
        /// Requests the faulty network held back reach the server, in an order drawn from this
        /// seed; their answers are lost.
        case deliverDelayed(UInt64)
        /// What a device (or `all`) must show.
        case expect(who: String, Condition)
    }

    /// A line that is not a scenario's.
    public struct ParseError: Error, CustomStringConvertible {
        /// The line, from 1.
        public var line: Int
        /// What is wrong with it.
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// The steps, each with its line number.
    public private(set) var steps: [(line: Int, step: Step)] = []
    /// Each step's line as written, by line number (a trace labels its steps with them).
    public private(set) var texts: [Int: String] = [:]
    /// Device names in order of first appearance (the first one owns the list).
    public private(set) var devices: [String] = []
    /// `time: frozen`: every clock stands still at the run's start and moves only by `time +N`.
    public private(set) var frozenTime = false

    /// Reads a scenario file's text.
    /// - Throws: ``ParseError`` naming the first line that is not a scenario's.
    public init(parsing text: String) throws {
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed == "time: frozen" {
                guard steps.isEmpty else { throw ParseError(line: line, message: "'time: frozen' comes first") }
                frozenTime = true
                continue
            }
            let step = try Self.parse(trimmed, line: line)
            if case .device(let name, _) = step, !devices.contains(name) { devices.append(name) }
            if case .expect(let who, _) = step, who != "all", !devices.contains(who) { devices.append(who) }
            if case .advanceTime = step, !frozenTime {
                throw ParseError(line: line, message: "'time +N' needs 'time: frozen' at the top")
            }
            steps.append((line, step))
            texts[line] = trimmed
        }
        if devices.isEmpty { throw ParseError(line: 1, message: "no device acts in this scenario") }
    }

    static func parse(_ text: String, line: Int) throws -> Step {
        func fail(_ message: String) -> ParseError { ParseError(line: line, message: message) }
        if text == "sync all" { return .syncAll }
        if text.hasPrefix("time ") {
            guard let delta = duration(String(text.dropFirst(5))), delta >= 0 else {
                throw fail("time takes a duration forward: +5s, +250ms, +1h")
            }
            return .advanceTime(delta)
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw fail("expected 'DEVICE: ACTION', 'sync all' or 'expect …'")
        }
        let head = text[..<colon].trimmingCharacters(in: .whitespaces)
        let body = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if head == "network" {
            guard body.hasPrefix("deliver delayed (order "), body.hasSuffix(")"),
                let order = UInt64(body.dropFirst("deliver delayed (order ".count).dropLast())
            else { throw fail("network actions: deliver delayed (order N)") }
            return .deliverDelayed(order)
        }
        if head == "server" {
            switch body {
            case "restart": return .serverRestart
            case "backup": return .serverBackup
            case "lose data": return .serverLoseData
            default: throw fail("server actions: restart, backup, lose data")
            }
        }
        if head.hasPrefix("expect ") {
            let who = head.dropFirst("expect ".count).trimmingCharacters(in: .whitespaces)
            guard isName(who) else { throw fail("'\(who)' is not a device name") }
            return .expect(who: who, try condition(body, fail))
        }
        guard isName(head), head != "all" else { throw fail("'\(head)' is not a device name") }
        return .device(head, try action(body, fail))
    }

    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } && text != "server"
            && text != "network" && text != "time"
    }

    static func action(_ body: String, _ fail: (String) -> ParseError) throws -> Action {
        let words = body.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let verb = words.first else { throw fail("missing action") }
        let rest = words.dropFirst().joined(separator: " ")
        switch verb {
        case "cannot":
            // "bob: cannot add Cake": the edit must be refused, and change nothing.
            guard case .edit(let edit) = try action(rest, fail) else {
                throw fail("'cannot' is followed by an edit of the list")
            }
            return .refused(edit)
        case "share":
            // "alice: share bob viewer": the member's role becomes viewer (or editor, owner).
            guard words.count == 3, Scenario.isName(words[1]), let role = Role(rawValue: words[2]) else {
                throw fail("share DEVICE owner|editor|viewer")
            }
            return .setRole(member: words[1], role)
        case "remove" where words.count == 3 && words[1] == "member":
            return .removeMember(words[2])
        case "forge":
            // "mallory: forge bob's last write"
            guard words.count == 4, words[1].hasSuffix("'s"), Scenario.isName(String(words[1].dropLast(2))),
                words[2] == "last", words[3] == "write"
            else { throw fail("forge DEVICE's last write") }
            return .forge(String(words[1].dropLast(2)))
        case "maybe":
            // "bob: maybe check Milk": only when Milk is on bob's list.
            guard case .edit(let edit) = try action(rest, fail), !edit.isAddOrTitle else {
                throw fail("'maybe' is followed by an edit of an item or a shop, not add or title")
            }
            return .maybe(edit)
        case "sync" where words.count == 3 && words[1] == "(faults" && words[2].hasSuffix(")"):
            guard let seed = UInt64(words[2].dropLast()) else { throw fail("sync (faults N)") }
            return .syncWithFaults(seed)
        case "discard" where rest == "refused":
            return .discardRefused
        case "offline", "online", "sync":
            guard words.count == 1 else { throw fail("'\(verb)' takes nothing after it") }
            return verb == "offline" ? .offline : verb == "online" ? .online : .sync
        case "clock":
            guard words.count == 2, let delta = duration(words[1]) else {
                throw fail("clock takes a signed duration: +10m, -1h, +30d, +90s")
            }
            return .clock(delta)
        case "add", "check", "uncheck", "toggle", "remove", "rm":
            guard !rest.isEmpty else { throw fail("'\(verb)' needs a name") }
            switch verb {
            case "add": return .edit(.add(rest))
            case "check": return .edit(.check(rest))
            case "uncheck": return .edit(.uncheck(rest))
            case "toggle": return .edit(.toggle(rest))
            default: return .edit(.remove(rest))
            }
        case "rename":
            let parts = rest.components(separatedBy: " to ")
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw fail("rename OLD to NEW")
            }
            return .edit(.rename(parts[0], parts[1]))
        case "quantity":
            // quantity NAME = Q
            let parts = rest.components(separatedBy: " = ")
            guard parts.count == 2, !parts[0].isEmpty else { throw fail("quantity NAME = Q") }
            return .edit(.quantity(parts[0], parts[1]))
        case "title":
            guard !rest.isEmpty else { throw fail("'title' needs the new title") }
            return .edit(.title(rest))
        case "aisle":
            // aisle NAME = AISLE
            let parts = rest.components(separatedBy: " = ")
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw fail("aisle NAME = AISLE") }
            return .edit(.aisle(parts[0], parts[1]))
        case "shop":
            // shop add NAME | shop NAME order A, B | shop NAME pin AISLE
            if words.count >= 3, words[1] == "add" { return .edit(.addShop(words.dropFirst(2).joined(separator: " "))) }
            if let range = rest.range(of: " order ") {
                let aisles = rest[range.upperBound...].split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                return .edit(.shopOrder(String(rest[..<range.lowerBound]), aisles))
            }
            if let range = rest.range(of: " pin ") {
                return .edit(.pin(String(rest[..<range.lowerBound]), String(rest[range.upperBound...])))
            }
            throw fail("shop add NAME, shop NAME order A, B, shop NAME pin AISLE")
        case "mark":
            // mark NAME for SHOP, SHOP | mark NAME for anywhere
            guard let range = rest.range(of: " for ") else { throw fail("mark NAME for SHOP[, SHOP] (or anywhere)") }
            let shops = rest[range.upperBound...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return .edit(.mark(String(rest[..<range.lowerBound]), shops == ["anywhere"] ? [] : shops))
        case "trip":
            // trip SHOP: a, b, c
            guard let colon = rest.firstIndex(of: ":") else { throw fail("trip SHOP: ITEM, ITEM") }
            let names = rest[rest.index(after: colon)...].split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            return .edit(.trip(String(rest[..<colon]), names.filter { !$0.isEmpty }))
        case "dismiss":
            guard !rest.isEmpty else { throw fail("dismiss NAME") }
            return .edit(.dismiss(rest))
        default:
            throw fail(
                "unknown action '\(verb)': add, check, uncheck, toggle, remove, rename, quantity, title, aisle, shop, "
                    + "mark, trip, dismiss, "
                    + "offline, online, sync, sync (faults N), clock, share DEVICE ROLE, remove member DEVICE, "
                    + "discard refused, forge DEVICE's last write, cannot ACTION, maybe ACTION"
            )
        }
    }

    /// "+10m" → 600,000 ms; units ms, s, m, h, d.
    static func duration(_ text: String) -> Int64? {
        let milliseconds = text.hasSuffix("ms")
        guard let sign = text.first, sign == "+" || sign == "-", let unit = text.last,
            let amount = Int64(text.dropFirst().dropLast(milliseconds ? 2 : 1)), amount >= 0
        else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = milliseconds ? 1 : 1_000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        default: return nil
        }
        // At most a hundred years either way.
        let (value, overflow) = amount.multipliedReportingOverflow(by: scale)
        guard !overflow, value <= 100 * 365 * 86_400_000 else { return nil }
        return sign == "-" ? -value : value
    }

    static func condition(_ body: String, _ fail: (String) -> ParseError) throws -> Condition {
        if body == "same" { return .same }
        if body == "as the model says" { return .model }
        let words = body.split(separator: " ").map(String.init)
        if words.count == 2, let count = Int(words[0]), words[1] == "item" || words[1] == "items" {
            return .itemCount(count)
        }
        if words.first == "title", words.count > 1 { return .title(words.dropFirst().joined(separator: " ")) }
        if words.first == "shops" {
            return .shops(
                words.dropFirst().joined(separator: " ").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }.filter { !$0.isEmpty })
        }
        if let range = body.range(of: " order ") {
            let aisles = body[range.upperBound...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return .shopOrder(String(body[..<range.lowerBound]), aisles)
        }
        if let range = body.range(of: " learned from "), body.hasSuffix(" trips") || body.hasSuffix(" trip"),
            let count = Int(body[range.upperBound...].split(separator: " ")[0])
        {
            return .trips(String(body[..<range.lowerBound]), count)
        }
        for (phrase, shown) in [(" hidden at ", false), (" shown at ", true)] {
            if let range = body.range(of: phrase) {
                return .shownAt(String(body[..<range.lowerBound]), shop: String(body[range.upperBound...]), shown)
            }
        }
        if words.first == "no", words.count > 1 { return .absent(words.dropFirst().joined(separator: " ")) }
        if let last = words.last, words.count > 1 {
            let name = words.dropLast().joined(separator: " ")
            switch last {
            case "checked": return .checked(name, true)
            case "unchecked": return .checked(name, false)
            case "present": return .present(name)
            default: break
            }
        }
        if let range = body.range(of: " quantity ") {
            let value = String(body[range.upperBound...])
            return .quantity(String(body[..<range.lowerBound]), value == "none" ? nil : value)
        }
        throw fail(
            "expectations: NAME checked|unchecked|present, NAME quantity Q|none, no NAME, N items, title T, "
                + "shops A, B, SHOP order A, B, SHOP learned from N trips, NAME hidden|shown at SHOP, same, "
                + "as the model says")
    }
}
