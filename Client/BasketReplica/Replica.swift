public import BasketCore
internal import Foundation
import SQLite
import Synchronization

/// The local replica: one SQLite file (WAL) holding lists, items with their last-writer-wins
/// registers, every write's history, the clock and the outbox of writes not yet synced.
///
/// Thread-safe: every call takes the replica's lock, and each write is one SQLite transaction.
/// Several processes may open the same file; SQLite serialises their writes.
///
/// ```swift
/// let replica = try Replica(path: "/tmp/basket.sqlite")
/// let list = try replica.createList(title: "Groceries")
/// try replica.add(["Milk", "Crème fraîche"], to: list.id)
/// for item in try replica.items(in: list.id) { print(item.name, item.isChecked) }
/// ```
public final class Replica: @unchecked Sendable {
    /// Settings of a replica, with their defaults.
    public struct Configuration: Sendable {
        /// How commits reach the disk. Default `.full`: a returned write survives power loss.
        public var synchronous: Durability = .full
        /// The wall clock in Unix milliseconds. Tests inject their own.
        public var wallClock: @Sendable () -> UInt64 = { HybridClock.wallClockMilliseconds() }
        /// The keys of encrypted lists (BasketSeal's); nil: every list is plain. The replica loads
        /// the keys it keeps into it when it opens.
        public var keyring: (any Keyring)?
        /// Whether ``Replica/createList(title:language:encrypted:)`` makes lists encrypted end to
        /// end unless told otherwise (it needs a ``keyring``).
        public var encryptNewLists = true

        /// The defaults: full durability, the system's wall clock.
        public init() {}

        /// How a commit reaches the disk before the call that made it returns.
        public enum Durability: Sendable {
            /// fsync at every commit: a returned write survives a power loss.
            case full
            /// Survives a crash of the process; a power loss may take the last commits.
            case normal
            /// No fsync at all: for tests and throw-away replicas.
            case off
        }
    }

    /// The newest schema this build reads and writes (`PRAGMA user_version`).
    static let schemaVersion = Schema.migrations.count

    /// This replica's id, the tie-break of its writes. It changes only when a server refuses it
    /// because another account pushed it to a list first (the sync then gives it a new one).
    public var replicaID: ReplicaID { currentID.withLock { $0 } }
    /// The id as this object last read it from the file (another process may renew it).
    private let currentID: Mutex<ReplicaID>
    /// The settings the replica was opened with.
    let configuration: Configuration
    /// The path of the replica file.
    let path: String

    // `@unchecked Sendable`: `connection` is only touched while `lock` is held (see `locked`).
    private let lock = NSLock()
    private let connection: Connection
    private let observers = Observers()

    /// Opens or creates the replica at `path`, migrating its schema to the newest this build knows.
    /// - Throws: ``ReplicaError/storage(_:)`` when the file cannot be opened,
    ///   ``ReplicaError/corrupt(_:)`` when it is not a sound replica,
    ///   ``ReplicaError/newerSchema(found:supported:)`` when it was written by a newer build.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        let opened: (Connection, ReplicaID)
        do {
            opened = try Self.open(path, configuration)
        } catch let error as SQLiteError {
            throw ReplicaError(error)
        }
        connection = opened.0
        currentID = Mutex(opened.1)
        if let keyring = configuration.keyring {
            for (list, text) in try storedKeys() { try? keyring.load(text, for: list) }
        }
    }

    /// The prefix of the settings that keep each encrypted list's keys (`keys.` and the list id).
    static let keysSetting = "keys."

    /// Every list's keys this file keeps, as text.
    func storedKeys() throws -> [(ListID, String)] {
        try locked { db in
            try db.query(
                "SELECT key, value FROM settings WHERE key >= ? AND key < ?", .text(Self.keysSetting),
                .text("keys/")
            ) { row in (row.string(0) ?? "", row.string(1) ?? "") }
        }
        .compactMap { key, value in ListID(hex: key.dropFirst(Self.keysSetting.count)).map { ($0, value) } }
    }

    /// Keeps `text`, the keys of the encrypted list `list` (made here, or from an invite or an
    /// envelope), in this file and in the keyring. The file is the device's (0600): the lists'
    /// contents are in it in clear already.
    /// - Throws: ``ReplicaError/invalidOperation(_:)`` without a keyring, or when the keyring
    ///   refuses the text.
    public func saveKeys(_ text: String, for list: ListID) throws {
        guard let keyring = configuration.keyring else {
            throw ReplicaError.invalidOperation("this replica was opened without a keyring: it keeps no keys")
        }
        do {
            try keyring.load(text, for: list)
        } catch {
            throw ReplicaError.invalidOperation("not keys of list \(list): \(error)")
        }
        try setSetting(Self.keysSetting + list.description, text)
    }

    /// Whether `list` is encrypted end to end and this device holds its keys.
    public func isEncrypted(_ list: ListID) -> Bool { configuration.keyring?.sealing(for: list) != nil }

    /// The id of the item with key `key` in `list`: keyed by the list's keys when it is encrypted.
    func itemID(_ list: ListID, key: String) -> ItemID {
        configuration.keyring?.sealing(for: list)?.itemID(key: key) ?? ItemID(list: list, key: key)
    }

    /// The id of the shop with key `key` in `list`: keyed by the list's keys when it is encrypted.
    func shopID(_ list: ListID, key: String) -> ItemID {
        configuration.keyring?.sealing(for: list)?.shopID(key: key) ?? ItemID(list: list, shopKey: key)
    }

    private static func open(_ path: String, _ configuration: Configuration) throws -> (Connection, ReplicaID) {
        let connection = try Connection(path: path)
        let synchronous: Connection.Synchronous =
            switch configuration.synchronous {
            case .full: .full
            case .normal: .normal
            case .off: .off
            }
        try connection.configure(synchronous: synchronous)
        try Schema.migrate(connection)
        let id = try connection.transaction {
            if let id = try Self.storedID(connection) { return id }
            let id = ReplicaID.random()
            try connection.run("INSERT INTO meta(key, value) VALUES ('replica', ?)", .text(id.description))
            return id
        }
        return (connection, id)
    }

    /// The replica's id as the file has it now (another process using the file may have renewed
    /// it). Call inside a transaction.
    func loadReplicaID(_ db: Connection) throws -> ReplicaID {
        guard let id = try Self.storedID(db) else { throw ReplicaError.corrupt("the replica has no id") }
        currentID.withLock { $0 = id }
        return id
    }

    /// The id the file holds, if any.
    private static func storedID(_ db: Connection) throws -> ReplicaID? {
        try db.scalar("SELECT value FROM meta WHERE key = 'replica'")?.textValue.flatMap(ReplicaID.init(hex:))
    }

    /// Gives the replica a new random id, for every write from now on. Call inside a transaction.
    func renewReplicaID(_ db: Connection) throws -> ReplicaID {
        let id = ReplicaID.random()
        try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('replica', ?)", .text(id.description))
        currentID.withLock { $0 = id }
        return id
    }

    /// Runs `body` with the connection, under the replica's lock; SQLite's errors leave it as
    /// the replica's own (``ReplicaError/storage(_:)``, ``ReplicaError/corrupt(_:)``).
    func locked<T>(_ body: (Connection) throws -> T) throws -> T {
        do {
            return try lock.withLock { try body(connection) }
        } catch let error as SQLiteError {
            throw ReplicaError(error)
        }
    }

    /// A stream of what each commit through this replica object changed, for a UI to observe.
    /// The stream ends when the consumer stops iterating.
    public func updates() -> AsyncStream<ReplicaUpdate> {
        observers.makeStream()
    }

    /// A number that changes when another connection commits to the replica's file (another
    /// process, usually: a second terminal, `basket sync --watch`) and stays the same while only
    /// this object writes (``updates()`` tells of those). SQLite's `PRAGMA data_version`: asking
    /// costs no disk read, so a screen may ask ten times a second.
    public func fileVersion() throws -> Int64 {
        try locked { try $0.scalar("PRAGMA data_version")?.integerValue ?? 0 }
    }

    func notify(_ change: ReplicaUpdate) {
        if !change.lists.isEmpty { observers.send(change) }
    }

    /// The clock as last persisted.
    func clock() throws -> HybridClock {
        try locked { try loadClock($0) }
    }

    func loadClock(_ db: Connection) throws -> HybridClock {
        let raw = try db.scalar("SELECT value FROM meta WHERE key = 'clock'")?.integerValue ?? 0
        return HybridClock(last: HybridTimestamp(rawValue: UInt64(bitPattern: raw)))
    }

    func saveClock(_ clock: HybridClock, _ db: Connection) throws {
        try db.run(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('clock', ?)",
            .integer(Int64(bitPattern: clock.last.rawValue)))
    }

    /// A setting kept in the replica file (the CLI keeps its current list here).
    public func setting(_ key: String) throws -> String? {
        try locked { try $0.scalar("SELECT value FROM settings WHERE key = ?", .text(key))?.textValue }
    }

    /// Stores a setting (the CLI's current list, its server); nil removes it.
    public func setSetting(_ key: String, _ value: String?) throws {
        try locked { db in
            if let value {
                try db.run("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)", .text(key), .text(value))
            } else {
                try db.run("DELETE FROM settings WHERE key = ?", .text(key))
            }
        }
    }
}

/// The continuations of ``Replica/updates()`` streams.
private final class Observers: Sendable {
    private let continuations = Mutex<[UUID: AsyncStream<ReplicaUpdate>.Continuation]>([:])

    func makeStream() -> AsyncStream<ReplicaUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ReplicaUpdate.self, bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.continuations.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ change: ReplicaUpdate) {
        let targets = continuations.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(change) }
    }
}
