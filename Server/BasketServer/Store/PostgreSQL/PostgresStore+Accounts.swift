import BasketCore
import Foundation
import Postgres
import Synchronization

// PostgresStore: accounts and tokens.
extension PostgresStore {
    public func createAccount(name: String, passwordHash: String, signupInvite: String?, now: Int64) throws
        -> AccountRecord
    {
        try connected { db in
            try db.transaction {
                if let signupInvite {
                    let used = try db.prepared(
                        """
                        UPDATE signup_invites SET uses_left = uses_left - 1
                        WHERE hash = $1 AND expires > $2 AND uses_left > 0 RETURNING uses_left
                        """, [signupInvite, "\(now)"])
                    guard used.count == 1 else { throw StoreError.noSuchInvite }
                    _ = try db.prepared("DELETE FROM signup_invites WHERE uses_left <= 0", [])
                }
                let rows = try db.prepared(
                    "INSERT INTO accounts(name, password) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING id",
                    [name, passwordHash])
                guard rows.count == 1 else { throw StoreError.accountExists }
                return AccountRecord(id: rows.int64(0, 0), name: name, passwordHash: passwordHash)
            }
        }
    }

    public func saveSignupInvite(hash: String, createdAt: Int64, expiresAt: Int64, uses: Int) throws {
        try connected { db in
            _ = try db.prepared(
                "INSERT INTO signup_invites(hash, created, expires, uses_left) VALUES ($1, $2, $3, $4)",
                [hash, "\(createdAt)", "\(expiresAt)", "\(uses)"])
        }
    }

    public func signupInviteWorks(hash: String, now: Int64) throws -> Bool {
        try connected { db in
            try db.prepared(
                "SELECT 1 FROM signup_invites WHERE hash = $1 AND expires > $2 AND uses_left > 0", [hash, "\(now)"]
            ).count == 1
        }
    }

    public func account(named name: String) throws -> AccountRecord? {
        try connected { db in
            let rows = try db.prepared("SELECT id, name, password FROM accounts WHERE name = $1", [name])
            return rows.count == 0
                ? nil : AccountRecord(id: rows.int64(0, 0), name: rows.string(0, 1)!, passwordHash: rows.string(0, 2)!)
        }
    }

    public func setPasswordHash(_ hash: String, of account: Int64) throws {
        try connected {
            _ = try $0.prepared(
                Self.notifyingAccounts("UPDATE accounts SET password = $1 WHERE id = $2 RETURNING id AS account"),
                [hash, "\(account)"])
        }
    }

    public func saveToken(hash: String, id: String, account: Int64, device: String, createdAt: Int64) throws {
        try connected { db in
            _ = try db.prepared(
                "INSERT INTO tokens(hash, id, account, device, created, last_used) VALUES ($1, $2, $3, $4, $5, $5)",
                [hash, id, "\(account)", device, "\(createdAt)"])
        }
    }

    static func tokenRecord(_ rows: Rows, _ row: Int, from column: Int) -> TokenRecord {
        TokenRecord(
            id: rows.string(row, column) ?? "", device: rows.string(row, column + 1) ?? "",
            created: rows.int64(row, column + 2), lastUsed: rows.int64(row, column + 3))
    }

    public func session(forTokenHash hash: String) throws -> (AccountRecord, TokenRecord)? {
        try connected { db in
            let rows = try db.prepared(
                """
                SELECT a.id, a.name, a.password, t.id, t.device, t.created, t.last_used
                FROM tokens t JOIN accounts a ON a.id = t.account WHERE t.hash = $1
                """, [hash])
            guard rows.count == 1 else { return nil }
            return (
                AccountRecord(id: rows.int64(0, 0), name: rows.string(0, 1)!, passwordHash: rows.string(0, 2)!),
                Self.tokenRecord(rows, 0, from: 3)
            )
        }
    }

    public func touchToken(hash: String, at now: Int64) throws {
        try connected { _ = try $0.prepared("UPDATE tokens SET last_used = $2 WHERE hash = $1", [hash, "\(now)"]) }
    }

    public func tokens(of account: Int64) throws -> [TokenRecord] {
        try connected { db in
            let rows = try db.prepared(
                "SELECT id, device, created, last_used FROM tokens WHERE account = $1 ORDER BY created, id",
                ["\(account)"])
            return (0..<rows.count).map { Self.tokenRecord(rows, $0, from: 0) }
        }
    }

    public func revokeToken(hash: String) throws {
        try connected {
            _ = try $0.prepared(Self.notifyingAccounts("DELETE FROM tokens WHERE hash = $1 RETURNING account"), [hash])
        }
    }

    public func revokeToken(id: String, of account: Int64) throws -> Bool {
        try connected { db in
            try db.prepared(
                Self.notifyingAccounts("DELETE FROM tokens WHERE id = $1 AND account = $2 RETURNING account"),
                [id, "\(account)"]
            ).count == 1
        }
    }

    public func revokeTokens(of account: Int64, keeping: String?) throws -> Int {
        try connected { db in
            try db.prepared(
                Self.notifyingAccounts(
                    "DELETE FROM tokens WHERE account = $1 AND hash IS DISTINCT FROM $2 RETURNING account"),
                ["\(account)", keeping]
            ).count
        }
    }
}
