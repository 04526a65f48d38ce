/**
 * A `Client` for embedded databases (`file:` URLs and `:memory:`) that mirrors @libsql/client
 * 0.18's sqlite3 client (lib-esm/sqlite3.js: connection pool, transactions, value conversions,
 * error mapping) and adds a bounded cache of prepared statements to each connection.
 *
 * Why the cache: that client prepares every statement anew, probes it with raw() and reads its
 * columns() twice, and for an 18-column row libsql's prepare costs ~40 µs and columns() ~80 µs.
 * Measured on a WAL file (synchronous=NORMAL), a by-id select of an 18-column row took ~300 µs
 * through @libsql/client and ~50 µs here, a single-row update ~110 and ~40 µs. The device runs
 * ~10 statements per upload+detect request pair, and that overhead was the largest part of the
 * HTTP layer's CPU cost. A cached execute only binds, runs and converts the rows.
 *
 * Relied on, beyond the typed `Client` interface: @libsql/core's internal modules (`config`:
 * expandConfig's fields and defaults, isInMemoryConfig; `util`: ResultSetImpl's constructor,
 * transactionModeToBegin), the LibsqlError/LibsqlBatchError constructors, libsql's Database and
 * Statement API (inTransaction, open, safeIntegers, reader, raw, columns, SqliteError's code and
 * rawCode) and the behaviour of 0.18's sqlite3 client. So @libsql/client, @libsql/core and libsql
 * are pinned to exact versions in package.json, and test/db/library-internals.unit.test.ts fails when
 * an upgrade changes any of it (test/db/embedded-client.unit.test.ts compares both clients).
 */
import Database from 'libsql'
import { LibsqlError } from '@libsql/client'
import type { Client, Config, InArgs, InStatement, IntMode, Replicated, ResultSet, Transaction, TransactionMode } from '@libsql/client'
import { expandConfig, isInMemoryConfig } from '@libsql/core/config'
import { transactionModeToBegin } from '@libsql/core/util'
import { Connection, type SchemaVersion } from './embedded/connection.ts'
import { ConnectionPool } from './embedded/pool.ts'
import { EmbeddedTransaction, executeBatch, inTransaction, type BatchStatement } from './embedded/transaction.ts'
import { mapSqliteError } from './embedded/values.ts'
import { READS_ONLY, WriteGate } from './embedded/write-gate.ts'

/** Prepared statements kept per connection; each costs a few KB of SQLite memory. */
const STATEMENT_CACHE_SIZE = 128

export interface EmbeddedOptions {
  /** Statements kept prepared per connection. */
  statementCacheSize?: number
  /** SQL run on every connection as it opens: per-connection settings such as `PRAGMA synchronous`. */
  connectionSetup?: string[]
}

export function createEmbeddedClient(config: Config, { statementCacheSize = STATEMENT_CACHE_SIZE, connectionSetup = [] }: EmbeddedOptions = {}): Client {
  const expanded = expandConfig(config, true)
  if (expanded.scheme !== 'file') {
    throw new LibsqlError(`URL scheme ${JSON.stringify(expanded.scheme + ':')} is not supported by the embedded client`, 'URL_SCHEME_NOT_SUPPORTED')
  }
  const authority = expanded.authority
  if (authority !== undefined) {
    const host = authority.host.toLowerCase()
    if (host !== '' && host !== 'localhost') {
      throw new LibsqlError(
        `Invalid host in file URL: ${JSON.stringify(authority.host)}. ` +
          'A "file:" URL with an absolute path should start with one slash ("file:/absolute/path.db") or with three slashes ("file:///absolute/path.db").',
        'URL_INVALID',
      )
    }
    if (authority.port !== undefined) throw new LibsqlError('File URL cannot have a port', 'URL_INVALID')
    if (authority.userinfo !== undefined) throw new LibsqlError('File URL cannot have username and password', 'URL_INVALID')
  }
  if (expanded.syncUrl) throw new LibsqlError('Embedded replicas (syncUrl) are not supported by the embedded client', 'URL_INVALID')
  const isInMemory = isInMemoryConfig(expanded)
  // SQLite only reads the :memory: query parameters (cache=shared) from a file: URI
  const path = isInMemory ? `${expanded.scheme}:${expanded.path}` : expanded.path
  // an in-memory database exists only on the connection that opened it
  const maxConnections = isInMemory ? 1 : Math.max(1, expanded.concurrency)
  const options = { authToken: expanded.authToken, encryptionKey: expanded.encryptionKey, remoteEncryptionKey: expanded.remoteEncryptionKey, timeout: expanded.timeout }
  const open = (schema: SchemaVersion) => {
    const database = new Database(path, options)
    try {
      for (const setup of connectionSetup) database.exec(setup)
    } catch (e) {
      database.close()
      throw mapSqliteError(e)
    }
    return new Connection(database, schema, statementCacheSize)
  }
  const pool = new ConnectionPool(open, maxConnections)
  // fail fast if the database cannot be opened at all
  const conn = pool.acquireSync()
  try {
    conn.execute('SELECT 1 AS checkThatTheDatabaseCanBeOpened', expanded.intMode)
  } catch (e) {
    pool.close()
    throw e
  }
  pool.release(conn)
  return new EmbeddedClient(pool, expanded.intMode)
}

/**
 * Beyond 0.18's sqlite3 client: writes from different connections take turns (WriteGate)
 * instead of failing with SQLITE_BUSY while a transaction is open.
 */
class EmbeddedClient implements Client {
  closed = false
  readonly protocol = 'file'
  readonly #gate = new WriteGate()

  constructor(
    private readonly pool: ConnectionPool,
    private readonly intMode: IntMode,
  ) {}

  execute(stmt: InStatement): Promise<ResultSet>
  execute(sql: string, args?: InArgs): Promise<ResultSet>
  async execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const stmt = typeof stmtOrSql === 'string' ? { sql: stmtOrSql, args: args || [] } : stmtOrSql
    return this.#withConnection((conn) => conn.execute(stmt, this.intMode), !READS_ONLY.test(stmt.sql))
  }

  async batch(stmts: BatchStatement[], mode: TransactionMode = 'deferred'): Promise<ResultSet[]> {
    // `release` rolls back whatever a failed batch left open
    return this.#withConnection((conn) => {
      conn.execute(transactionModeToBegin(mode), this.intMode)
      const resultSets = executeBatch(() => inTransaction(conn), stmts, this.intMode)
      conn.execute('COMMIT', this.intMode)
      return resultSets
    }, mode !== 'read')
  }

  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#withConnection((conn) => {
      try {
        conn.execute('PRAGMA foreign_keys=off', this.intMode)
        conn.execute(transactionModeToBegin('deferred'), this.intMode)
        const resultSets = executeBatch(() => inTransaction(conn), stmts, this.intMode)
        conn.execute('COMMIT', this.intMode)
        return resultSets
      } finally {
        if (conn.db.inTransaction) conn.execute('ROLLBACK', this.intMode)
        conn.execute('PRAGMA foreign_keys=on', this.intMode)
      }
    }, true)
  }

  async transaction(mode: TransactionMode = 'write'): Promise<Transaction> {
    this.#checkNotClosed()
    // A transaction that may write holds the gate until it ends.
    const ungate = mode === 'read' ? () => {} : await this.#gate.hold()
    let conn: Connection | undefined
    try {
      conn = await this.pool.acquire(true)
      this.#checkUsable(conn)
      conn.execute(transactionModeToBegin(mode), this.intMode)
    } catch (e) {
      if (conn) this.pool.release(conn)
      ungate()
      throw e
    }
    return new EmbeddedTransaction(conn, this.intMode, (used) => {
      this.pool.release(used)
      ungate()
    })
  }

  async executeMultiple(sql: string): Promise<void> {
    return this.#withConnection((conn) => conn.exec(sql), true)
  }

  async sync(): Promise<Replicated> {
    throw new LibsqlError('sync() needs an embedded replica (syncUrl), which the embedded client does not support', 'SYNC_NOT_SUPPORTED')
  }

  async reconnect(): Promise<void> {
    this.pool.reopen()
    this.closed = false
  }

  close(): void {
    this.closed = true
    this.pool.close()
  }

  /** `work` on a borrowed connection; a `write` waits for the gate while a transaction holds it (checked again right before it runs). */
  async #withConnection<T>(work: (conn: Connection) => T, write = false): Promise<T> {
    this.#checkNotClosed()
    if (write && this.#gate.busy) return this.#gate.run(() => this.#withConnection(work))
    const conn = await this.pool.acquire()
    if (write && this.#gate.busy) {
      this.pool.release(conn)
      return this.#gate.run(() => this.#withConnection(work))
    }
    try {
      this.#checkUsable(conn)
      return work(conn)
    } finally {
      this.pool.release(conn)
    }
  }

  #checkNotClosed(): void {
    if (this.closed) throw new LibsqlError('The client is closed', 'CLIENT_CLOSED')
  }

  // close() and reconnect() can land between a borrow and the work it was borrowed for
  #checkUsable(conn: Connection): void {
    this.#checkNotClosed()
    if (!conn.db.open) throw new LibsqlError('The connection was closed while this operation was in flight', 'CLIENT_CLOSED')
  }
}
