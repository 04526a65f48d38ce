import { LibsqlBatchError, LibsqlError } from '@libsql/client'
import type { InArgs, InStatement, IntMode, ResultSet, Transaction } from '@libsql/client'
import type { Connection } from './connection.ts'

export type BatchStatement = InStatement | [string, InArgs?]

/** A statement of a batch can end its transaction (ROLLBACK, or an error that rolls back). */
export function inTransaction(conn: Connection): Connection {
  if (!conn.db.inTransaction) throw new LibsqlError('The transaction has been rolled back', 'TRANSACTION_CLOSED')
  return conn
}

export class EmbeddedTransaction implements Transaction {
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
export function executeBatch(connection: () => Connection, stmts: BatchStatement[], intMode: IntMode): ResultSet[] {
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
