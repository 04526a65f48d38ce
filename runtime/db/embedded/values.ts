import Database from 'libsql'
import { Buffer } from 'node:buffer'
import { LibsqlError } from '@libsql/client'
import type { InArgs, InValue, IntMode, Row } from '@libsql/client'

/** Values between @libsql/client's types and libsql's, and SQLite's errors as LibsqlError (as 0.18's sqlite3 client converts them). */
export type SqlArgs = unknown[] | Record<string, unknown>

export function argsToSql(args: InArgs | undefined, intMode: IntMode): SqlArgs {
  if (args === undefined) return {}
  if (Array.isArray(args)) return args.map((value) => valueToSql(value, intMode))
  const named: Record<string, unknown> = {}
  for (const name in args) {
    const argName = name[0] === '@' || name[0] === '$' || name[0] === ':' ? name.substring(1) : name
    named[argName] = valueToSql(args[name], intMode)
  }
  return named
}

export function rowFromSql(sqlRow: unknown[], columns: string[], intMode: IntMode): Row {
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

export function mapSqliteError(e: unknown): unknown {
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
