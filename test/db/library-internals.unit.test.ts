import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'libsql'
import * as client from '@libsql/client'
import * as coreApi from '@libsql/core/api'
import { expandConfig, isInMemoryConfig } from '@libsql/core/config'
import { ResultSetImpl, transactionModeToBegin } from '@libsql/core/util'
import { expectPinned } from '../helpers/pinned.ts'

// runtime/db/embedded-client.ts (its parts in runtime/db/embedded/) mirrors @libsql/client 0.18's sqlite3 client on libsql and uses
// @libsql/core's internal modules: what it relies on of them, so that an upgrade that changes any
// of it fails here instead of in the database layer. Upgrading means re-reading
// @libsql/client's lib-esm/sqlite3.js against embedded-client.ts and embedded/, then the versions below.
describe('library internals the embedded client relies on', () => {
  it('runs on the exact versions it was written against', () => {
    expectPinned('@libsql/client', '0.18.0')
    expectPinned('@libsql/core', '0.18.0')
    expectPinned('libsql', '0.5.29')
  })

  it('@libsql/client re-exports the error classes of the @libsql/core it resolves', () => {
    // errors are thrown with the client's classes, result sets built with core's
    expect(client.LibsqlError).toBe(coreApi.LibsqlError)
    expect(client.LibsqlBatchError).toBe(coreApi.LibsqlBatchError)
    const cause = new Error('raw')
    const error = new client.LibsqlError('boom', 'SQLITE_CONSTRAINT', 'SQLITE_CONSTRAINT_UNIQUE', 2067, cause)
    expect(error).toMatchObject({ message: 'SQLITE_CONSTRAINT: boom', code: 'SQLITE_CONSTRAINT', extendedCode: 'SQLITE_CONSTRAINT_UNIQUE', rawCode: 2067, cause })
    const batch = new client.LibsqlBatchError('boom', 3, 'SQLITE_ERROR', 'SQLITE_ERROR', 1, cause)
    expect(batch).toBeInstanceOf(client.LibsqlError)
    expect(batch).toMatchObject({ message: 'SQLITE_ERROR: boom', statementIndex: 3, code: 'SQLITE_ERROR', extendedCode: 'SQLITE_ERROR', rawCode: 1, cause })
  })

  it('@libsql/core/config expands file: and :memory: URLs into the fields the client reads', () => {
    const file = expandConfig({ url: 'file:/var/db/device.db', concurrency: 4, timeout: 5000 }, true)
    expect(file).toMatchObject({ scheme: 'file', path: '/var/db/device.db', authority: undefined, syncUrl: undefined, intMode: 'number', concurrency: 4, timeout: 5000 })
    for (const key of ['authToken', 'encryptionKey', 'remoteEncryptionKey']) expect(file).toHaveProperty(key)
    expect(expandConfig({ url: 'file:/x.db' }, true).concurrency).toBe(20)
    expect(expandConfig({ url: 'file:///x.db' }, true).authority).toEqual({ host: '', port: undefined, userinfo: undefined })
    expect(expandConfig({ url: 'file://u:p@host:7/x.db' }, true).authority).toEqual({ host: 'host', port: 7, userinfo: { username: 'u', password: 'p' } })
    expect(expandConfig({ url: 'libsql://host' }, true).scheme).toBe('https')
    const memory = expandConfig({ url: ':memory:' }, true)
    expect(memory).toMatchObject({ scheme: 'file', path: ':memory:' })
    expect(isInMemoryConfig(memory)).toBe(true)
    expect(expandConfig({ url: 'file::memory:?cache=shared' }, true).path).toBe(':memory:?cache=shared')
    expect(isInMemoryConfig(file)).toBe(false)
  })

  it('@libsql/core/util builds result sets from positional arguments and names the BEGIN of each mode', () => {
    const rs = new ResultSetImpl(['n'], ['INTEGER'], [], 2, 7n)
    expect(rs).toMatchObject({ columns: ['n'], columnTypes: ['INTEGER'], rows: [], rowsAffected: 2, lastInsertRowid: 7n })
    expect(rs.toJSON()).toEqual({ columns: ['n'], columnTypes: ['INTEGER'], rows: [], rowsAffected: 2, lastInsertRowid: '7' })
    expect(['write', 'read', 'deferred'].map((mode) => transactionModeToBegin(mode as client.TransactionMode))).toEqual(['BEGIN IMMEDIATE', 'BEGIN TRANSACTION READONLY', 'BEGIN DEFERRED'])
  })

  describe('libsql', () => {
    let dir: string
    let db: Database.Database
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'libsql-internals-'))
      db = new Database(path.join(dir, 'test.db'), { timeout: 1000 })
    })
    afterEach(() => {
      if (db.open) db.close()
      rmSync(dir, { recursive: true, force: true })
    })

    it('has the connection API the client uses: exec, prepare, open, inTransaction, close', () => {
      // the embedded client's tests count prepares by spying on the prototype
      expect(Object.hasOwn(Database.prototype, 'prepare')).toBe(true)
      expect(db.open).toBe(true)
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)')
      expect(db.inTransaction).toBe(false)
      db.exec('BEGIN')
      expect(db.inTransaction).toBe(true)
      db.prepare('ROLLBACK').run()
      expect(db.inTransaction).toBe(false)
      db.close()
      expect(db.open).toBe(false)
    })

    it('has the statement API the client uses: safeIntegers, reader, raw, run, all, columns', () => {
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, big INTEGER)')
      const insert = db.prepare('INSERT INTO t (name, big) VALUES (?, ?)')
      insert.safeIntegers(true)
      expect(insert.reader).toBe(false)
      const info = insert.run(['ann', 9007199254740993n])
      expect(info.changes).toBe(1)
      expect(BigInt(info.lastInsertRowid)).toBe(1n)
      expect(db.prepare('INSERT INTO t (name) VALUES (:name)').run({ name: 'bob' }).changes).toBe(1)
      const select = db.prepare('SELECT id, name, big FROM t WHERE id >= ? ORDER BY id')
      select.safeIntegers(true)
      expect(select.reader).toBe(true)
      select.raw(true)
      expect(select.all([1])).toEqual([[1n, 'ann', 9007199254740993n], [2n, 'bob', null]])
      expect(select.columns().map((col) => ({ name: col.name, type: col.type }))).toEqual([
        { name: 'id', type: 'INTEGER' },
        { name: 'name', type: 'TEXT' },
        { name: 'big', type: 'INTEGER' },
      ])
    })

    it('throws SqliteError with the code and the extended raw code that the client maps', () => {
      db.exec('CREATE TABLE t (name TEXT UNIQUE)')
      db.exec("INSERT INTO t VALUES ('a')")
      let thrown: unknown
      try {
        db.prepare('INSERT INTO t VALUES (?)').run(['a'])
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(Database.SqliteError)
      expect(thrown).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE', rawCode: 2067 })
      expect(() => db.exec('NOT SQL')).toThrow(Database.SqliteError)
    })
  })
})
