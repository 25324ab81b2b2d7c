import Foundation

/// Up to `size` connections to one database, opened when first needed and shared between
/// threads: ``withConnection(_:)`` lends one and waits while all are lent. A connection that lost
/// its server is closed instead of returned, and the next borrower opens a new one.
public final class ConnectionPool: @unchecked Sendable {
    // `@unchecked Sendable`: `idle` and `open` are behind `condition`; a lent connection is used
    // by its borrower only.
    /// The database every connection opens.
    public let url: String
    /// The most connections open at once.
    public let size: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0

    /// A pool of at most `size` connections to `url`, opened as they are first needed.
    public init(url: String, size: Int) {
        self.url = url
        self.size = max(1, size)
    }

    /// Connections open now (lent or idle).
    public var openConnections: Int { condition.withLock { open } }

    /// Runs `body` with a free connection (waiting for one); a connection that was lost is replaced.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try borrow()
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            throw error
        }
    }

    private func borrow() throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= size { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try PostgresConnection(url: url)
        } catch {
            condition.withLock {
                open -= 1
                condition.signal()
            }
            throw error
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        condition.withLock {
            if connection.isUsable {
                idle.append(connection)
            } else {
                open -= 1
            }
            condition.signal()
        }
    }

    /// Closes the idle connections; lent ones stay with their borrowers. (Closing a store calls
    /// it once nothing is lent; after a lost connection it clears the others, likely dead too.)
    public func dropIdle() {
        condition.withLock {
            open -= idle.count
            idle.removeAll()
        }
    }
}
