import BasketCore
import BasketSeal
import Foundation
import PlatformCrypto
import Testing

/// Tests/Vectors/seal-v1.json: every derivation and seal of docs/encryption.md with fixed inputs,
/// as the Swift implementation makes it; the web client's seal.js must make and open the same
/// bytes (Tests/web/seal-vectors.js, in Chromium). After a deliberate change:
///
///     BASKET_WRITE_VECTORS=1 swift test --filter SealVectorTests
struct SealVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Vectors/seal-v1.json").standardized

    /// An operation as the web client writes one: ids and the timestamp as lowercase hex.
    struct WebOp: Codable, Equatable {
        var list: String
        var item: String
        var field: String
        var ts: String
        var replica: String
        var value: JSONValue
    }

    /// A register's value in JSON: null, a flag or text.
    enum JSONValue: Codable, Equatable {
        case null
        case bool(Bool)
        case text(String)

        init(_ value: Value) {
            switch value {
            case .null: self = .null
            case .bool(let flag): self = .bool(flag)
            case .text(let text): self = .text(text)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let flag): try container.encode(flag)
            case .text(let text): try container.encode(text)
            }
        }
    }

    struct IDCase: Codable, Equatable {
        var key: String
        var item: String
        var shop: String
    }
    struct PlaintextCase: Codable, Equatable {
        var value: JSONValue
        var plaintext: String
    }
    struct SealCase: Codable, Equatable {
        var about: String
        var op: WebOp
        var epoch: UInt32
        var sealed: WebOp
    }
    struct RefusedCase: Codable, Equatable {
        var about: String
        var sealed: WebOp
        var error: String
    }
    struct AccountCase: Codable, Equatable {
        var password: String
        var account: String
        var iterations: Int
        var login: String
        var wrap: String
    }
    struct WrapCase: Codable, Equatable {
        var key: String
        var purpose: String
        var nonce: String
        var secret: String
        var wrapped: String
    }
    struct RecoveryCase: Codable, Equatable {
        var bytes: String
        var code: String
        var typed: [String]
        var key: String
        var secret: String
    }
    struct EnvelopeCase: Codable, Equatable {
        var recipient: String
        var recipientPublic: String
        var ephemeral: String
        var ephemeralPublic: String
        var nonce: String
        var envelope: String
    }
    /// A snapshot's text at a cursor: what it opens to, or the error it is refused with.
    struct SnapshotCase: Codable, Equatable {
        var about: String
        var cursor: Int64
        var snapshot: String
        var ops: [WebOp]?
        var error: String?
    }
    struct File: Codable, Equatable {
        var about: String
        var list: String
        var identity: String
        var epochs: [String: String]
        var ids: [IDCase]
        var plaintexts: [PlaintextCase]
        var seals: [SealCase]
        var refused: [RefusedCase]
        var accounts: [AccountCase]
        var wraps: [WrapCase]
        var recovery: [RecoveryCase]
        var badCodes: [String]
        var envelopes: [EnvelopeCase]
        var invite: String
        var badInvites: [String]
        var snapshots: [SnapshotCase]
        var conversions: [ConversionCase]
    }
    struct ConversionCase: Codable, Equatable {
        var about: String
        /// The device's copy, whose names give the items' keys.
        var known: [WebOp]
        var ops: [WebOp]
        var converted: [WebOp]
    }

    /// An error's name as the vectors write it (the web client's `SealError.code`).
    static func kind(_ error: SealError) -> String {
        switch error {
        case .forged: "forged"
        case .unknownEpoch: "unknownEpoch"
        case .notSealed: "notSealed"
        case .malformed: "malformed"
        case .badKey: "badKey"
        }
    }

    static func bytes(_ seed: UInt8, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ $0 &* 7) }
    }
    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }
    static func hex64(_ value: UInt64) -> String { Hex.encode(value) }
    static func web(_ op: Op) -> WebOp {
        WebOp(
            list: op.list.description, item: op.item == .list ? "-" : op.item.description, field: op.field.rawValue,
            ts: hex64(op.timestamp.rawValue), replica: hex64(op.replica.rawValue), value: JSONValue(op.value))
    }

    static func make() throws -> File {
        let list = ListID(raw: ID128(bytes: bytes(1, 16))!)
        let keys = try ListKeys(
            list: list, identity: bytes(2, 32), epochs: [0: bytes(3, 32), 1: bytes(4, 32)], current: 1)
        let ids = ["milk", "gluten-free oat milk", "lidl", "crème fraîche", ""].map {
            IDCase(key: $0, item: keys.itemID(key: $0).description, shop: keys.shopID(key: $0).description)
        }
        let values: [Value] = [
            .null, .bool(false), .bool(true), .text(""), .text("Milk"), .text(String(repeating: "ä", count: 20)),
            .text(String(repeating: "x", count: 600)),
        ]
        let plaintexts = values.map { PlaintextCase(value: JSONValue($0), plaintext: hex(Sealed.plaintext($0))) }
        func op(_ field: Field, _ value: Value, key: String = "milk", counter: UInt16 = 1) -> Op {
            Op(
                list: list, item: field.isListField ? .list : keys.itemID(key: key), field: field, value: value,
                version: Version(
                    timestamp: HybridTimestamp(milliseconds: 1_765_000_000_000 + UInt64(counter), counter: counter),
                    replica: ReplicaID(rawValue: 0xfedc_ba98_7654_3210)))
        }
        let plain: [(String, Op, UInt32)] = [
            ("a name", op(.name, .text("Milk")), 1),
            (
                "a long name, one bucket up",
                op(.name, .text("gluten-free oat milk from the farm shop on the corner"), counter: 2), 1
            ),
            ("checked", op(.checked, .bool(true), counter: 3), 1),
            ("a note cleared", op(.note, .null, counter: 4), 1),
            ("the title, under epoch 0", op(.title, .text("Family 🛒"), counter: 5), 0),
            (
                "a shop's name",
                Op(
                    list: list, item: keys.shopID(key: "lidl"), field: .shop, value: .text("Lidl"),
                    version: op(.name, .null, counter: 6).version), 1
            ),
            // What web/sealed.js shopPlace must make of the same list and name.
            ("a shopping status's shop (Sealed.shopPlace)", Sealed.shopPlace(of: list, shop: "Lidl am Markt"), 1),
        ]
        var seals: [SealCase] = []
        for (about, op, epoch) in plain {
            seals.append(SealCase(about: about, op: web(op), epoch: epoch, sealed: web(keys.seal(op, epoch: epoch))))
        }
        let milk = keys.seal(op(.name, .text("Milk")), epoch: 1)
        func changed(_ change: (inout Op) -> Void) -> Op {
            var copy = milk
            change(&copy)
            return copy
        }
        // A plaintext that is no value, sealed where it stands with the epoch's value key.
        let valueKey = try HKDF.sha256(
            key: bytes(4, 32), salt: list.raw.bytes, info: Array("basket-values-v1".utf8), length: 32)
        let badNonce = bytes(30, 12)
        let badPlaintext = [UInt8]([7, 0x80]) + [UInt8](repeating: 0, count: 30)
        var malformed = milk
        malformed.value = .text(
            Sealed.text(
                epoch: 1,
                payload: badNonce
                    + (try AESGCM.seal(
                        badPlaintext, key: valueKey, nonce: badNonce,
                        associatedData: Sealed.associatedData(milk, epoch: 1)))))
        let text = milk.value.textValue!
        let refused: [(String, Op, String)] = [
            ("moved to another item", changed { $0.item = keys.itemID(key: "bread") }, "forged"),
            ("moved to another field", changed { $0.field = .note }, "forged"),
            (
                "another time",
                changed { $0.version.timestamp = HybridTimestamp(milliseconds: 1_765_000_000_002, counter: 1) },
                "forged"
            ),
            ("another writer", changed { $0.version.replica = ReplicaID(rawValue: 5) }, "forged"),
            ("claims epoch 0", changed { $0.value = .text("s1.0." + text.dropFirst(5)) }, "forged"),
            ("an epoch this device lacks", changed { $0.value = .text("s1.2." + text.dropFirst(5)) }, "unknownEpoch"),
            (
                "a flipped bit", changed { $0.value = .text(String(text.dropLast()) + (text.last == "A" ? "B" : "A")) },
                "forged"
            ),
            ("plain text", changed { $0.value = .text("Milk") }, "notSealed"),
            ("a flag", changed { $0.value = .bool(true) }, "notSealed"),
            ("a plaintext that is no value", malformed, "malformed"),
        ]
        let accounts = [
            ("correct horse battery staple", "olga", 1_000), ("pässwörd", "Ömer", 2),
            ("hunter2", "olga", AccountKeys.iterations),
        ].map {
            let stretched = AccountKeys.stretch(password: $0.0, account: $0.1, iterations: $0.2)
            return AccountCase(
                password: $0.0, account: $0.1, iterations: $0.2, login: hex(stretched.login), wrap: hex(stretched.wrap))
        }
        let wraps = [("private-key", bytes(40, 32)), ("recovery", bytes(41, 32))].enumerated().map { index, item in
            WrapCase(
                key: hex(bytes(UInt8(50 + index), 32)), purpose: item.0, nonce: hex(bytes(UInt8(60 + index), 12)),
                secret: hex(item.1),
                wrapped: AccountKeys.wrap(
                    item.1, key: bytes(UInt8(50 + index), 32), purpose: item.0, nonce: bytes(UInt8(60 + index), 12)))
        }
        let recovery = try [bytes(70, 16), [UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xff, count: 16)].map {
            raw in
            let code = AccountKeys.recoveryCode(raw)
            let typed = [
                code.uppercased(), code.replacingOccurrences(of: "-", with: " "),
                code.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: "1", with: "l")
                    .replacingOccurrences(of: "0", with: "O"),
            ]
            return RecoveryCase(
                bytes: hex(raw), code: code, typed: typed, key: hex(try AccountKeys.recoveryKey(code)),
                secret: try AccountKeys.recoverySecret(code))
        }
        let recipient = try X25519KeyPair(privateKey: bytes(80, 32))
        let ephemeral = try X25519KeyPair(privateKey: bytes(81, 32))
        let envelope = try Envelope.seal(keys, to: recipient.publicKey, ephemeral: ephemeral, nonce: bytes(82, 12))
        let invite = keys.inviteSecret
        let state = [op(.title, .text("Family")), op(.name, .text("Milk")), op(.checked, .bool(true), counter: 2)]
        let atEpochZero = try ListKeys(list: list, identity: keys.identity, epochs: [0: bytes(3, 32)], current: 0)
        let snapshot = keys.sealSnapshot(state, cursor: 42, nonce: bytes(90, 12))
        let snapshotZero = atEpochZero.sealSnapshot(state, cursor: 7, nonce: bytes(91, 12))
        let ordered = state.sorted(by: OperationCodec.canonicalLess).map(web)
        let snapshots = [
            SnapshotCase(about: "the state at cursor 42, under epoch 1", cursor: 42, snapshot: snapshot, ops: ordered),
            SnapshotCase(
                about: "under epoch 0, which the keys still hold", cursor: 7, snapshot: snapshotZero, ops: ordered),
            SnapshotCase(about: "moved to another cursor", cursor: 43, snapshot: snapshot, error: "forged"),
            SnapshotCase(
                about: "claiming another epoch", cursor: 42, snapshot: "n1.0." + snapshot.dropFirst(5), error: "forged"),
            SnapshotCase(
                about: "under an epoch the keys lack", cursor: 42, snapshot: "n1.9." + snapshot.dropFirst(5),
                error: "unknownEpoch"),
            SnapshotCase(
                about: "not a snapshot", cursor: 42, snapshot: "s1." + snapshot.dropFirst(3), error: "notSealed"),
        ]
        // A plain list's writes, as a device that holds it as plain has them.
        func plainOp(_ item: ItemID, _ field: Field, _ value: Value, counter: UInt16) -> Op {
            Op(list: list, item: item, field: field, value: value, version: op(.name, .null, counter: counter).version)
        }
        let (plainMilk, plainOat) = (ItemID(list: list, key: "milk"), ItemID(list: list, key: "oat milk"))
        let (lidl, rewe) = (ItemID(list: list, shopKey: "lidl"), ItemID(list: list, shopKey: "rewe"))
        let unnamed = ItemID(list: list, key: "cheese")
        let writes = [
            plainOp(.list, .title, .text("Family"), counter: 1),
            plainOp(plainMilk, .name, .text("milk"), counter: 2),
            plainOp(plainMilk, .name, .text("Milk"), counter: 3),
            plainOp(plainMilk, .checked, .bool(true), counter: 4),
            plainOp(plainMilk, .shops, .text("\(rewe),\(lidl)"), counter: 5),
            plainOp(plainMilk, .places, .text("\(lidl)=Dairy;\(rewe)=Chilled"), counter: 6),
            plainOp(plainOat, .name, .text("Oat milk"), counter: 7),
            plainOp(plainOat, .places, .null, counter: 8),
            plainOp(lidl, .shop, .text("Lidl am Markt"), counter: 9),
            plainOp(lidl, .order, .text("Dairy\nBakery"), counter: 10),
            plainOp(unnamed, .checked, .bool(false), counter: 11),
        ]
        let unsent = [writes[3], writes[10]]
        let conversions = [
            ConversionCase(
                about: "items by their names' keys, shops by their old ids, the marks and places that name them",
                known: [], ops: writes.map(web), converted: keys.converted(writes).map(web)),
            ConversionCase(
                about:
                    "unsent writes, named by the device's copy; an item named nowhere keeps its old id's hex as its key",
                known: writes.map(web), ops: unsent.map(web), converted: keys.converted(unsent, known: writes).map(web)),
        ]
        return File(
            about: "docs/encryption.md, made by Client/BasketSeal; checked by Tests/web/seal-vectors.js",
            list: list.description, identity: hex(keys.identity),
            epochs: Dictionary(uniqueKeysWithValues: keys.epochs.map { (String($0.key), hex($0.value)) }), ids: ids,
            plaintexts: plaintexts, seals: seals,
            refused: refused.map { RefusedCase(about: $0.0, sealed: web($0.1), error: $0.2) },
            accounts: accounts, wraps: wraps, recovery: recovery,
            badCodes: [
                "", "abc", recovery[0].code + "0", String(recovery[0].code.dropLast()),
                "u" + recovery[0].code.dropFirst(), recovery[2].code.dropLast() + "z",
            ],
            envelopes: [
                EnvelopeCase(
                    recipient: hex(recipient.privateKey), recipientPublic: hex(recipient.publicKey),
                    ephemeral: hex(ephemeral.privateKey),
                    ephemeralPublic: hex(ephemeral.publicKey), nonce: hex(bytes(82, 12)), envelope: envelope)
            ],
            invite: invite,
            badInvites: ["", "k1.", "k2." + invite.dropFirst(3), String(invite.dropLast()), invite + "A"],
            snapshots: snapshots, conversions: conversions)
    }

    @Test func theFileIsWhatTheSwiftImplementationComputes() throws {
        let made = try Self.make()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if ProcessInfo.processInfo.environment["BASKET_WRITE_VECTORS"] == "1" {
            try (encoder.encode(made) + Data("\n".utf8)).write(to: Self.file)
        }
        let stored = try JSONDecoder().decode(File.self, from: Data(contentsOf: Self.file))
        // Which kinds differ, never the whole file.
        let fields = { (file: File) throws -> NSDictionary in
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(file)) as? NSDictionary ?? [:]
        }
        let (storedFields, madeFields) = (try fields(stored), try fields(made))
        let differing = (madeFields.allKeys as? [String] ?? []).sorted().filter {
            !((storedFields[$0] as? NSObject)?.isEqual(madeFields[$0]) ?? false)
        }
        #expect(
            differing.isEmpty,
            "Tests/Vectors/seal-v1.json is out of date in \(differing) (BASKET_WRITE_VECTORS=1 swift test)")
    }

    @Test func theFilesSealsOpenAndItsRefusalsAreRefused() throws {
        let file = try Self.make()
        let list = try #require(ListID(hex: file.list))
        let keys = try ListKeys(
            list: list, identity: try #require(Hex.bytes(file.identity)),
            epochs: Dictionary(uniqueKeysWithValues: file.epochs.map { (UInt32($0.key)!, Hex.bytes($0.value)!) }),
            current: 1)
        func op(_ web: WebOp) throws -> Op {
            let value: Value =
                switch web.value {
                case .null: .null
                case .bool(let flag): .bool(flag)
                case .text(let text): .text(text)
                }
            return Op(
                list: try #require(ListID(hex: web.list)),
                item: web.item == "-" ? .list : try #require(ItemID(hex: web.item)),
                field: try #require(Field(rawValue: web.field)), value: value,
                version: Version(
                    timestamp: HybridTimestamp(rawValue: try #require(UInt64(web.ts, radix: 16))),
                    replica: ReplicaID(rawValue: try #require(UInt64(web.replica, radix: 16)))))
        }
        for seal in file.seals { #expect(try keys.open(op(seal.sealed)) == op(seal.op), "\(seal.about)") }
        for refusal in file.refused {
            let sealed = try op(refusal.sealed)
            do {
                _ = try keys.open(sealed: sealed)
                Issue.record("\(refusal.about) opened")
            } catch {
                #expect(Self.kind(error) == refusal.error, "\(refusal.about)")
            }
        }
        for snapshot in file.snapshots {
            let expected = try (snapshot.ops ?? []).map(op)
            do {
                let opened = try keys.openSnapshot(snapshot.snapshot, cursor: snapshot.cursor)
                #expect(opened == expected && snapshot.error == nil, "\(snapshot.about)")
            } catch {
                #expect(Self.kind(error) == snapshot.error, "\(snapshot.about)")
            }
        }
        for bad in file.badCodes { #expect(throws: SealError.badKey) { try AccountKeys.recoveryBytes(bad) } }
        for bad in file.badInvites { #expect(throws: SealError.badKey) { try ListKeys(list: list, inviteSecret: bad) } }
        let envelope = try #require(file.envelopes.first)
        let recipient = try X25519KeyPair(privateKey: try #require(Hex.bytes(envelope.recipient)))
        #expect(try Envelope.open(envelope.envelope, list: list, with: recipient) == keys)
    }
}
