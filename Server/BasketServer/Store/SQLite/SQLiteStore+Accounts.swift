import BasketCore
import Foundation
import SQLite
import Synchronization

// SQLiteStore: accounts and tokens.
extension SQLiteStore {
    public func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws
        -> AccountRecord
    {
        try locked { db in
            try db.transaction {
                if try db.scalar("SELECT 1 FROM accounts WHERE name = ?", .text(name)) != nil {
                    throw StoreError.accountExists
                }
                if let signupInvite {
                    try db.run(
                        "UPDATE signup_invites SET uses_left = uses_left - 1 WHERE hash = ? AND expires > ? AND uses_left > 0",
                        .text(signupInvite), .integer(now))
                    guard db.changes == 1 else { throw StoreError.noSuchInvite }
                    try db.run("DELETE FROM signup_invites WHERE uses_left <= 0")
                }
                try db.run("INSERT INTO accounts(name, password) VALUES (?, ?)", .text(name), .text(passwordHash))
                return AccountRecord(id: db.lastInsertRowID, name: name, passwordHash: passwordHash)
            }
        }
    }

    public func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws {
        try locked {
            try $0.run(
                "INSERT INTO signup_invites(hash, created, expires, uses_left) VALUES (?, ?, ?, ?)", .text(hash),
                .integer(createdAt), .integer(expiresAt), .integer(Int64(uses)))
        }
    }

    public func signupInviteWorks(hash: String, now: Int64) throws -> Bool {
        try locked { db in
            try db.scalar(
                "SELECT 1 FROM signup_invites WHERE hash = ? AND expires > ? AND uses_left > 0", .text(hash),
                .integer(now)) != nil
        }
    }

    public func account(named name: String) throws -> AccountRecord? {
        try locked { db in
            try db.query("SELECT id, name, password FROM accounts WHERE name = ?", .text(name)) {
                AccountRecord(id: $0.int64(0), name: $0.string(1) ?? "", passwordHash: $0.string(2) ?? "")
            }.first
        }
    }

    public func setPasswordHash(_ hash: String, of account: Int64) throws {
        try locked { try $0.run("UPDATE accounts SET password = ? WHERE id = ?", .text(hash), .integer(account)) }
    }

    public func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws {
        try locked {
            try $0.run(
                "INSERT INTO tokens(hash, id, account, device, created, last_used) VALUES (?, ?, ?, ?, ?, ?)",
                .text(hash), .text(id), .integer(account), .text(device), .integer(createdAt), .integer(createdAt))
        }
    }

    static func tokenRecord(_ row: Row, from column: Int32) -> TokenRecord {
        TokenRecord(
            id: row.string(column) ?? "", device: row.string(column + 1) ?? "", created: row.int64(column + 2),
            lastUsed: row.int64(column + 3))
    }

    public func session(forTokenHash hash: String) throws -> (AccountRecord, TokenRecord)? {
        try reading { db in
            try db.query(
                """
                SELECT a.id, a.name, a.password, t.id, t.device, t.created, t.last_used
                FROM tokens t JOIN accounts a ON a.id = t.account WHERE t.hash = ?
                """, .text(hash)
            ) {
                (
                    AccountRecord(id: $0.int64(0), name: $0.string(1) ?? "", passwordHash: $0.string(2) ?? ""),
                    Self.tokenRecord($0, from: 3)
                )
            }.first
        }
    }

    public func touchToken(hash: String, at now: Int64) throws {
        try locked { try $0.run("UPDATE tokens SET last_used = ? WHERE hash = ?", .integer(now), .text(hash)) }
    }

    public func tokens(of account: Int64) throws -> [TokenRecord] {
        try locked { db in
            try db.query(
                "SELECT id, device, created, last_used FROM tokens WHERE account = ? ORDER BY created, id",
                .integer(account)
            ) { Self.tokenRecord($0, from: 0) }
        }
    }

    public func revokeToken(hash: String) throws {
        try locked { try $0.run("DELETE FROM tokens WHERE hash = ?", .text(hash)) }
    }

    public func revokeToken(id: String, of account: Int64) throws -> Bool {
        try locked { db in
            try db.run("DELETE FROM tokens WHERE id = ? AND account = ?", .text(id), .integer(account))
            return db.changes == 1
        }
    }

    public func revokeTokens(of account: Int64, keeping: String?) throws -> Int {
        try locked { db in
            try db.run(
                "DELETE FROM tokens WHERE account = ? AND hash IS NOT ?", .integer(account),
                keeping.map(SQLValue.text) ?? .null)
            return db.changes
        }
    }
}
