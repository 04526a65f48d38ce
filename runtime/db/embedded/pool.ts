import { LibsqlError } from '@libsql/client'
import type { Connection, SchemaVersion } from './connection.ts'

/**
 * Owns a client's connections: every operation borrows one for the duration of the call, a
 * transaction for its lifetime (as @libsql/client's ConnectionPool).
 */
export class ConnectionPool {
  readonly schema: SchemaVersion = { value: 0 }
  #idle: Connection[] = []
  #borrowed = new Set<Connection>()
  /** the subset of `#borrowed` held by an open transaction */
  #heldByTransaction = new Set<Connection>()
  #waiters: { resolve(conn: Connection): void; reject(e: unknown): void }[] = []
  #closed = false

  constructor(
    private readonly open: (schema: SchemaVersion) => Connection,
    private readonly maxConnections: number,
  ) {}

  // A transaction holds its connection until the caller commits or rolls back, so if transactions
  // hold every connection there is nothing to wait for: say so instead of hanging.
  acquire(forTransaction = false): Promise<Connection> {
    if (!this.#closed && this.#idle.length === 0 && this.#borrowed.size >= this.maxConnections) {
      if (this.#heldByTransaction.size >= this.maxConnections) {
        return Promise.reject(
          new LibsqlError(
            this.maxConnections === 1
              ? 'This client has a single connection, which an open transaction is holding. ' +
                  'In-memory databases and embedded replicas cannot have more than one. ' +
                  'Commit or roll back the transaction before using the client again.'
              : `All ${this.maxConnections} of this client's connections are held by open transactions. ` +
                  'Commit or roll back one before using the client again, or raise `concurrency`.',
            'TRANSACTION_ACTIVE',
          ),
        )
      }
      return new Promise((resolve, reject) =>
        this.#waiters.push({
          resolve: (conn) => {
            if (forTransaction) this.#heldByTransaction.add(conn)
            resolve(conn)
          },
          reject,
        }),
      )
    }
    try {
      return Promise.resolve(this.acquireSync(forTransaction))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  /** Borrows without waiting: only valid while the pool cannot be at its limit. */
  acquireSync(forTransaction = false): Connection {
    if (this.#closed) throw new LibsqlError('The client is closed', 'CLIENT_CLOSED')
    const conn = this.#idle.pop() ?? this.open(this.schema)
    this.#borrowed.add(conn)
    if (forTransaction) this.#heldByTransaction.add(conn)
    return conn
  }

  release(conn: Connection): void {
    this.#borrowed.delete(conn)
    this.#heldByTransaction.delete(conn)
    if (conn.db.open) {
      try {
        conn.rollbackIfInTransaction()
      } catch {
        conn.close() // unusable: drop it rather than reuse it
        return
      }
    }
    if (this.#closed || !conn.db.open) {
      conn.close()
      return
    }
    const waiter = this.#waiters.shift()
    if (waiter !== undefined) {
      this.#borrowed.add(conn)
      waiter.resolve(conn)
    } else {
      this.#idle.push(conn)
    }
  }

  close(): void {
    this.#closed = true
    for (const conn of [...this.#idle, ...this.#borrowed]) conn.close()
    this.#idle = []
    this.#borrowed.clear()
    this.#heldByTransaction.clear()
    const waiters = this.#waiters
    this.#waiters = []
    for (const waiter of waiters) waiter.reject(new LibsqlError('The client is closed', 'CLIENT_CLOSED'))
  }

  reopen(): void {
    this.close()
    this.#closed = false
  }
}
