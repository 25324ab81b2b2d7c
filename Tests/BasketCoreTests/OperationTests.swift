import BasketCore
import Foundation
import TestSupport
import Testing

struct OperationTests {
    let list = ListID(raw: ID128(high: 0xAB, low: 0xCD))

    func op(_ item: String, _ field: Field, _ value: Value, ms: UInt64, replica: UInt64 = 1) -> Op {
        Op(
            list: list, item: item.isEmpty ? .list : ItemID(list: list, key: item), field: field, value: value,
            version: Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: 0), replica: ReplicaID(rawValue: replica)))
    }

    @Test func registerMergeIsCommutativeAssociativeAndIdempotent() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let writes = (0..<3).map { _ in
                Register(
                    value: .bool(rng.chance(50)),
                    version: Version(
                        timestamp: HybridTimestamp(milliseconds: UInt64(rng.below(3)), counter: 0),
                        replica: ReplicaID(rawValue: UInt64(1 + rng.below(2)))))
            }
            let (a, b, c) = (writes[0], writes[1], writes[2])
            #expect(a.merging(b) == b.merging(a))
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)))
            #expect(a.merging(a) == a)
        }
    }

    @Test func laterWriteWinsAndReplicaBreaksTies() {
        func version(_ ms: UInt64, _ counter: UInt16, _ replica: UInt64) -> Version {
            Version(
                timestamp: HybridTimestamp(milliseconds: ms, counter: counter), replica: ReplicaID(rawValue: replica))
        }
        var register = Register(value: .bool(true), version: version(5, 0, 9))
        let older = register.merge(Register(value: .bool(false), version: version(4, 9, 99)))
        #expect(!older)
        #expect(register.value == .bool(true))
        let tie = register.merge(Register(value: .bool(false), version: version(5, 0, 10)))
        #expect(tie)
        #expect(register.value == .bool(false))
    }

    /// What the server and every replica refuse on the wire: the same rules as local writes.
    @Test func validationAppliesTheTextRulesToEveryTextField() {
        let escape = "Milk\u{1B}]0;pwned\u{7}"
        #expect(throws: Op.Problem.invalidText(.note, .controlCharacter)) {
            try op("milk", .note, .text(escape), ms: 1).validate()
        }
        #expect(throws: Op.Problem.invalidText(.quantity, .controlCharacter)) {
            try op("milk", .quantity, .text("2\u{9B}"), ms: 1).validate()
        }
        #expect(throws: Op.Problem.invalidName(.controlCharacter)) {
            try op("milk", .name, .text(escape), ms: 1).validate()
        }
        #expect(throws: Op.Problem.invalidText(.category, .tooManyBytes(257, limit: 256))) {
            try op("milk", .category, .text(String(repeating: "c", count: 257)), ms: 1).validate()
        }
        #expect(throws: Op.Problem.invalidText(.note, .notCleaned)) {
            try op("milk", .note, .text("two  spaces"), ms: 1).validate()
        }
        let flood = "a" + String(repeating: "\u{0301}", count: 1_800_000)
        #expect(throws: Op.Problem.invalidName(.tooManyCombiningMarks)) {
            try op("a", .name, .text(flood), ms: 1).validate()
        }
        #expect(throws: Never.self) {
            try op("milk", .note, .text(String(repeating: "n", count: 4_096)), ms: 1).validate()
        }
    }

    @Test func validationMatchesFieldsToTargetsAndTypes() {
        #expect(throws: Never.self) { try op("milk", .checked, .bool(true), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .checked, .text("yes"), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .title, .text("x"), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("", .name, .text("x"), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .name, .text(""), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .name, .text(" Milk"), ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .name, .null, ms: 1).validate() }
        #expect(throws: Op.Problem.self) { try op("milk", .checked, .bool(true), ms: 1, replica: 0).validate() }
        #expect(throws: Never.self) { try op("milk", .note, .null, ms: 1).validate() }
    }
}
