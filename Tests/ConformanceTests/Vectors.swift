import BasketCLI
import BasketCore
import BasketReplica
import BasketSearch
import Foundation
import TestSupport

/// The conformance vectors (Tests/Vectors/conformance-v1.json) and how the Swift implementation
/// makes them. Every value a second client must reproduce is computed here by the code the CLI
/// runs: keys and ids by `ItemKey` and `ItemID`, merged states by a real SQLite `Replica`,
/// clocks by `HybridClock`, rankings by `Search`, entries by `EntryParser`.
struct Vectors: Codable, Equatable {
    var about: String
    /// The list id the keys' item ids are computed in.
    var list: String
    /// Every register, in wire order: the table each client's fields are held to.
    var fields: [FieldCase]
    /// Every error the API answers with (Wire.ErrorCode): its Swift name, code and status, the
    /// table the web client's ERRORS is held to.
    var errors: [ErrorCase]
    /// Every route of the API (Wire.Route): its name, method and pattern, the table the web
    /// client's ROUTES is held to.
    var routes: [RouteCase]
    var keys: [KeyCase]
    var invalidOps: [InvalidOps]
    var merges: [MergeCase]
    var clocks: Clocks
    var searches: [SearchCase]
    var entries: [EntryCase]
    /// Local writes: the commands of the CLI and the web client, step by step (LocalWriteVectors.swift).
    var localWrites: [LocalWriteCase]
    /// The catalogue: suggestions for what is typed, and the aisle a name takes, per language.
    var catalogue: [CatalogueCase]
    /// Aisles typed after an item ("milk @dairy"): the aisle each means on a list of a language.
    var aisleNames: [AisleNameCase]
    /// An amount added to an item's: what its quantity becomes (Quantity.adding).
    var quantitySums: [QuantitySumCase]
    /// The language a list's aisles are named in when it does not say, from its categories.
    var aisleLanguages: [AisleLanguageCase]
    /// A list as text to copy or share (the CLI's ListText, the web's list-text.js).
    var listTexts: [ListTextCase]
    /// What is offered beside adding what was typed (Offers, offers.js): the list's closest item,
    /// items had before and the catalogue's names, in one order.
    var offers: [OfferCase]
    /// What other devices did, a line per person and kind (Phrases.news, phrases.js newsPhrases).
    var news: [NewsCase]
    /// A write of this device another's replaced, in words (Phrases.lostWrite, phrases.js lostWrite).
    var lostWrites: [LostWriteCase]
    /// Shops: ids from keys, marks and places as stored, orders learned from trips, usuals
    /// (Shops.swift, shops.js).
    var shopIDs: [ShopIDCase]
    var shopMarks: [MarksCase]
    var shopOrders: [ShopOrderCase]
    var usuals: [UsualCase]
    /// How often a usual is bought, in words (Phrases.every, phrases.js every).
    var usualIntervals: [EveryCase]

    struct NewsCase: Codable, Equatable {
        var entries: [NewsEntryValue]
        var lines: [String]
    }

    struct NewsEntryValue: Codable, Equatable {
        var who: String
        var added: Bool
        var name: String
    }

    /// Values as the operations' JSON writes them: a string, a flag, or null (cleared).
    struct LostWriteCase: Codable, Equatable {
        var who: String
        var name: String
        var field: String
        var mine: JSONScalar
        var theirs: JSONScalar
        var line: String
    }

    /// `query` typed on a list holding `list` (and `removed`, had before), the catalogue in
    /// `language`: the offers, best first.
    struct OfferCase: Codable, Equatable {
        var list: [String]
        var removed: [String]
        var due: [String]
        var language: String
        var query: String
        var offers: [OfferValue]
    }

    struct OfferValue: Codable, Equatable {
        var name: String
        var source: String
        var tier: String
    }

    struct ListTextCase: Codable, Equatable {
        var title: String
        var aisles: [String]
        var items: [Item]
        var format: String
        var text: String
    }

    struct AisleLanguageCase: Codable, Equatable {
        var categories: [String]
        var language: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(categories, forKey: .categories)
            try c.encode(language, forKey: .language)
        }
    }

    struct QuantitySumCase: Codable, Equatable {
        var existing: String
        var added: String
        var result: String
    }

    /// `typed` after an item on a list of `language` whose aisles are `known`: the `aisle` it means.
    struct AisleNameCase: Codable, Equatable {
        var typed: String
        var language: String
        var known: [String]
        var aisle: String
    }

    /// `query` typed in `language`: the catalogue's `suggestions` (limit 5), and the `aisle` an item
    /// of that name takes (null when the catalogue has not the name).
    /// What the catalogue makes of a query: its suggestions in the first language, and the
    /// grocery the query is, looked up in `languages` (a list's, a device's) and English.
    struct CatalogueCase: Codable, Equatable {
        var languages: [String]
        var query: String
        var suggestions: [String]
        var aisle: String?
        var icon: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(languages, forKey: .languages)
            try c.encode(query, forKey: .query)
            try c.encode(suggestions, forKey: .suggestions)
            try c.encode(aisle, forKey: .aisle)
            try c.encode(icon, forKey: .icon)
        }
    }

    struct KeyCase: Codable, Equatable {
        var name: String
        var key: String
        var id: String
    }

    /// An encoding a client must refuse, and the line it must name.
    struct InvalidOps: Codable, Equatable {
        var about: String
        var ops: String
        var line: Int
    }

    /// Operations (canonical encoding), orders to apply them in one at a time (indices into the
    /// encoding's operation lines, in order; some repeat an operation), and the state every
    /// order must reach.
    struct MergeCase: Codable, Equatable {
        var about: String
        var ops: String
        var orders: [[Int]]
        var state: State
    }

    /// A list's merged state: its registers, and every item with a name (removed ones too), by id.
    struct State: Codable, Equatable {
        var title: String
        var aisles: [String]
        var archived: Bool
        var items: [ItemState]
    }

    /// An item as the vectors write it: `Item`'s JSON (its id and every item field, named as the
    /// field, null rather than left out), so a field added to BasketCore appears in the file, and
    /// a file without it fails to load, until both clients handle it.
    typealias ItemState = Item

    struct ErrorCase: Codable, Equatable {
        var name: String
        var code: String
        var status: Int
    }

    struct RouteCase: Codable, Equatable {
        var name: String
        var method: String
        var pattern: String
    }

    /// A register as both clients must describe it: its wire code, whether it belongs to the list,
    /// what it holds (`flag`, `text`, `optionalText`) and the most UTF-8 bytes of its text.
    struct FieldCase: Codable, Equatable {
        var name: String
        var code: Int
        var list: Bool
        var target: String
        var kind: String
        var maxBytes: Int
        var settable: Bool

        init(_ field: Field) {
            name = field.rawValue
            code = Int(field.code)
            list = field.isListField
            target =
                switch field.target {
                case .list: "list"
                case .item: "item"
                case .shop: "shop"
                }
            kind =
                switch field.kind {
                case .flag: "flag"
                case .text: "text"
                case .optionalText: "optionalText"
                }
            maxBytes = field.maxBytes
            settable = field.isSettable
        }
    }

    struct Clocks: Codable, Equatable {
        /// `now`: a clock whose last timestamp is `last` reads `wall` and issues `next`.
        var now: [NowCase]
        /// `receive`: a clock at `last` takes in `remote` at `wall`: it moves to `last` after, or
        /// refuses with clock_skew and `offset` milliseconds (then `after` is null).
        var receive: [ReceiveCase]
        /// Which of two writes to one register wins: the later version, ties by replica id, and
        /// writes with the same version by value (`-` < `f` < `t` < text, texts by UTF-8 bytes).
        var order: [OrderCase]
    }

    struct NowCase: Codable, Equatable {
        var last: String
        var wall: UInt64
        var next: String
    }

    struct ReceiveCase: Codable, Equatable {
        var last: String
        var remote: String
        var wall: UInt64
        var after: String?
        var offset: UInt64?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(last, forKey: .last)
            try c.encode(remote, forKey: .remote)
            try c.encode(wall, forKey: .wall)
            try c.encode(after, forKey: .after)
            try c.encode(offset, forKey: .offset)
        }
    }

    /// Two writes as operation lines' last three fields: timestamp, replica, value.
    struct OrderCase: Codable, Equatable {
        var a: [String]
        var b: [String]
        var winner: String
    }

    struct SearchItem: Codable, Equatable {
        var name: String
        var checked: Bool
        var category: String?
        var lastUsed: UInt64?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(checked, forKey: .checked)
            try c.encodeIfPresent(category, forKey: .category)
            try c.encodeIfPresent(lastUsed, forKey: .lastUsed)
        }
    }

    /// A query over `items` (of the set `set`, in the list `list`), with the limit, the offer and
    /// the ranked results: every match, best first.
    struct SearchCase: Codable, Equatable {
        var set: String
        var query: String
        var limit: Int?
        var offer: String?
        var results: [Hit]
        /// What Enter does: "existing:NAME", "add:TEXT" or null (SearchResult.enter).
        var enter: String?
        /// The "did you mean …?" item's name, when Enter adds something new.
        var didYouMean: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(set, forKey: .set)
            try c.encode(query, forKey: .query)
            try c.encodeIfPresent(limit, forKey: .limit)
            try c.encode(offer, forKey: .offer)
            try c.encode(results, forKey: .results)
            try c.encode(enter, forKey: .enter)
            try c.encode(didYouMean, forKey: .didYouMean)
        }
    }

    struct Hit: Codable, Equatable {
        var name: String
        var tier: String
        var exact: Bool
    }

    struct EntryCase: Codable, Equatable {
        var text: String
        var existing: [String]
        var entries: [EntryValue]
    }

    struct EntryValue: Codable, Equatable {
        var name: String
        var quantity: String?
        /// The category an add gives an item that has none (local writes only).
        var category: String?
        /// The note typed with it (parentheses, or after a comma in a line of several).
        var note: String? = nil
        /// The line as typed (parsed entries only).
        var typed: String? = nil

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(quantity, forKey: .quantity)
            try c.encodeIfPresent(category, forKey: .category)
            try c.encodeIfPresent(note, forKey: .note)
            try c.encodeIfPresent(typed, forKey: .typed)
        }
    }

    /// The item sets the searches run over, by name.
    var searchSets: [String: [SearchItem]]

    static func load(from url: URL) throws -> Vectors {
        try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }
}

extension Vectors {
    static let listID = ListID(hex: "0123456789abcdef0123456789abcdef")!
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized

    static func make() throws -> Vectors {
        var random = SeededGenerator(seed: 15)
        let sets = try searchSets(&random)
        return Vectors(
            about: """
                Conformance vectors of Basket, version 1 (docs/encoding.md), made by the Swift \
                implementation (Tests/ConformanceTests). Every client must compute exactly these: item \
                keys and ids, which encodings to refuse, merged states whatever the order and \
                duplication of operations, hybrid clocks, search rankings, parsed entries, and the \
                local writes of each command (with what an add says and how many changes wait).
                """,
            list: listID.description, fields: Field.allCases.map(FieldCase.init),
            errors: Wire.ErrorCode.allCases.map {
                ErrorCase(name: String(describing: $0), code: $0.rawValue, status: $0.status)
            },
            routes: Wire.Route.all.map { RouteCase(name: $0.name, method: $0.method, pattern: $0.pattern) },
            keys: try keyCases(&random),
            invalidOps: invalidOps(),
            merges: try mergeCases(&random), clocks: clockCases(), searches: searchCases(sets, &random),
            entries: entryCases(), localWrites: try localWriteCases(), catalogue: catalogueCases(),
            aisleNames: aisleNameCases(), quantitySums: quantitySumCases(),
            aisleLanguages: aisleLanguageCases(), listTexts: listTextCases(), offers: offerCases(),
            news: newsCases(), lostWrites: lostWriteCases(), shopIDs: shopIDCases(), shopMarks: marksCases(),
            shopOrders: shopOrderCases(), usuals: usualCases(), usualIntervals: everyCases(), searchSets: sets)
    }

    // MARK: Keys

    static func keyCases(_ random: inout SeededGenerator) throws -> [KeyCase] {
        var names = [
            "Milk", "  MILK ", "Ｍｉｌｋ", "Crème Fraîche", "Cre\u{300}me fraiche", "Straße", "STRASSE", "Coca-Cola",
            "Coca–Cola", "Øl", "Łódź", "Æble", "Œufs", "Đakovo", "Ðe", "Þorri", "ıspanak", "İstanbul",
            "Ben & Jerry’s", "ＡＢＣ　ｄｅｆ", "Jalapeño", "7 Up", "7up", "7-up", "Milk\u{200B}", "Milk\u{A0}2%",
            "I ♥️ NY", "ガム", "カム", "ｶﾞﾑ", "パン", "가지", "क़ीमा", "ﬁsh", "ŉ", "ᾀ", "Ω", "Ω", "\u{301}x",
            "ᲀ", "ﾡ", "≠", "↚", "a\u{5B0}", "中\u{20D7}", "Ἀθῆναι", "ЁЛКА", "ёлка", "Йогурт", "ꭰꭱ", "ᏀᏁ",
            "tab\there", "\u{FEFF}bom", "line\u{2028}separator", "ǅ", "ǆemo", "Ꮳ", "Ⓐ",
        ]
        names += try sample(lines("Benchmarks/quality/products.txt"), 160, &random)
        let everyday = try lines("Benchmarks/quality/everyday.tsv").compactMap {
            $0.split(separator: "\t").last.map(String.init)
        }
        names += sample(everyday, 120, &random)
        names += sample(try Corpus.names(), 60, &random)
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }.compactMap { name in
            let key = ItemKey.normalize(name)
            guard !key.isEmpty else { return nil }
            return KeyCase(name: name, key: key, id: ItemID(list: listID, key: key).description)
        }
    }

    // MARK: Encodings to refuse

    static func invalidOps() -> [InvalidOps] {
        let list = "L " + listID.description
        let item = ItemID(list: listID, key: "milk").description
        let ok = "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=Milk"
        func make(_ about: String, _ line: String, header: String = "basket-ops 1") -> InvalidOps {
            InvalidOps(about: about, ops: [header, list, ok, line].joined(separator: "\n") + "\n", line: 4)
        }
        return [
            InvalidOps(about: "another format version", ops: "basket-ops 2\n\(list)\n\(ok)\n", line: 1),
            InvalidOps(about: "an operation before a list line", ops: "basket-ops 1\n\(ok)\n", line: 2),
            make("four fields", "\(item)\tname\t0191c2b0a1230000\t=Milk"),
            make("an unknown field", "\(item)\tno-such-field\t0191c2b0a1230000\t00000000000000a1\t=2"),
            make("a short timestamp", "\(item)\tname\t0191c2b0a123\t00000000000000a1\t=Milk"),
            make("replica 0", "\(item)\tname\t0191c2b0a1230000\t0000000000000000\t=Milk"),
            make("a list field on an item", "\(item)\ttitle\t0191c2b0a1230000\t00000000000000a1\t=Home"),
            make("an item field on the list", "-\tname\t0191c2b0a1230000\t00000000000000a1\t=Milk"),
            make("text in checked", "\(item)\tchecked\t0191c2b0a1230000\t00000000000000a1\t=yes"),
            make("a null name", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t-"),
            make("an empty name", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t="),
            make("a name of dashes only", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=--"),
            make("a control character", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=Mi\u{1B}lk"),
            make(
                "a right-to-left override", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=Milk \u{202E}kcab"),
            make("a bidirectional isolate", "\(item)\tnote\t0191c2b0a1230000\t00000000000000a1\t=a\u{2067}b"),
            make("a right-to-left mark", "\(item)\tcategory\t0191c2b0a1230000\t00000000000000a1\t=\u{200F}dairy"),
            make("an escaped tab in a name", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=Mi\\tlk"),
            make("white space not collapsed", "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=Oat  milk"),
            make("a bad escape", "\(item)\tnote\t0191c2b0a1230000\t00000000000000a1\t=a\\qb"),
            make(
                "a name over 2,048 bytes",
                "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=" + String(repeating: "é", count: 1_025)),
            make(
                "a quantity over 256 bytes",
                "\(item)\tquantity\t0191c2b0a1230000\t00000000000000a1\t=" + String(repeating: "9", count: 257)),
            make(
                "an accent flood",
                "\(item)\tname\t0191c2b0a1230000\t00000000000000a1\t=a" + String(repeating: "\u{301}", count: 31)),
            make("a bad item id", "0123\tname\t0191c2b0a1230000\t00000000000000a1\t=Milk"),
        ]
    }

    // MARK: Merges

    static func mergeCases(_ random: inout SeededGenerator) throws -> [MergeCase] {
        let names = ["Milk", "milk ", "MILK", "Crème fraîche", "creme fraiche", "Brot", "Äpfel", "eggs", "Ｅｇｇｓ"]
        let replicas: [UInt64] = [0x1, 0x2, 0x8000_0000_0000_0001, 0xFFFF_FFFF_FFFF_FFFE]
        let base: UInt64 = 1_764_000_000_000
        var cases: [MergeCase] = []
        for index in 0..<16 {
            var ops: [Op] = []
            var identities = Set<Op.Identity>()
            func add(_ item: ItemID, _ field: Field, _ value: Value, _ ms: UInt64, _ counter: UInt16, _ replica: UInt64)
            {
                let op = Op(
                    list: listID, item: item, field: field, value: value,
                    version: Version(
                        timestamp: HybridTimestamp(milliseconds: ms, counter: counter),
                        replica: ReplicaID(rawValue: replica)))
                if identities.insert(op.identity).inserted { ops.append(op) }
            }
            // Few distinct times, so equal timestamps and replica tie-breaks are common.
            func time() -> (UInt64, UInt16) {
                (base + UInt64(random.below(3)) * 1_000, UInt16(random.below(2)))
            }
            func replica() -> UInt64 { replicas[random.below(replicas.count)] }
            let title = ["Home", "Family", "Wochenmarkt", "Épicerie"]
            let (tMs, tCounter) = time()
            add(.list, .title, .text(title[random.below(title.count)]), tMs, tCounter, replica())
            for _ in 0..<(6 + random.below(10)) {
                let name = names[random.below(names.count)]
                let item = ItemID(list: listID, key: ItemKey.normalize(name))
                let (ms, counter) = time()
                let who = replica()
                switch random.below(9) {
                case 0, 1: add(item, .name, .text(name.trimmingCharacters(in: .whitespaces)), ms, counter, who)
                case 2: add(item, .checked, .bool(random.chance(50)), ms, counter, who)
                case 3: add(item, .deleted, .bool(random.chance(30)), ms, counter, who)
                case 4:
                    add(
                        item, .quantity, random.chance(30) ? .null : .text(["2", "500 g", "1 ½"][random.below(3)]), ms,
                        counter, who)
                case 5:
                    add(
                        item, .note, random.chance(30) ? .null : .text(["bio", "the big one\\n"][random.below(2)]), ms,
                        counter, who)
                case 6:
                    add(
                        item, .category,
                        random.chance(30) ? .null : .text(["Dairy", "bakery", "Obst"][random.below(3)]), ms, counter,
                        who)
                case 7: add(.list, .title, .text(title[random.below(title.count)]), ms, counter, who)
                default:
                    if random.chance(50) {
                        add(.list, .aisles, random.chance(20) ? .null : .text("bakery, Dairy, Obst"), ms, counter, who)
                    } else {
                        add(.list, .archived, .bool(random.chance(50)), ms, counter, who)
                    }
                }
            }
            // Most items touched also get a name (earlier), so the state shows them.
            for op in ops where op.item != .list && op.field != .name && random.chance(80) {
                let name = names.first { ItemID(list: listID, key: ItemKey.normalize($0)) == op.item } ?? "?"
                add(op.item, .name, .text(name.trimmingCharacters(in: .whitespaces)), base - 1_000, 0, replica())
            }
            let canonical = ops.sorted(by: OperationCodec.canonicalLess)
            let encoded = String(decoding: OperationCodec.encode(canonical), as: UTF8.self)
            var orders: [[Int]] = [Array(canonical.indices), Array(canonical.indices.reversed())]
            for _ in 0..<3 {
                var order = Array(canonical.indices)
                order.shuffle(using: &random)
                // Duplicates: some operations delivered twice, as a retried push or pull does.
                for _ in 0..<random.below(4) {
                    order.insert(order[random.below(order.count)], at: random.below(order.count))
                }
                orders.append(order)
            }
            let state = try merged(orders[0].map { canonical[$0] })
            cases.append(
                MergeCase(
                    about: "case \(index): \(canonical.count) operations, \(orders.count) orders", ops: encoded,
                    orders: orders, state: state))
        }
        return cases
    }

    /// The state a fresh SQLite replica reaches by applying `ops` one at a time.
    static func merged(_ ops: [Op]) throws -> State {
        let directory = TemporaryDirectory("basket-vectors")
        var configuration = Replica.Configuration()
        configuration.synchronous = .off
        configuration.wallClock = { 1_764_000_100_000 }
        let replica = try Replica(path: directory.file("replica.sqlite"), configuration: configuration)
        for op in ops { try replica.merge([op]) }
        return try state(of: replica)
    }

    /// The state of the vectors' list in `replica`.
    static func state(of replica: Replica) throws -> State {
        guard let info = try replica.lists().first(where: { $0.id == listID }) else {
            throw CocoaError(.fileReadUnknown)
        }
        let items = try replica.items(in: listID, filter: .all).sorted { $0.id.description < $1.id.description }
        return State(
            title: info.title, aisles: info.aisles, archived: info.isArchived,
            items: items)
    }

    // MARK: Clocks

    static func clockCases() -> Clocks {
        func hex(_ t: HybridTimestamp) -> String { String(format: "%016llx", t.rawValue) }
        let base: UInt64 = 1_764_000_000_000
        var now: [NowCase] = []
        for (last, wall) in [
            (HybridTimestamp.zero, base), (HybridTimestamp(milliseconds: base, counter: 0), base + 1),
            (HybridTimestamp(milliseconds: base, counter: 0), base),
            (HybridTimestamp(milliseconds: base, counter: 7), base - 60_000),
            (HybridTimestamp(milliseconds: base, counter: 0xFFFF), base),
            (HybridTimestamp(milliseconds: base + 5, counter: 3), base),
            (HybridTimestamp(milliseconds: base, counter: 0xFFFE), base),
        ] {
            var clock = HybridClock(last: last)
            let next = clock.now(wallMilliseconds: wall)
            now.append(NowCase(last: hex(last), wall: wall, next: hex(next)))
        }
        var receive: [ReceiveCase] = []
        for (last, remote, wall) in [
            (
                HybridTimestamp(milliseconds: base, counter: 0),
                HybridTimestamp(milliseconds: base + 1_000, counter: 2), base
            ),
            (HybridTimestamp(milliseconds: base, counter: 9), HybridTimestamp(milliseconds: base, counter: 3), base),
            (
                HybridTimestamp(milliseconds: base, counter: 0),
                HybridTimestamp(milliseconds: base + 300_000, counter: 0), base
            ),
            (
                HybridTimestamp(milliseconds: base, counter: 0),
                HybridTimestamp(milliseconds: base + 300_001, counter: 0), base
            ),
            (HybridTimestamp.zero, HybridTimestamp(milliseconds: base + 3_600_000, counter: 5), base),
            (
                HybridTimestamp(milliseconds: base + 10, counter: 0),
                HybridTimestamp(milliseconds: base + 10, counter: 0), base
            ),
        ] {
            var clock = HybridClock(last: last)
            do {
                try clock.receive(remote, wallMilliseconds: wall)
                receive.append(ReceiveCase(last: hex(last), remote: hex(remote), wall: wall, after: hex(clock.last)))
            } catch {
                receive.append(
                    ReceiveCase(
                        last: hex(last), remote: hex(remote), wall: wall, after: nil, offset: error.offsetMilliseconds))
            }
        }
        let t1 = HybridTimestamp(milliseconds: base, counter: 0)
        let t2 = HybridTimestamp(milliseconds: base, counter: 1)
        let t3 = HybridTimestamp(milliseconds: base + 1, counter: 0)
        let pairs: [((HybridTimestamp, UInt64, Value), (HybridTimestamp, UInt64, Value))] = [
            ((t1, 2, .text("a")), (t2, 1, .text("b"))),
            ((t2, 0xFFFF_FFFF_FFFF_FFFF, .bool(true)), (t3, 1, .bool(false))),
            ((t1, 0x7FFF_FFFF_FFFF_FFFF, .text("x")), (t1, 0x8000_0000_0000_0000, .text("y"))),
            ((t1, 0xA, .text("x")), (t1, 0x9, .text("y"))),
            ((t1, 5, .null), (t1, 5, .bool(false))),
            ((t1, 5, .bool(false)), (t1, 5, .bool(true))),
            ((t1, 5, .bool(true)), (t1, 5, .text(""))),
            ((t1, 5, .text("Zebra")), (t1, 5, .text("apple"))),
            ((t1, 5, .text("é")), (t1, 5, .text("z"))),
            ((t1, 5, .text("milk")), (t1, 5, .text("milk 2"))),
        ]
        var order: [OrderCase] = []
        for (a, b) in pairs {
            let ra = Register(value: a.2, version: Version(timestamp: a.0, replica: ReplicaID(rawValue: a.1)))
            let winner =
                ra.isBeaten(by: Version(timestamp: b.0, replica: ReplicaID(rawValue: b.1)), value: b.2) ? "b" : "a"
            func fields(_ w: (HybridTimestamp, UInt64, Value)) -> [String] {
                [hex(w.0), String(format: "%016llx", w.1), encodedValue(w.2)]
            }
            order.append(OrderCase(a: fields(a), b: fields(b), winner: winner))
        }
        return Clocks(now: now, receive: receive, order: order)
    }

    static func encodedValue(_ value: Value) -> String {
        switch value {
        case .null: "-"
        case .bool(let b): b ? "t" : "f"
        case .text(let s): "=" + s
        }
    }

    // MARK: Inputs

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
            .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    static func sample(_ pool: [String], _ count: Int, _ random: inout SeededGenerator) -> [String] {
        (0..<count).map { _ in pool[random.below(pool.count)] }
    }
}

/// Names for the key vectors: a few letters of every kind the Swift tests compare.
enum Corpus {
    static func names() throws -> [String] {
        var names: [String] = []
        for value in UInt32(0xC0)...0x24F { if let s = Unicode.Scalar(value) { names.append(String(Character(s))) } }
        for value in UInt32(0x386)...0x3CE { if let s = Unicode.Scalar(value) { names.append(String(Character(s))) } }
        for value in UInt32(0x400)...0x45F { if let s = Unicode.Scalar(value) { names.append(String(Character(s))) } }
        for value in UInt32(0xFF21)...0xFF5A { if let s = Unicode.Scalar(value) { names.append(String(Character(s))) } }
        return names.filter { !ItemKey.normalize($0).isEmpty }
    }
}
