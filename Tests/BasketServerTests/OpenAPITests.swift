import BasketCore
import BasketServer
import Foundation
import HTTPServer
import Testing

struct OpenAPITests {
    /// The (method, path) pairs docs/openapi.yaml documents, read from its `paths:` section.
    static func documented() throws -> Set<String> {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        var result: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(method) { result.insert("\(method) \(path)") }
            }
        }
        return result
    }

    @Test func everyServedRouteIsDocumentedAndBack() throws {
        let store = try SQLiteStore(path: ":memory:")
        let web = try WebApp(directory: WebAppTests.directory)
        let served = Set(BasketService(store: store).router(web: web).routes.map { "\($0.method) \($0.pattern)" })
        let documented = try Self.documented()
        #expect(served.count > 10)
        #expect(
            served.subtracting(documented).isEmpty,
            "served but not in docs/openapi.yaml: \(served.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(served).isEmpty,
            "documented but not served: \(documented.subtracting(served).sorted())")
        // The API's routes are the one table both clients request (Wire.Route): the server
        // serves exactly those, and the web client's pages besides.
        let api = Set(Wire.Route.all.map(\.description))
        let pages = served.subtracting(api)
        #expect(api.isSubset(of: served), "in Wire.Route but not served: \(api.subtracting(served).sorted())")
        #expect(pages.allSatisfy { !$0.contains("/v1/") && !$0.hasSuffix("/healthz") }, "\(pages.sorted())")
    }
}

/// docs/openapi.yaml's schemas against the wire types of BasketCore: every schema's properties
/// are exactly the keys the type writes (with every optional field set), its required fields
/// exactly those it writes with none set, and each value has the schema's JSON type.
struct WireSchemaTests {
    struct Schema {
        var required: Set<String> = []
        var properties: [String: String] = [:]
    }

    /// The `components: schemas:` section, read line by line (the file keeps one property a line).
    static func schemas() throws -> [String: Schema] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        var result: [String: Schema] = [:]
        var inSchemas = false
        var current: String?
        var inProperties = false
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            let indent = line.prefix { $0 == " " }.count
            let text = line.trimmingCharacters(in: .whitespaces)
            if indent == 2 { inSchemas = text == "schemas:" }
            guard inSchemas, indent >= 4 else { continue }
            if indent == 4 {
                current = String(text.dropLast())
                result[current!] = Schema()
                inProperties = false
            } else if indent == 6, let current {
                inProperties = text == "properties:"
                if text.hasPrefix("required: [") {
                    result[current]!.required = Set(
                        text.dropFirst("required: [".count).dropLast().split(separator: ",").map {
                            $0.trimmingCharacters(in: .whitespaces)
                        })
                }
            } else if indent == 8, inProperties, let current, let colon = text.firstIndex(of: ":") {
                let type = text.firstRange(of: "type: ").map { text[$0.upperBound...].prefix { $0.isLetter } } ?? ""
                result[current]!.properties[String(text[..<colon])] = String(type)
            }
        }
        return result
    }

    /// A JSON value's type as OpenAPI names it.
    enum Kind: Decodable {
        case boolean, integer, string, array, object

        var name: String { "\(self)" }

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if (try? value.decode(Bool.self)) != nil {
                self = .boolean
            } else if (try? value.decode(Int64.self)) != nil || (try? value.decode(UInt64.self)) != nil {
                self = .integer
            } else if (try? value.decode(String.self)) != nil {
                self = .string
            } else if (try? value.decode([Kind].self)) != nil {
                self = .array
            } else {
                self = .object
            }
        }
    }

    static func kinds(_ value: some Encodable) throws -> [String: Kind] {
        try JSONDecoder().decode([String: Kind].self, from: JSONEncoder().encode(value))
    }

    /// Each schema with its type, once with every optional field set and once with none.
    static let samples: [(String, any Encodable & Sendable, any Encodable & Sendable)] = {
        let list = ListID(hex: "0123456789abcdef0123456789abcdef")!
        let token = Wire.Token(id: "1f", device: "phone", created: 1, lastUsed: 2, current: true)
        let membership = Wire.Membership(id: list, role: .editor, epoch: "e", cursor: 3)
        let member = Wire.Member(account: "bob", role: .viewer, replicas: ["fcdf935eef1eb5be"], publicKey: "k")
        let invite = Wire.Invite(id: "2e", role: .viewer, createdBy: "alice", created: 1, expiresAt: 2, usesLeft: 1)
        let page = Wire.Page(
            count: 0, cursor: 0, epoch: "e", historyComplete: true, more: false, serverTime: 1,
            ops: OperationText(bytes: []))
        let demoted = Wire.Page(
            count: 0, cursor: 0, epoch: "e", historyComplete: true, more: false, serverTime: 1,
            ops: OperationText(bytes: []), role: .viewer,
            shopping: [Wire.ShoppingStatus(who: "olga", shop: "Lidl", since: 1, until: 2)], inbox: 2)
        let push = Wire.PushResult(accepted: 1, duplicates: 0, cursor: 1, epoch: "e", serverTime: 1)
        let done = Wire.ShoppingStatus(who: "olga", shop: "Lidl", since: 1, until: 2, ended: 3, bought: 4)
        let addKey = Wire.AddKey(id: "1f", name: "Kitchen speaker", createdBy: "anna", created: 1)
        let entry = Wire.InboxEntry(id: "2e", text: "2 milk", from: "Kitchen speaker", at: 1)
        let subscription = Wire.PushSubscription(id: "ab", lists: [list], kinds: [.added], thisDevice: true, created: 1)
        let event = Wire.PushMessage.Event(
            kind: .added, who: "anna", count: 2, items: [ItemID(raw: ID128(high: 1, low: 2))])
        return [
            (
                "Error", Wire.ErrorBody(error: "clock_skew", message: "m", serverTime: 1, offsetMilliseconds: 2),
                Wire.ErrorBody(error: "x", message: "m")
            ),
            (
                "Signup", Wire.Signup(name: "alice", password: "p", invite: "i"),
                Wire.Signup(name: "alice", password: "p")
            ),
            (
                "Credentials", Wire.Credentials(name: "alice", password: "p", device: "d"),
                Wire.Credentials(name: "alice", password: "p")
            ),
            (
                "PasswordChange", Wire.PasswordChange(password: "a", newPassword: "b", wrappedKey: "w1."),
                Wire.PasswordChange(password: "a", newPassword: "b")
            ),
            (
                "KeySetup",
                Wire.KeySetup(password: "p", publicKey: "k", wrappedKey: "w", recoveryKey: "r", recoverySecret: "s"),
                Wire.KeySetup(password: "p", publicKey: "k", wrappedKey: "w", recoveryKey: "r", recoverySecret: "s")
            ),
            (
                "Recovery",
                Wire.Recovery(name: "a", recoverySecret: "s", newPassword: "n", wrappedKey: "w", device: "d"),
                Wire.Recovery(name: "a", recoverySecret: "s")
            ),
            (
                "AccountKeys", Wire.AccountKeys(publicKey: "k", wrappedKey: "w", recoveryKey: "r"),
                Wire.AccountKeys(publicKey: "k")
            ),
            (
                "EnvelopeDelivery", Wire.EnvelopeDelivery(envelopes: [.init(account: "a", envelope: "e1.")], epoch: 2),
                Wire.EnvelopeDelivery(envelopes: [])
            ),
            (
                "Envelope", Wire.EnvelopeDelivery.Envelope(account: "a", envelope: "e1."),
                Wire.EnvelopeDelivery.Envelope(account: "a", envelope: "e1.")
            ),
            (
                "ListEnvelope", Wire.ListEnvelope(envelope: "e1.", keyEpoch: 1, rotationDue: false),
                Wire.ListEnvelope(envelope: nil)
            ),
            (
                "ListSnapshot", Wire.ListSnapshot(cursor: 1, snapshot: "n1.", epoch: "e", made: 1),
                Wire.ListSnapshot(cursor: 1, snapshot: "n1.", epoch: "e", made: 1)
            ),
            (
                "SnapshotRequest", Wire.SnapshotRequest(cursor: 1, snapshot: "n1."),
                Wire.SnapshotRequest(cursor: 1, snapshot: "n1.")
            ),
            (
                "Conversion",
                Wire.Conversion(
                    cursor: 1, snapshot: "n1.", envelopes: [.init(account: "a", envelope: "e1.")]),
                Wire.Conversion(cursor: 0, snapshot: "n1.", envelopes: [])
            ),
            ("ConversionAnswer", Wire.Conversion.Answer(epoch: "e"), Wire.Conversion.Answer(epoch: "e")),
            ("NewList", Wire.NewList(id: list, encrypted: true), Wire.NewList(id: list)),
            ("AccountDeletion", Wire.AccountDeletion(password: "a"), Wire.AccountDeletion(password: "a")),
            (
                "AccountDeleted", Wire.AccountDeleted(deleted: 1, handedOver: 1, left: 1),
                Wire.AccountDeleted(deleted: 1, handedOver: 1, left: 1)
            ),
            (
                "InviteRequest", Wire.InviteRequest(role: .viewer, uses: 2, expiresIn: 60, title: "Family"),
                Wire.InviteRequest()
            ),
            ("InviteCode", Wire.InviteCode(code: "c"), Wire.InviteCode(code: "c")),
            ("RoleChange", Wire.RoleChange(role: .viewer), Wire.RoleChange(role: .viewer)),
            ("Push", Wire.Push(ops: OperationText(bytes: [])), Wire.Push(ops: OperationText(bytes: []))),
            ("Health", Wire.Health(status: "ok"), Wire.Health(status: "ok")),
            ("ServerTime", Wire.ServerTime(serverTime: 1), Wire.ServerTime(serverTime: 1)),
            ("Account", Wire.Account(id: 1, name: "alice", serverTime: 1), Wire.Account(id: 1, name: "alice")),
            (
                "NewToken", Wire.NewToken(token: "t", account: "alice", id: "1f"),
                Wire.NewToken(token: "t", account: "alice", id: "1f")
            ),
            ("Token", token, token),
            ("Tokens", Wire.Tokens(tokens: [token]), Wire.Tokens(tokens: [])),
            ("Revoked", Wire.Revoked(revoked: 1), Wire.Revoked(revoked: 1)),
            (
                "Membership", Wire.Membership(id: list, role: .editor, epoch: "e", cursor: 3, encrypted: true),
                membership
            ),
            ("Lists", Wire.Lists(lists: [membership]), Wire.Lists(lists: [])),
            ("Member", member, Wire.Member(account: "bob", role: .viewer)),
            ("Members", Wire.Members(members: [member]), Wire.Members(members: [])),
            ("Invite", invite, invite),
            ("Invites", Wire.Invites(invites: [invite]), Wire.Invites(invites: [])),
            (
                "NewInvite", Wire.NewInvite(code: "c", id: "2e", role: .owner, list: list, expiresAt: 1, usesLeft: 1),
                Wire.NewInvite(code: "c", id: "2e", role: .owner, list: list, expiresAt: 1, usesLeft: 1)
            ),
            (
                "InvitePreview",
                Wire.InvitePreview(
                    list: list, title: "Family", role: .editor, createdBy: "alice", expiresAt: 1, member: false,
                    encrypted: true),
                Wire.InvitePreview(
                    list: list, title: nil, role: .editor, createdBy: "alice", expiresAt: 1, member: true)
            ),
            ("PushResult", push, push),
            ("ShoppingStatus", done, Wire.ShoppingStatus(who: "olga", shop: nil, since: 1, until: 2)),
            ("Shopping", Wire.Shopping(shopping: [done], serverTime: 1), Wire.Shopping(shopping: [], serverTime: 1)),
            ("ShoppingStart", Wire.ShoppingStart(shop: "Lidl"), Wire.ShoppingStart()),
            ("AddKeyRequest", Wire.AddKeyRequest(name: "Kitchen speaker"), Wire.AddKeyRequest(name: "Kitchen speaker")),
            ("AddKey", addKey, addKey),
            (
                "NewAddKey", Wire.NewAddKey(key: "bk_", id: "1f", name: "n", list: list),
                Wire.NewAddKey(key: "bk_", id: "1f", name: "n", list: list)
            ),
            ("AddKeys", Wire.AddKeys(keys: [addKey]), Wire.AddKeys(keys: [])),
            ("InboxText", Wire.InboxText(text: "2 milk"), Wire.InboxText(text: "2 milk")),
            ("InboxEntry", entry, entry),
            ("Inbox", Wire.Inbox(entries: [entry]), Wire.Inbox(entries: [])),
            ("PushKey", Wire.PushKey(publicKey: "BP4z"), Wire.PushKey(publicKey: "BP4z")),
            (
                "PushSubscribe",
                {
                    var full = Wire.PushSubscribe(
                        endpoint: "https://push.example.net/x", keys: .init(p256dh: "B", auth: "a"), lists: [list],
                        kinds: [.added])
                    full.expirationTime = 1
                    return full
                }(),
                {
                    var minimal = Wire.PushSubscribe(
                        endpoint: "https://push.example.net/x", keys: .init(p256dh: "B", auth: "a"), lists: [],
                        kinds: [])
                    (minimal.lists, minimal.kinds) = (nil, nil)
                    return minimal
                }()
            ),
            ("PushSubscription", subscription, subscription),
            (
                "PushSubscriptions", Wire.PushSubscriptions(subscriptions: [subscription]),
                Wire.PushSubscriptions(subscriptions: [])
            ),
            (
                "PushMessage", Wire.PushMessage(list: list, at: 1, events: [event]),
                Wire.PushMessage(list: list, at: 1, events: [])
            ),
            ("PushEvent", Wire.PushMessage.Event(kind: .shopping, who: "olga", count: 0, shop: "Lidl"), event),
            ("Page", demoted, page),
        ]
    }()

    @Test func everySchemaIsAWireTypeAndBack() throws {
        let schemas = try Self.schemas()
        #expect(Set(schemas.keys) == Set(Self.samples.map(\.0)), "schemas without a wire type, or the other way")
        for (name, full, minimal) in Self.samples {
            let schema = try #require(schemas[name], "\(name)")
            let written = try Self.kinds(full)
            #expect(Set(written.keys) == Set(schema.properties.keys), "\(name): properties")
            #expect(Set(try Self.kinds(minimal).keys) == schema.required, "\(name): required")
            for (key, kind) in written {
                #expect(schema.properties[key] == kind.name, "\(name).\(key) is \(kind.name)")
            }
        }
    }

    /// The server writes pages by hand; they must be what JSONEncoder writes, and read back the same.
    @Test func theHandWrittenPageIsThePageType() throws {
        let operations = [
            Op(
                list: ListID(hex: "0123456789abcdef0123456789abcdef")!, item: ItemID(raw: ID128(high: 1, low: 2)),
                field: .name, value: .text("Tea \"Earl\" \\ Grey/é"),
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 3),
                    replica: ReplicaID(rawValue: 9)))
        ]
        let page = Wire.Page(
            count: 1, cursor: 42, epoch: "ep\"och", historyComplete: false, more: true, serverTime: 7,
            ops: OperationText(operations),
            shopping: [
                Wire.ShoppingStatus(who: "ol\"ga", shop: "Lidl/é", since: 1, until: 2, ended: 3, bought: 4),
                Wire.ShoppingStatus(who: "anna", shop: nil, since: 5, until: 6),
            ])
        let handWritten = page.jsonBytes()
        #expect(try JSONDecoder().decode(Wire.Page.self, from: Data(handWritten)) == page)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let reference = try JSONSerialization.jsonObject(with: encoder.encode(page)) as? NSDictionary
        #expect(try JSONSerialization.jsonObject(with: Data(handWritten)) as? NSDictionary == reference)
        #expect(try page.ops.operations() == operations)
        // With the role a long-poll ends with after a change of role.
        var demoted = page
        demoted.role = .viewer
        #expect(try JSONDecoder().decode(Wire.Page.self, from: Data(demoted.jsonBytes())) == demoted)
        let withRole = try JSONSerialization.jsonObject(with: encoder.encode(demoted)) as? NSDictionary
        #expect(try JSONSerialization.jsonObject(with: Data(demoted.jsonBytes())) as? NSDictionary == withRole)
    }

    /// `GET /v1/lists` is written by hand too: byte for byte what `JSONEncoder` writes.
    @Test func theHandWrittenListsAnswerIsWhatTheEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for count in [0, 1, 3] {
            let lists = Wire.Lists(
                lists: (0..<count).map { i in
                    Wire.Membership(
                        id: ListID.random(), role: Role.allCases[i % Role.allCases.count],
                        epoch: i == 2 ? "e/\"\\\u{1}é" : "0123456789abcdef", cursor: Int64(i) * 1_000_000_007,
                        encrypted: i == 1)
                })
            #expect(lists.jsonBytes() == Array(try encoder.encode(lists)), "\(count) lists")
        }
    }
}
