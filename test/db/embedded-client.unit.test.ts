import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'libsql'
import { createClient, LibsqlBatchError, LibsqlError, type Client, type InArgs, type InStatement, type ResultSet } from '@libsql/client'
import { createEmbeddedClient } from '../../runtime/db/embedded-client.ts'
import { openDb } from '../../runtime/db/client.ts'
import { users } from '../../shared/db/schema/index.ts'

// The embedded client against @libsql/client 0.18's sqlite3 client, which it mirrors, on real
// database files; `prepare` is counted on libsql's Database to see the statement cache at work.
describe('embedded client', () => {
  let dir: string
  let url: string
  const clients: Client[] = []
  const open = (client: Client) => (clients.push(client), client)
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'embedded-client-'))
    url = `file:${path.join(dir, 'test.db')}`
  })
  afterEach(() => {
    vi.restoreAllMocks()
    for (const client of clients.splice(0)) client.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const countPrepares = () => vi.spyOn(Database.prototype, 'prepare')
  const error = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e as LibsqlError)
  /** Everything a caller can observe of a result set, rows included property by property. */
  const observable = (rs: ResultSet) => ({
    columns: rs.columns,
    columnTypes: rs.columnTypes,
    rows: rs.rows.map((row) => ({ plain: { ...row }, values: Array.from(row), properties: Object.getOwnPropertyDescriptors(row) })),
    rowsAffected: rs.rowsAffected,
    lastInsertRowid: rs.lastInsertRowid,
    json: rs.toJSON(),
  })
  const outcome = async (client: Pick<Client, 'execute'>, stmt: InStatement) => {
    try {
      return { result: observable(await client.execute(stmt)) }
    } catch (e) {
      const err = e as LibsqlError
      return { error: { type: err.constructor.name, message: err.message, code: err.code, extendedCode: err.extendedCode, rawCode: err.rawCode } }
    }
  }

  it('runs selects, inserts and updates with positional and @/$/: named args', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL)')
    const inserted = await client.execute({ sql: 'INSERT INTO t (name, score) VALUES (?, ?)', args: ['ann', 1.5] })
    expect(inserted.rowsAffected).toBe(1)
    expect(inserted.lastInsertRowid).toBe(1n)
    await client.execute({ sql: 'INSERT INTO t (name, score) VALUES (:name, @score)', args: { ':name': 'bob', '@score': 2 } })
    await client.execute({ sql: 'INSERT INTO t (name, score) VALUES ($name, $score)', args: { name: 'cy', $score: 3 } })
    const updated = await client.execute({ sql: 'UPDATE t SET score = score * 10 WHERE id >= ?', args: [2] })
    expect(updated.rowsAffected).toBe(2)
    const all = await client.execute('SELECT id, name, score FROM t ORDER BY id')
    expect(all.columns).toEqual(['id', 'name', 'score'])
    expect(all.rows.map((r) => ({ ...r }))).toEqual([
      { id: 1, name: 'ann', score: 1.5 },
      { id: 2, name: 'bob', score: 20 },
      { id: 3, name: 'cy', score: 30 },
    ])
    const byName = await client.execute({ sql: 'SELECT id FROM t WHERE name = $name', args: { $name: 'bob' } })
    expect(byName.rows[0]![0]).toBe(2)
    expect(byName.rows[0]!.id).toBe(2)
    expect(byName.rows[0]!.length).toBe(1)
  })

  it('returns what @libsql/client returns for the same statements on the same file, errors included', async () => {
    const ours = open(createEmbeddedClient({ url }))
    const theirs = open(createClient({ url }))
    await ours.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score REAL, data BLOB, at INTEGER, ok BOOLEAN)')
    const stmts: { sql: string; args: InArgs }[] = [
      { sql: 'INSERT INTO t (name, score, data, at, ok) VALUES (?, ?, ?, ?, ?)', args: ['a', 1.25, new Uint8Array([1, 2, 3]).buffer, new Date(1_700_000_000_000), true] },
      { sql: 'INSERT INTO t (name, score, data, at, ok) VALUES (?, ?, ?, ?, ?)', args: ['b', null, null, 9007199254740991n, false] },
      { sql: 'INSERT INTO t (name) VALUES (?) RETURNING id, name', args: ['c'] },
      { sql: 'SELECT * FROM t ORDER BY id', args: [] },
      { sql: 'SELECT id, name AS id, score + 1, typeof(data), length(data) FROM t WHERE id > ?', args: [0] },
      { sql: 'SELECT * FROM t WHERE id = ?', args: [99] },
      { sql: 'SELECT 1 AS "__proto__", 2 AS "length", 3 AS "2", 4 AS "constructor", 5', args: [] },
      { sql: 'SELECT ?, ?', args: [1, 2] },
      { sql: 'SELECT ?, ?', args: [3] }, // a reused statement must not keep the 2 bound before
      { sql: 'SELECT :a, :b', args: { a: 1, b: 2 } },
      { sql: 'SELECT :a, :b', args: { a: 3 } },
      { sql: 'UPDATE t SET score = ? WHERE id <= ?', args: [5, 2] },
      { sql: 'UPDATE t SET score = 0 WHERE id = 99', args: [] },
      { sql: 'INSERT INTO t (name) VALUES (?)', args: ['a'] },
      { sql: 'INSERT INTO t (name) VALUES (NULL)', args: [] },
      { sql: 'SELECT at FROM t WHERE name = ?', args: ['b'] },
      { sql: 'SELECT 9007199254740993', args: [] },
      { sql: 'SELECT * FROM missing', args: [] },
      { sql: 'SELEC 1', args: [] },
      { sql: 'SELECT ?', args: [Number.NaN] },
      { sql: 'DELETE FROM t WHERE name = ?', args: ['c'] },
      { sql: 'PRAGMA user_version', args: [] },
    ]
    for (const stmt of stmts) {
      if (/^(INSERT|UPDATE|DELETE)/.test(stmt.sql)) {
        // a write happens once: @libsql/client's outcome comes from a transaction it rolls back
        const tx = await theirs.transaction('write')
        const expected = await outcome(tx, stmt)
        await tx.rollback()
        expect(await outcome(ours, stmt), stmt.sql).toEqual(expected)
      } else {
        // twice on ours, the second time from the statement cache
        const expected = await outcome(theirs, stmt)
        expect(await outcome(ours, stmt), stmt.sql).toEqual(expected)
        expect(await outcome(ours, stmt), stmt.sql).toEqual(expected)
      }
    }
    await expect(ours.execute({ sql: 'SELECT ?', args: [undefined as never] })).rejects.toThrow(TypeError)
  })

  it('converts integers as intMode says', async () => {
    const sql = 'SELECT 42, 9007199254740993'
    const bigint = open(createEmbeddedClient({ url, intMode: 'bigint' }))
    expect(Array.from((await bigint.execute(sql)).rows[0]!)).toEqual([42n, 9007199254740993n])
    const string = open(createEmbeddedClient({ url, intMode: 'string' }))
    expect(Array.from((await string.execute(sql)).rows[0]!)).toEqual(['42', '9007199254740993'])
    const number = open(createEmbeddedClient({ url }))
    await expect(number.execute(sql)).rejects.toThrow(RangeError)
  })

  it('runs a batch atomically: a failing statement rolls back the ones before it', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)')
    const results = await client.batch([{ sql: 'INSERT INTO t (name) VALUES (?)', args: ['a'] }, ['INSERT INTO t (name) VALUES (?)', ['b']], 'SELECT count(*) AS n FROM t'], 'write')
    expect(results.map((r) => r.rowsAffected)).toEqual([1, 1, 0])
    expect(results[2]!.rows[0]!.n).toBe(2)
    const failed = await error(client.batch([{ sql: 'INSERT INTO t (name) VALUES (?)', args: ['c'] }, { sql: 'INSERT INTO t (name) VALUES (?)', args: ['a'] }, 'INSERT INTO t (name) VALUES (\'d\')']))
    expect(failed).toBeInstanceOf(LibsqlBatchError)
    expect((failed as LibsqlBatchError).statementIndex).toBe(1)
    expect((failed as LibsqlBatchError).code).toBe('SQLITE_CONSTRAINT')
    expect((await client.execute('SELECT name FROM t ORDER BY name')).rows.map((r) => r.name)).toEqual(['a', 'b'])
    // and the connection went back to the pool outside any transaction
    await client.execute('INSERT INTO t (name) VALUES (\'e\')')
    const other = open(createClient({ url }))
    expect((await other.execute('SELECT count(*) AS n FROM t')).rows[0]!.n).toBe(3)
  })

  it('isolates an interactive transaction from the client\'s other calls until it commits; a rollback drops it', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)')
    const count = async () => (await client.execute('SELECT count(*) AS n FROM t')).rows[0]!.n
    const tx = await client.transaction('write')
    await tx.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['a'] })
    expect((await tx.execute('SELECT count(*) AS n FROM t')).rows[0]!.n).toBe(1)
    expect(await count()).toBe(0)
    expect(tx.closed).toBe(false)
    await tx.commit()
    expect(tx.closed).toBe(true)
    expect(await count()).toBe(1)

    const dropped = await client.transaction('write')
    await dropped.batch([{ sql: 'INSERT INTO t (name) VALUES (?)', args: ['b'] }, { sql: 'UPDATE t SET name = ?', args: ['z'] }])
    expect(await count()).toBe(1)
    await dropped.rollback()
    expect((await client.execute('SELECT name FROM t')).rows.map((r) => r.name)).toEqual(['a'])
    expect((await error(dropped.execute('SELECT 1')))?.code).toBe('TRANSACTION_CLOSED')
  })

  it('lets writes on other connections wait for an open transaction instead of failing with SQLITE_BUSY; reads run beside it', async () => {
    // Where it parts from @libsql/client: there a write beside an open transaction fails at once.
    const reference = open(createClient({ url }))
    await reference.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)')
    const held = await reference.transaction('write')
    expect((await error(reference.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['x'] })))?.code).toBe('SQLITE_BUSY')
    await held.rollback()

    const client = open(createEmbeddedClient({ url }))
    const names = async () => (await client.execute('SELECT name FROM t ORDER BY id')).rows.map((r) => r.name)
    const tx = await client.transaction('write')
    await tx.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['in the transaction'] })
    const done: string[] = []
    const write = client.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['a write'] }).then(() => done.push('write'))
    const batch = client.batch([{ sql: 'INSERT INTO t (name) VALUES (?)', args: ['a batch'] }]).then(() => done.push('batch'))
    const next = client.transaction('write').then(async (second) => {
      done.push('next transaction')
      await second.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['the next transaction'] })
      await second.commit()
    })
    // Reads do not wait: they see what was committed before the transaction.
    expect(await names()).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(done).toEqual([])
    await tx.commit()
    await Promise.all([write, batch, next])
    expect(done).toEqual(['write', 'batch', 'next transaction'])
    expect(await names()).toEqual(['in the transaction', 'a write', 'a batch', 'the next transaction'])
  })

  it('has a single connection for :memory:, and says TRANSACTION_ACTIVE while a transaction holds it', async () => {
    const client = open(createEmbeddedClient({ url: ':memory:' }))
    await client.execute('CREATE TABLE t (x)')
    const tx = await client.transaction()
    await tx.execute('INSERT INTO t VALUES (1)')
    const refused = await error(client.execute('SELECT count(*) FROM t'))
    expect(refused).toBeInstanceOf(LibsqlError)
    expect(refused!.code).toBe('TRANSACTION_ACTIVE')
    tx.close()
    // closing rolled the insert back, on the one database there is
    expect((await client.execute('SELECT count(*) AS n FROM t')).rows[0]!.n).toBe(0)
  })

  it('maps a unique-constraint violation to LibsqlError SQLITE_CONSTRAINT, cached or not', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.execute('CREATE TABLE t (name TEXT UNIQUE)')
    const insert = { sql: 'INSERT INTO t VALUES (?)', args: ['a'] }
    await client.execute(insert)
    for (let i = 0; i < 2; i++) {
      const e = await error(client.execute(insert))
      expect(e).toBeInstanceOf(LibsqlError)
      expect(e).toMatchObject({ code: 'SQLITE_CONSTRAINT', extendedCode: 'SQLITE_CONSTRAINT_UNIQUE', rawCode: 2067 })
      expect(e!.message).toContain('UNIQUE constraint failed: t.name')
    }
    expect((await client.execute({ sql: 'INSERT INTO t VALUES (?)', args: ['b'] })).rowsAffected).toBe(1)
  })

  it('runs the connection setup on every connection it opens (synchronous is a setting of the connection)', async () => {
    const synchronousOfSecondConnection = async (client: Client) => {
      const held = await client.transaction('write') // holds the first connection
      try {
        return Number((await client.execute('PRAGMA synchronous')).rows[0]![0])
      } finally {
        held.close()
      }
    }
    const FULL = 2, NORMAL = 1
    expect(await synchronousOfSecondConnection(open(createEmbeddedClient({ url })))).toBe(FULL)
    const tuned = open(createEmbeddedClient({ url }, { connectionSetup: ['PRAGMA journal_mode=WAL', 'PRAGMA synchronous=NORMAL'] }))
    expect(await synchronousOfSecondConnection(tuned)).toBe(NORMAL)
    expect((await tuned.execute('PRAGMA journal_mode')).rows[0]![0]).toBe('wal')
    expect(() => createEmbeddedClient({ url }, { connectionSetup: ['PRAGMA no_such_thing = (('] })).toThrow(LibsqlError)
  })

  it('prepares a statement once, keeps at most the bound of them, least recently used out first', async () => {
    const client = open(createEmbeddedClient({ url: ':memory:' }, { statementCacheSize: 4 }))
    const prepares = countPrepares()
    const select = (n: number) => client.execute({ sql: `SELECT ? + ${n} AS v`, args: [n] })
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 10; n++) expect((await select(n)).rows[0]!.v).toBe(2 * n)
    }
    expect(prepares).toHaveBeenCalledTimes(30) // ten texts through four places: every one evicted before its turn comes again
    prepares.mockClear()
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 4; n++) expect((await select(n)).rows[0]!.v).toBe(2 * n)
    }
    expect(prepares).toHaveBeenCalledTimes(4)
  })

  it('gives a cached statement on a dropped table the uncached error, and a recreated table\'s columns', async () => {
    const client = open(createEmbeddedClient({ url }))
    const reference = open(createClient({ url }))
    await client.execute('CREATE TABLE t (a INTEGER, b TEXT)')
    await client.execute('INSERT INTO t VALUES (1, \'x\')')
    expect((await client.execute('SELECT * FROM t')).columns).toEqual(['a', 'b'])
    await client.execute('DROP TABLE t')
    const e = await error(client.execute('SELECT * FROM t'))
    const expected = await error(reference.execute('SELECT * FROM t'))
    expect(e).toBeInstanceOf(LibsqlError)
    expect({ message: e!.message, code: e!.code, rawCode: e!.rawCode }).toEqual({ message: expected!.message, code: expected!.code, rawCode: expected!.rawCode })
    await client.execute('CREATE TABLE t (c REAL, d BLOB, e TEXT)')
    await client.execute('INSERT INTO t VALUES (1.5, NULL, \'y\')')
    const recreated = await client.execute('SELECT * FROM t')
    expect(recreated.columns).toEqual(['c', 'd', 'e'])
    expect(recreated.columnTypes).toEqual(['REAL', 'BLOB', 'TEXT'])
    expect({ ...recreated.rows[0] }).toEqual({ c: 1.5, d: null, e: 'y' })
  })

  it('sees a schema change another connection commits, even with as many columns as before', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.execute('CREATE TABLE t (a INTEGER, b INTEGER)')
    await client.execute('INSERT INTO t VALUES (1, 2)')
    const migration = await client.transaction('write') // holds one connection...
    const read = () => client.execute('SELECT * FROM t') // ...so these run on another
    expect((await read()).columns).toEqual(['a', 'b'])
    await migration.execute('DROP TABLE t')
    await migration.execute('CREATE TABLE t (x TEXT, y TEXT)')
    await migration.execute('INSERT INTO t VALUES (\'p\', \'q\')')
    expect({ ...(await read()).rows[0] }).toEqual({ a: 1, b: 2 })
    await migration.commit()
    const pin = await client.transaction('deferred') // takes the connection the migration gave back
    expect({ ...(await read()).rows[0] }).toEqual({ x: 'p', y: 'q' })
    pin.close()
  })

  it('runs executeMultiple and migrate, and refuses sync', async () => {
    const client = open(createEmbeddedClient({ url }))
    await client.executeMultiple('CREATE TABLE a (x); CREATE TABLE b (y); INSERT INTO a VALUES (1);')
    const results = await client.migrate([{ sql: 'INSERT INTO b VALUES (?)', args: [2] }, { sql: 'SELECT y FROM b', args: [] }])
    expect(results[1]!.rows[0]!.y).toBe(2)
    expect((await error(client.migrate([{ sql: 'INSERT INTO b VALUES (3)' }, { sql: 'INSERT INTO nowhere VALUES (4)' }])))).toMatchObject({ statementIndex: 1, code: 'SQLITE_ERROR' })
    expect((await client.execute('SELECT count(*) AS n FROM b')).rows[0]!.n).toBe(1)
    expect((await error(client.sync()))?.code).toBe('SYNC_NOT_SUPPORTED')
  })

  it('refuses calls once closed (CLIENT_CLOSED), rejects the ones waiting for a connection, and prepares anew after reconnect', async () => {
    const client = open(createEmbeddedClient({ url, concurrency: 1 }))
    const prepares = countPrepares()
    await client.execute('SELECT 1')
    await client.execute('SELECT 1')
    expect(prepares).toHaveBeenCalledTimes(1)
    const running = error(client.execute('SELECT 1')) // has the one connection
    const waiting = error(client.execute('SELECT 2'))
    client.close()
    expect(client.closed).toBe(true)
    expect((await running)?.code).toBe('CLIENT_CLOSED')
    expect((await waiting)?.code).toBe('CLIENT_CLOSED')
    for (const call of [client.execute('SELECT 1'), client.batch(['SELECT 1']), client.transaction(), client.executeMultiple('SELECT 1')]) {
      const e = await error(call)
      expect(e).toBeInstanceOf(LibsqlError)
      expect(e!.code).toBe('CLIENT_CLOSED')
    }
    await client.reconnect()
    expect((await client.execute('SELECT 1')).rows[0]![0]).toBe(1)
    expect(prepares).toHaveBeenCalledTimes(2) // the cache went with the closed connection
  })

  it('is what openDb uses for a file: URL, through drizzle', async () => {
    const database = openDb(url)
    try {
      expect(database.client.protocol).toBe('file')
      await database.client.execute('CREATE TABLE users (id TEXT PRIMARY KEY, account_name TEXT)')
      const prepares = countPrepares()
      for (let i = 0; i < 3; i++) expect(await database.db.select({ id: users.id }).from(users)).toEqual([])
      expect(prepares).toHaveBeenCalledTimes(1)
    } finally {
      database.close()
    }
  })
})
