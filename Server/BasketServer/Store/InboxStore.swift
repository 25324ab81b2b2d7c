public import BasketCore

/// Add-only keys and each list's inbox: a named key that can only put text into one list's
/// inbox, and the texts waiting for a member's device to file them as items
/// (`BasketService+Inbox.swift`). A key ends when it is revoked, when its maker leaves or is
/// removed from the list, and with the list (the store deletes it in the same transaction).
public protocol InboxStore: Sendable {
    /// Stores a key by its hash for `list`, made by `account`, when the account may change the
    /// list (an owner or editor) and the list has fewer than `maxPerList` keys.
    /// - Throws: ``StoreError/noSuchMember`` (not one who may), ``StoreError/tooManyInvites``.
    func saveAddKey(hash: String, id: String, list: ListID, name: String, createdBy: Int64, now: Int64, maxPerList: Int)
        throws
    /// The list's keys, oldest first.
    func addKeys(of list: ListID) throws -> [AddKeyRecord]
    /// Revokes the list's key with this id; returns it (nil when the list has none).
    func revokeAddKey(id: String, of list: ListID) throws -> AddKeyRecord?
    /// The key whose hash is `hash`, with its list (nil when none works).
    func addKey(hash: String) throws -> AddKeyRecord?
    /// Puts `text` from the key named `name` in `list`'s inbox, when it holds fewer than `maxWaiting`.
    /// - Returns: false when the inbox is full.
    func putInInbox(id: String, list: ListID, name: String, text: String, now: Int64, maxWaiting: Int) throws -> Bool
    /// The texts waiting in `list`'s inbox, oldest first.
    func inbox(of list: ListID) throws -> [Wire.InboxEntry]
    /// Takes the entry with this id out of `list`'s inbox; nil when it is not there (another
    /// device took it first: each entry is taken once).
    func takeFromInbox(id: String, of list: ListID) throws -> Wire.InboxEntry?
}

/// An add-only key as stored (never its secret, only its hash).
public struct AddKeyRecord: Sendable, Hashable {
    /// Its public id.
    public var id: String
    /// The one list it adds to.
    public var list: ListID
    /// What it is for ("Kitchen speaker").
    public var name: String
    /// Who made it: an account name.
    public var createdBy: String
    /// Who made it: the account's id.
    public var createdByID: Int64
    /// When it was made, Unix milliseconds.
    public var created: Int64

    /// A key as stored.
    public init(id: String, list: ListID, name: String, createdBy: String, createdByID: Int64, created: Int64) {
        self.id = id
        self.list = list
        self.name = name
        self.createdBy = createdBy
        self.createdByID = createdByID
        self.created = created
    }
}

/// The statements of ``InboxStore``, the same for both stores.
enum InboxSQL {
    /// Key {1} (id), {2} (hash) for list {3} (its id) named {4} by account {5} at {6}, when the
    /// account is an owner or editor and the list has fewer than {7} keys.
    static let insertKey = """
        INSERT INTO add_keys(id, hash, list, name, created_by, created)
        SELECT {1}, {2}, l.no, {4}, {5}, {6} FROM lists l JOIN members m ON m.list = l.no AND m.account = {5}
        WHERE l.id = {3} AND m.role IN ('owner', 'editor')
            AND (SELECT count(*) FROM add_keys k WHERE k.list = l.no) < {7}
        """
    static let isMember = """
        SELECT m.role FROM members m JOIN lists l ON l.no = m.list WHERE l.id = {1} AND m.account = {2}
        """
    static let keys = """
        SELECT k.id, k.name, a.name, k.created_by, k.created FROM add_keys k JOIN lists l ON l.no = k.list
        LEFT JOIN accounts a ON a.id = k.created_by WHERE l.id = {1} ORDER BY k.created, k.id LIMIT 100
        """
    static let revokeKey = "DELETE FROM add_keys WHERE id = {1} AND list = (SELECT no FROM lists WHERE id = {2})"
    static let keyByHash = """
        SELECT k.id, l.id, k.name, a.name, k.created_by, k.created FROM add_keys k JOIN lists l ON l.no = k.list
        LEFT JOIN accounts a ON a.id = k.created_by WHERE k.hash = {1}
        """
    static let put = """
        INSERT INTO inbox(id, list, name, text, at) SELECT {1}, l.no, {3}, {4}, {5} FROM lists l
        WHERE l.id = {2} AND (SELECT count(*) FROM inbox i WHERE i.list = l.no) < {6}
        """
    static let entries = """
        SELECT i.id, i.text, i.name, i.at FROM inbox i JOIN lists l ON l.no = i.list WHERE l.id = {1}
        ORDER BY i.at, i.id LIMIT 100
        """
    static let take = """
        DELETE FROM inbox WHERE id = {1} AND list = (SELECT no FROM lists WHERE id = {2}) RETURNING id, text, name, at
        """
}
