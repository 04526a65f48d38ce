import Database from 'libsql'
import type { InStatement, IntMode, ResultSet } from '@libsql/client'
import { ResultSetImpl } from '@libsql/core/util'
import { argsToSql, mapSqliteError, rowFromSql, type SqlArgs } from './values.ts'

type Statement = Database.Statement

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
export interface SchemaVersion {
  value: number
}

/** One libsql connection and its statement cache (least recently used first). */
export class Connection {
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
