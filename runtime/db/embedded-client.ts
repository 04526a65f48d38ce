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
import { Buffer } from 'node:buffer'
import { LibsqlBatchError, LibsqlError } from '@libsql/client'
import type { Client, Config, InArgs, InStatement, InValue, IntMode, Replicated, ResultSet, Row, Transaction, TransactionMode } from '@libsql/client'
import { expandConfig, isInMemoryConfig } from '@libsql/core/config'
import { ResultSetImpl, transactionModeToBegin } from '@libsql/core/util'

/** Prepared statements kept per connection; each costs a few KB of SQLite memory. */
export const STATEMENT_CACHE_SIZE = 128

type Statement = Database.Statement
type SqlArgs = unknown[] | Record<string, unknown>

interface CachedStatement {
  stmt: Statement
  reader: boolean
  /** A write that is not plain DML (CREATE, DROP, ALTER, PRAGMA...): it may change the schema. */
  schemaChange: boolean
  columns: string[]
  columnTypes: string[]
  /** The pool's schema version when `columns` were read. */
  columnsVersion: number
  /** Most positional args bound so far, and whether named args were: see `reusable`. */
  positional: number
  named: boolean
  busy: boolean
}

const PLAIN_DML = /^\s*(INSERT|UPDATE|DELETE|REPLACE|WITH|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i

/** Bumped whenever any connection of a pool may have changed the schema. */
interface SchemaVersion {
  value: number
}

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

/** One libsql connection and its statement cache (least recently used first). */
class Connection {
  #cache = new Map<string, CachedStatement>()
  /** Set by a schema change inside a transaction, whose effect others see only once it ends. */
  #schemaPending = false

  constructor(
    readonly db: Database.Database,
    private readonly schema: SchemaVersion,
    private readonly cacheSize: number,
  ) {}

  execute(stmt: InStatement, intMode: IntMode): ResultSet {
    const sql = typeof stmt === 'string' ? stmt : stmt.sql
    const args = typeof stmt === 'string' ? [] : argsToSql(stmt.args, intMode)
    let entry = this.#cache.get(sql)
    try {
      if (entry === undefined || !reusable(entry, args)) {
        entry = this.#prepare(sql)
        this.#cache.delete(sql)
        this.#cache.set(sql, entry)
        if (this.#cache.size > this.cacheSize) this.#cache.delete(this.#cache.keys().next().value!)
      } else if (entry.busy) {
        entry = this.#prepare(sql) // used once, outside the cache
      } else {
        this.#cache.delete(sql)
        this.#cache.set(sql, entry)
      }
      noteBinding(entry, args)
      entry.busy = true
      try {
        return this.#run(entry, args, intMode)
      } finally {
        entry.busy = false
      }
    } catch (e) {
      // whatever failed (a dropped table, a constraint), the next execute starts from a fresh prepare
      if (entry !== undefined && this.#cache.get(sql) === entry) this.#cache.delete(sql)
      throw mapSqliteError(e)
    } finally {
      if (entry?.schemaChange) this.#schemaPending = true
      this.#publishSchemaChange()
    }
  }

  exec(sql: string): void {
    try {
      this.db.exec(sql)
    } catch (e) {
      throw mapSqliteError(e)
    } finally {
      this.#schemaPending = true
      this.#publishSchemaChange()
    }
  }

  /** A connection must never go back into the pool mid-transaction. Throws if it cannot roll back. */
  rollbackIfInTransaction(): void {
    if (!this.db.inTransaction) return
    this.db.prepare('ROLLBACK').run()
    this.#publishSchemaChange()
  }

  close(): void {
    this.#cache.clear()
    try {
      if (this.db.open) this.db.close()
    } catch {
      // nothing useful to do while tearing down
    }
  }

  #prepare(sql: string): CachedStatement {
    const stmt = this.db.prepare(sql)
    stmt.safeIntegers(true)
    const reader = stmt.reader
    if (reader) stmt.raw(true)
    return { stmt, reader, schemaChange: !reader && !PLAIN_DML.test(sql), columns: [], columnTypes: [], columnsVersion: -1, positional: 0, named: false, busy: false }
  }

  #run(entry: CachedStatement, args: SqlArgs, intMode: IntMode): ResultSet {
    if (!entry.reader) {
      const info = entry.stmt.run(args)
      return new ResultSetImpl([], [], [], info.changes, BigInt(info.lastInsertRowid))
    }
    const sqlRows = entry.stmt.all(args) as unknown[][]
    // SQLite re-prepares a statement whose schema changed when it runs, so read the columns after
    // that; a change made through another client (another process) is noticed by its column count
    if (entry.columnsVersion !== this.schema.value || (sqlRows.length > 0 && sqlRows[0].length !== entry.columns.length)) {
      const columns = entry.stmt.columns()
      entry.columns = columns.map((col) => col.name)
      entry.columnTypes = columns.map((col) => col.type ?? '')
      entry.columnsVersion = this.schema.value
    }
    const rows = sqlRows.map((sqlRow) => rowFromSql(sqlRow, entry.columns, intMode))
    // like @libsql/client: a statement that returns rows reports neither
    return new ResultSetImpl(entry.columns.slice(), entry.columnTypes.slice(), rows, 0, undefined)
  }

  /** While a schema change is uncommitted, every statement of this connection bumps the version once more. */
  #publishSchemaChange(): void {
    if (!this.#schemaPending) return
    this.schema.value++
    if (!this.db.open || !this.db.inTransaction) this.#schemaPending = false
  }
}

/**
 * SQLite keeps a parameter's value until it is rebound, and libsql rebinds only the positional
 * args it is given (named args rebind every named parameter), so a statement bound with fewer
 * positional args than before, or with the other kind, would see an earlier call's values where
 * a fresh statement sees NULL.
 */
function reusable(entry: CachedStatement, args: SqlArgs): boolean {
  return Array.isArray(args) ? !entry.named && args.length >= entry.positional : entry.positional === 0
}

function noteBinding(entry: CachedStatement, args: SqlArgs): void {
  if (Array.isArray(args)) entry.positional = Math.max(entry.positional, args.length)
  else entry.named = true
}

/**
 * Owns a client's connections: every operation borrows one for the duration of the call, a
 * transaction for its lifetime (as @libsql/client's ConnectionPool).
 */
class ConnectionPool {
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

type BatchStatement = InStatement | [string, InArgs?]

class EmbeddedClient implements Client {
  closed = false
  readonly protocol = 'file'

  constructor(
    private readonly pool: ConnectionPool,
    private readonly intMode: IntMode,
  ) {}

  execute(stmt: InStatement): Promise<ResultSet>
  execute(sql: string, args?: InArgs): Promise<ResultSet>
  async execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const stmt = typeof stmtOrSql === 'string' ? { sql: stmtOrSql, args: args || [] } : stmtOrSql
    return this.#withConnection((conn) => conn.execute(stmt, this.intMode))
  }

  async batch(stmts: BatchStatement[], mode: TransactionMode = 'deferred'): Promise<ResultSet[]> {
    // `release` rolls back whatever a failed batch left open
    return this.#withConnection((conn) => {
      conn.execute(transactionModeToBegin(mode), this.intMode)
      const resultSets = executeBatch(() => inTransaction(conn), stmts, this.intMode)
      conn.execute('COMMIT', this.intMode)
      return resultSets
    })
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
    })
  }

  async transaction(mode: TransactionMode = 'write'): Promise<Transaction> {
    this.#checkNotClosed()
    const conn = await this.pool.acquire(true)
    try {
      this.#checkUsable(conn)
      conn.execute(transactionModeToBegin(mode), this.intMode)
    } catch (e) {
      this.pool.release(conn)
      throw e
    }
    return new EmbeddedTransaction(conn, this.intMode, (used) => this.pool.release(used))
  }

  async executeMultiple(sql: string): Promise<void> {
    return this.#withConnection((conn) => conn.exec(sql))
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

  async #withConnection<T>(work: (conn: Connection) => T): Promise<T> {
    this.#checkNotClosed()
    const conn = await this.pool.acquire()
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

/** A statement of a batch can end its transaction (ROLLBACK, or an error that rolls back). */
function inTransaction(conn: Connection): Connection {
  if (!conn.db.inTransaction) throw new LibsqlError('The transaction has been rolled back', 'TRANSACTION_CLOSED')
  return conn
}

class EmbeddedTransaction implements Transaction {
  /** null once the connection has gone back to the pool */
  #conn: Connection | null

  constructor(
    conn: Connection,
    private readonly intMode: IntMode,
    private readonly release: (conn: Connection) => void,
  ) {
    this.#conn = conn
  }

  execute(stmt: InStatement): Promise<ResultSet>
  execute(sql: string, args?: InArgs): Promise<ResultSet>
  async execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const stmt = typeof stmtOrSql === 'string' ? { sql: stmtOrSql, args: args || [] } : stmtOrSql
    return this.#connection().execute(stmt, this.intMode)
  }

  async batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return executeBatch(() => this.#connection(), stmts, this.intMode)
  }

  async executeMultiple(sql: string): Promise<void> {
    this.#connection().exec(sql)
  }

  async rollback(): Promise<void> {
    const conn = this.#conn
    if (conn === null || !conn.db.open) return this.#settle()
    try {
      this.#checkNotClosed()
      conn.execute('ROLLBACK', this.intMode)
    } finally {
      this.#settle()
    }
  }

  async commit(): Promise<void> {
    try {
      this.#connection().execute('COMMIT', this.intMode)
    } finally {
      this.#settle()
    }
  }

  close(): void {
    const conn = this.#conn
    if (conn === null) return
    try {
      // client.close() may have closed the connection, and reading inTransaction on a closed database aborts the process
      if (conn.db.open && conn.db.inTransaction) conn.execute('ROLLBACK', this.intMode)
    } finally {
      this.#settle()
    }
  }

  get closed(): boolean {
    const conn = this.#conn
    return conn === null || !conn.db.open || !conn.db.inTransaction
  }

  #settle(): void {
    const conn = this.#conn
    if (conn === null) return
    this.#conn = null
    this.release(conn)
  }

  #connection(): Connection {
    this.#checkNotClosed()
    return this.#conn!
  }

  #checkNotClosed(): void {
    if (this.closed) throw new LibsqlError('The transaction is closed', 'TRANSACTION_CLOSED')
  }
}

/**
 * Runs `stmts` in order on the connection `connection()` returns (it throws once the transaction
 * has ended); the first failure becomes a LibsqlBatchError naming its index.
 */
function executeBatch(connection: () => Connection, stmts: BatchStatement[], intMode: IntMode): ResultSet[] {
  const resultSets: ResultSet[] = []
  for (let i = 0; i < stmts.length; i++) {
    try {
      const stmt = stmts[i]
      resultSets.push(connection().execute(Array.isArray(stmt) ? { sql: stmt[0], args: stmt[1] || [] } : stmt, intMode))
    } catch (e) {
      if (e instanceof LibsqlBatchError) throw e
      if (e instanceof LibsqlError) throw new LibsqlBatchError(e.message, i, e.code, e.extendedCode, e.rawCode, e.cause instanceof Error ? e.cause : undefined)
      throw e
    }
  }
  return resultSets
}

function argsToSql(args: InArgs | undefined, intMode: IntMode): SqlArgs {
  if (args === undefined) return {}
  if (Array.isArray(args)) return args.map((value) => valueToSql(value, intMode))
  const named: Record<string, unknown> = {}
  for (const name in args) {
    const argName = name[0] === '@' || name[0] === '$' || name[0] === ':' ? name.substring(1) : name
    named[argName] = valueToSql(args[name], intMode)
  }
  return named
}

function rowFromSql(sqlRow: unknown[], columns: string[], intMode: IntMode): Row {
  const row = {}
  // the index properties and `length` are not enumerable
  Object.defineProperty(row, 'length', { value: sqlRow.length })
  for (let i = 0; i < sqlRow.length; ++i) {
    const value = valueFromSql(sqlRow[i], intMode)
    Object.defineProperty(row, i, { value })
    const column = columns[i]
    if (Object.hasOwn(row, column)) continue
    // an assignment makes the same enumerable, writable, configurable property as @libsql/client's
    // defineProperty in half the time, except for `__proto__`, which it would take as the prototype
    if (column === '__proto__') Object.defineProperty(row, column, { value, enumerable: true, configurable: true, writable: true })
    else (row as Record<string, unknown>)[column] = value
  }
  return row as Row
}

const minSafeBigint = -9007199254740991n
const maxSafeBigint = 9007199254740991n
const minInteger = -9223372036854775808n
const maxInteger = 9223372036854775807n

function valueFromSql(sqlValue: unknown, intMode: IntMode): unknown {
  if (typeof sqlValue === 'bigint') {
    if (intMode === 'number') {
      if (sqlValue < minSafeBigint || sqlValue > maxSafeBigint) throw new RangeError('Received integer which cannot be safely represented as a JavaScript number')
      return Number(sqlValue)
    }
    if (intMode === 'bigint') return sqlValue
    if (intMode === 'string') return '' + sqlValue
    throw new Error('Invalid value for IntMode')
  }
  if (sqlValue instanceof Buffer) return sqlValue.buffer
  return sqlValue
}

function valueToSql(value: InValue, intMode: IntMode): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('Only finite numbers (not Infinity or NaN) can be passed as arguments')
    return value
  }
  if (typeof value === 'bigint') {
    if (value < minInteger || value > maxInteger) throw new RangeError('bigint is too large to be represented as a 64-bit integer and passed as argument')
    return value
  }
  if (typeof value === 'boolean') return intMode === 'bigint' ? (value ? 1n : 0n) : intMode === 'string' ? (value ? '1' : '0') : value ? 1 : 0
  if (value instanceof ArrayBuffer) return Buffer.from(value)
  if (value instanceof Date) return value.valueOf()
  if (value === undefined) throw new TypeError('undefined cannot be passed as argument to the database')
  return value
}

function mapSqliteError(e: unknown): unknown {
  if (e instanceof Database.SqliteError) {
    const rawCode = (e as InstanceType<typeof Database.SqliteError>).rawCode
    return new LibsqlError(e.message, mapToBaseCode(rawCode), e.code, rawCode, e)
  }
  return e
}

/** SQLite's extended codes are base | (extended << 8). */
function mapToBaseCode(rawCode: number | undefined): string {
  if (rawCode === undefined) return 'SQLITE_UNKNOWN'
  const baseCode = rawCode & 0xff
  return SQLITE_ERROR_CODES[baseCode] ?? `SQLITE_UNKNOWN_${baseCode.toString()}`
}

const SQLITE_ERROR_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR', 2: 'SQLITE_INTERNAL', 3: 'SQLITE_PERM', 4: 'SQLITE_ABORT', 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY', 9: 'SQLITE_INTERRUPT', 10: 'SQLITE_IOERR', 11: 'SQLITE_CORRUPT', 12: 'SQLITE_NOTFOUND', 13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN', 15: 'SQLITE_PROTOCOL', 16: 'SQLITE_EMPTY', 17: 'SQLITE_SCHEMA', 18: 'SQLITE_TOOBIG', 19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH', 21: 'SQLITE_MISUSE', 22: 'SQLITE_NOLFS', 23: 'SQLITE_AUTH', 24: 'SQLITE_FORMAT', 25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB', 27: 'SQLITE_NOTICE', 28: 'SQLITE_WARNING',
}
