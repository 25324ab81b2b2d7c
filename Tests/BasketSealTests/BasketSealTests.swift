import BasketCore
import BasketSeal
import Foundation
import PlatformCrypto
import Testing

/// The keys and seals of encrypted lists: what opens, what does not, and what a server sees.
struct BasketSealTests {
    let list = ListID(raw: ID128(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210))

    func op(_ field: Field = .name, _ value: Value = .text("Milk"), item: ItemID? = nil, replica: UInt64 = 7) -> Op {
        Op(
            list: list, item: item ?? ItemID(list: list, key: "milk"), field: field, value: value,
            version: Version(
                timestamp: HybridTimestamp(milliseconds: 1_765_000_000_000, counter: 3),
                replica: ReplicaID(rawValue: replica)))
    }

    @Test func equalNamesMeetAndTheIdsAreKeyed() {
        let keys = ListKeys.generate(list: list)
        let other = ListKeys.generate(list: list)
        #expect(keys.itemID(key: "milk") == keys.itemID(key: "milk"))
        #expect(keys.itemID(key: "milk") != keys.itemID(key: "bread"))
        // Another key, the plain derivation and the shops' derivation give other ids.
        #expect(keys.itemID(key: "milk") != other.itemID(key: "milk"))
        #expect(keys.itemID(key: "milk") != ItemID(list: list, key: "milk"))
        #expect(keys.itemID(key: "lidl") != keys.shopID(key: "lidl"))
        // A rotation keeps every id.
        #expect(keys.rotated().itemID(key: "milk") == keys.itemID(key: "milk"))
    }

    @Test func everyValueSealsToItsBucketAndOpensWhereItStands() throws {
        let keys = ListKeys.generate(list: list)
        for value: Value in [.text("Milk"), .text("gluten-free oat milk"), .bool(true), .bool(false), .null, .text("")]
        {
            let sealed = keys.seal(op(.note, value))
            #expect(Sealed.isWellFormed(sealed))
            #expect(try keys.open(sealed).value == value)
            #expect(try keys.open(sealed) == op(.note, value))
        }
        // "milk" and "gluten-free oat milk" look alike; a long note does not.
        let short = keys.seal(op(.name, .text("milk"))).value.textValue!
        let long = keys.seal(op(.name, .text("gluten-free oat milk"))).value.textValue!
        #expect(short.utf8.count == long.utf8.count)
        #expect(
            keys.seal(op(.note, .text(String(repeating: "x", count: 400)))).value.textValue!.utf8.count
                > short.utf8.count)
        // One operation seals to one text (a retried push is a duplicate); another version or
        // another value to another.
        #expect(keys.seal(op()).value == keys.seal(op()).value)
        #expect(keys.seal(op()).value != keys.seal(op(replica: 8)).value)
        #expect(keys.seal(op(.name, .text("Milk"))).value != keys.seal(op(.name, .text("Milj"))).value)
        // The longest value of every field seals within the bound a server checks.
        for field in Field.allCases where field.kind != .flag {
            let longest = keys.seal(op(field, .text(String(repeating: "é", count: field.maxBytes / 2))))
            #expect(Sealed.isWellFormed(longest), "\(field)")
        }
    }

    @Test func aValueMovedOrTamperedWithDoesNotOpen() throws {
        let keys = ListKeys.generate(list: list)
        let sealed = keys.seal(op())
        var moved = sealed
        moved.item = keys.itemID(key: "bread")
        #expect(throws: SealError.forged) { try keys.open(moved) }
        var otherField = sealed
        otherField.field = .note
        #expect(throws: SealError.forged) { try keys.open(otherField) }
        var otherTime = sealed
        otherTime.version.timestamp = HybridTimestamp(milliseconds: 1_765_000_000_001, counter: 3)
        #expect(throws: SealError.forged) { try keys.open(otherTime) }
        var otherWriter = sealed
        otherWriter.version.replica = ReplicaID(rawValue: 8)
        #expect(throws: SealError.forged) { try keys.open(otherWriter) }
        var otherList = sealed
        otherList.list = ListID(raw: ID128(high: 1, low: 2))
        #expect(throws: SealError.forged) { try keys.open(otherList) }
        // A claimed epoch it was not sealed under.
        let rotated = keys.rotated()
        var claimed = sealed
        claimed.value = .text(sealed.value.textValue!.replacingFirst("s1.0.", with: "s1.1."))
        #expect(throws: SealError.forged) { try rotated.open(claimed) }
        // Another list's keys, an unknown epoch, plain text.
        #expect(throws: SealError.forged) { try ListKeys.generate(list: list).open(sealed) }
        #expect(throws: SealError.unknownEpoch(1)) { try keys.open(rotated.seal(op())) }
        #expect(throws: SealError.notSealed) { try keys.open(op()) }
        #expect(!Sealed.isWellFormed(op()))
    }

    @Test func aRotationSealsWithANewKeyAndStillOpensTheHistory() throws {
        let keys = ListKeys.generate(list: list)
        let before = keys.seal(op(.name, .text("Milk")))
        let rotated = keys.rotated()
        #expect(rotated.current == 1 && rotated.epochs.count == 2)
        let after = rotated.seal(op(.name, .text("Ring")))
        #expect(after.value.textValue!.hasPrefix("s1.1."))
        #expect(try rotated.open(before).value == .text("Milk"))
        // The keys a removed member held (epoch 0) open nothing sealed after.
        #expect(throws: SealError.unknownEpoch(1)) { try keys.open(after) }
    }

    /// An invite secret carries the identity key and the newest epochs, up to 16: a member who joins
    /// after rotations reads what was written under earlier keys too.
    @Test func anInviteSecretCarriesTheNewestEpochsWithTheHistory() throws {
        let first = ListKeys.generate(list: list)
        #expect(first.inviteSecret.hasPrefix("k1.") && first.inviteSecret.utf8.count == 94)
        let keys = first.rotated()
        let secret = keys.inviteSecret
        #expect(secret.utf8.count == 94 + 48)
        let joined = try ListKeys(list: list, inviteSecret: secret)
        #expect(joined.current == 1 && joined.epochs == keys.epochs)
        #expect(joined.itemID(key: "milk") == keys.itemID(key: "milk"))
        #expect(try joined.open(keys.seal(op())).value == .text("Milk"))
        #expect(try joined.open(first.seal(op())).value == .text("Milk"), "the history, under epoch 0")
        for bad in ["", "k1.", "k2." + secret.dropFirst(3), String(secret.dropLast()), secret + "A"] {
            #expect(throws: SealError.badKey) { try ListKeys(list: list, inviteSecret: bad) }
        }
        // Past 16 epochs, the newest 16 travel; the secret stays within its bound.
        var many = keys
        for _ in 0..<20 { many = many.rotated() }
        let long = try ListKeys(list: list, inviteSecret: many.inviteSecret)
        #expect(long.epochs.count == ListKeys.maxInviteEpochs && long.current == many.current)
        #expect(many.inviteSecret.utf8.count == 3 + (32 + 36 * ListKeys.maxInviteEpochs) * 4 / 3 + 1)
        #expect(throws: SealError.badKey) { try ListKeys(list: list, inviteSecret: many.inviteSecret + "AAAAAAAA") }
    }

    /// A keyring adds the epochs an envelope or a code brings to the ones it holds, and refuses
    /// keys of another identity (another list's, or a forgery) instead of trading its own for them.
    @Test func aKeyringKeepsItsIdentityAndGainsEpochs() throws {
        let keys = ListKeys.generate(list: list)
        let keyring = SealKeyring()
        try keyring.load(keys.storageText, for: list)
        let later = keys.rotated()
        try keyring.load(later.inviteSecret, for: list)
        #expect(keyring.keys(of: list)?.epochs.count == 2 && keyring.keys(of: list)?.current == 1)
        #expect(throws: SealError.forged) { try keyring.load(ListKeys.generate(list: list).storageText, for: list) }
        #expect(keyring.keys(of: list)?.identity == keys.identity)
    }

    @Test func anEnvelopeOpensForItsRecipientAndListAlone() throws {
        let keys = ListKeys.generate(list: list).rotated().rotated()
        let member = X25519KeyPair.generate()
        let envelope = try Envelope.seal(keys, to: member.publicKey)
        #expect(try Envelope.open(envelope, list: list, with: member) == keys)
        #expect(throws: SealError.forged) { try Envelope.open(envelope, list: list, with: .generate()) }
        #expect(throws: SealError.forged) {
            try Envelope.open(envelope, list: ListID(raw: ID128(high: 9, low: 9)), with: member)
        }
        #expect(throws: SealError.badKey) { try Envelope.seal(keys, to: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: SealError.badKey) { try Envelope.open("e1.AAAA", list: list, with: member) }
    }

    @Test func aPasswordGivesALoginSecretAndAWrappingKeyAndARecoveryCodeReadsBack() throws {
        let stretched = AccountKeys.stretch(password: "correct horse", account: "olga", iterations: 1_000)
        #expect(stretched.login != stretched.wrap)
        #expect(AccountKeys.stretch(password: "correct horse", account: "olga", iterations: 1_000) == stretched)
        #expect(AccountKeys.stretch(password: "correct horse", account: "olgb", iterations: 1_000) != stretched)
        let pair = X25519KeyPair.generate()
        let wrapped = AccountKeys.wrap(pair.privateKey, key: stretched.wrap, purpose: "private-key")
        #expect(try AccountKeys.unwrap(wrapped, key: stretched.wrap, purpose: "private-key") == pair.privateKey)
        #expect(throws: SealError.forged) {
            try AccountKeys.unwrap(wrapped, key: stretched.login, purpose: "private-key")
        }
        #expect(throws: SealError.forged) { try AccountKeys.unwrap(wrapped, key: stretched.wrap, purpose: "other") }
        #expect(throws: SealError.badKey) {
            try AccountKeys.unwrap("w1.!!", key: stretched.wrap, purpose: "private-key")
        }

        let code = AccountKeys.newRecoveryCode()
        #expect(code.count == 26 + 5)
        let typed = code.uppercased().replacingFirst("-", with: " ")
        #expect(try AccountKeys.recoveryKey(typed) == AccountKeys.recoveryKey(code))
        let bytes: [UInt8] = Array(0..<16)
        #expect(try AccountKeys.recoveryBytes(AccountKeys.recoveryCode(bytes)) == bytes)
        for bad in ["", "abc", code + "0", String(code.dropLast()), code.replacingFirst("-", with: "u")] {
            #expect(throws: SealError.badKey) { try AccountKeys.recoveryKey(bad) }
        }
    }

    /// The server's check reads in place what the clients parse: the two agree on valid texts
    /// and on every kind of damage.
    @Test func theFormCheckAgreesWithTheParse() {
        let keys = ListKeys.generate(list: list)
        let valid = keys.seal(op()).value.textValue!
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("s1.0-_=AZaz09!é ".utf8)
        for round in 0..<2_000 {
            var bytes = Array(valid.utf8)
            for _ in 0..<(round % 4) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            var candidate = op()
            candidate.value = .text(text)
            let parsed = Sealed.parse(text) != nil && text.utf8.count <= Sealed.maxTextBytes(for: .name)
            #expect(Sealed.isWellFormed(candidate) == parsed, "\(text)")
        }
    }

    @Test func base64URLAndSealedTextsAreReadStrictly() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(($0 * 37 + count) & 0xff) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.encode(Array("hello?>".utf8)) == "aGVsbG8_Pg")
        #expect(Base64URL.decode("aGVsbG8_Pg==") == Array("hello?>".utf8))
        for bad in ["a", "aGVsbG8/Pg", "aGVsbG8_Ph", "aG===", "a b"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
        let payload = [UInt8](repeating: 1, count: 60)
        #expect(Sealed.parse(Sealed.text(epoch: 12, payload: payload))?.epoch == 12)
        for bad in [
            "s1..AAAA", "s1.01." + Base64URL.encode(payload), "s1.1234567." + Base64URL.encode(payload), "s1.1.AAAA",
            "s2.1." + Base64URL.encode(payload),
        ] {
            #expect(Sealed.parse(bad) == nil, "\(bad)")
        }
        #expect(Sealed.paddedLength(3) == 32 && Sealed.paddedLength(31) == 32 && Sealed.paddedLength(32) == 64)
        #expect(
            Sealed.paddedLength(511) == 512 && Sealed.paddedLength(512) == 1024 && Sealed.paddedLength(1100) == 1536)
        #expect(Sealed.value(ofPlaintext: Sealed.plaintext(.text("Milk"))) == .text("Milk"))
        #expect(Sealed.value(ofPlaintext: [3, 0xff, 0x80] + [UInt8](repeating: 0, count: 29)) == nil)
        #expect(Sealed.value(ofPlaintext: [9, 0x80] + [UInt8](repeating: 0, count: 30)) == nil)
        #expect(Sealed.value(ofPlaintext: [3, 0x41, 0x80] + [UInt8](repeating: 0, count: 30)) == nil)
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}

/// Snapshots of encrypted lists (docs/encryption.md, "Snapshots").
struct SnapshotSealTests {
    let list = ListID.random()

    func state(_ keys: ListKeys, items: Int) -> [Op] {
        (0..<items).flatMap { n -> [Op] in
            let item = keys.itemID(key: "item \(n)")
            let version = Version(
                timestamp: HybridTimestamp(milliseconds: 1_765_000_000_000 + UInt64(n), counter: 0),
                replica: ReplicaID(rawValue: 7))
            return [
                Op(list: list, item: item, field: .name, value: .text("Item \(n)"), version: version),
                Op(list: list, item: item, field: .checked, value: .bool(n % 2 == 0), version: version),
            ]
        }
    }

    @Test func aSnapshotOpensForItsListAtItsCursorOnly() throws {
        let keys = ListKeys.generate(list: list)
        let ops = state(keys, items: 50)
        let text = keys.sealSnapshot(ops, cursor: 120)
        #expect(try keys.openSnapshot(text, cursor: 120) == ops.sorted(by: OperationCodec.canonicalLess))
        #expect(throws: SealError.forged) { try keys.openSnapshot(text, cursor: 121) }
        // Another list's keys (or a copy moved to another list) open nothing.
        #expect(throws: SealError.forged) { try ListKeys.generate(list: list).openSnapshot(text, cursor: 120) }
        // A flipped byte anywhere in the sealed part.
        var bytes = Array(text.utf8)
        bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SealError.self) { try keys.openSnapshot(String(decoding: bytes, as: UTF8.self), cursor: 120) }
        // After a rotation: sealed under the new epoch, and the older snapshot still opens.
        let rotated = keys.rotated()
        #expect(rotated.sealSnapshot(ops, cursor: 130).hasPrefix("n1.1."))
        #expect(try rotated.openSnapshot(text, cursor: 120).count == ops.count)
        #expect(throws: SealError.unknownEpoch(1)) {
            try keys.openSnapshot(rotated.sealSnapshot(ops, cursor: 130), cursor: 130)
        }
        // Two snapshots of the same state are two texts (a random nonce each).
        #expect(keys.sealSnapshot(ops, cursor: 120) != text)
    }

    /// Sizes come in 4 KiB buckets of the gzipped state: one item more or less is not seen.
    @Test func aSnapshotsSizeIsPaddedAndCompressed() throws {
        let keys = ListKeys.generate(list: list)
        let small = keys.sealSnapshot(state(keys, items: 10), cursor: 1)
        let smaller = keys.sealSnapshot(state(keys, items: 9), cursor: 1)
        #expect(small.utf8.count == smaller.utf8.count)
        let payload = try #require(Sealed.parseSnapshot(small)).payload
        #expect((payload.count - 12 - 16) % ListKeys.snapshotBucket == 0)
        // 10,000 items: the plain encoding is about 1.7 MB; sealed, well within a request.
        let large = keys.sealSnapshot(state(keys, items: 10_000), cursor: 1)
        #expect(large.utf8.count < Sealed.maxSnapshotBytes / 2, "\(large.utf8.count) bytes")
        #expect(try keys.openSnapshot(large, cursor: 1).count == 20_000)
    }
}
