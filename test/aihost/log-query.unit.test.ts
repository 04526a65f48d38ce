import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { queryLogFiles } from '../../runtime/logs/query.ts'

// QueryLogs over rotated files: pages newest first, keeping only a page's worth of lines in memory.
describe('queryLogFiles', () => {
  let dir: string
  const entry = (n: number, extra: Record<string, unknown> = {}) => JSON.stringify({ level: n % 5 === 0 ? 50 : 30, time: 1_000 + n, msg: `entry ${n}`, ...extra })

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'log-query-'))
    // pino-roll numbers files upwards: device.1.log is the oldest.
    writeFileSync(path.join(dir, 'device.1.log'), Array.from({ length: 12 }, (_, n) => entry(n)).join('\n') + '\n')
    writeFileSync(path.join(dir, 'device.2.log'), [
      ...Array.from({ length: 13 }, (_, n) => entry(12 + n)),
      entry(25, { err: { type: 'Error', message: 'Disk Quota exceeded on /data' } }),
      '{"level":30,"time":', // a line cut by a crash
    ].join('\n') + '\n')
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const msgs = (rows: Record<string, unknown>[]) => rows.map((r) => r.msg)

  it('pages newest first across files, with the total of all matches', async () => {
    const first = await queryLogFiles(dir, { pageNo: 1, pageSize: 4 })
    expect(first).toMatchObject({ total: 26, pageNo: 1, pageSize: 4, files: 2 })
    expect(msgs(first.rows)).toEqual(['entry 25', 'entry 24', 'entry 23', 'entry 22'])
    const third = await queryLogFiles(dir, { pageNo: 3, pageSize: 4 })
    expect(msgs(third.rows)).toEqual(['entry 17', 'entry 16', 'entry 15', 'entry 14'])
    const last = await queryLogFiles(dir, { pageNo: 7, pageSize: 4 })
    expect(msgs(last.rows)).toEqual(['entry 1', 'entry 0'])
    expect((await queryLogFiles(dir, { pageNo: 8, pageSize: 4 })).rows).toEqual([])
  })

  it('filters by level and time, and finds text inside nested fields such as err', async () => {
    const errors = await queryLogFiles(dir, { pageNo: 1, pageSize: 50, level: 'error' })
    expect(msgs(errors.rows)).toEqual(['entry 25', 'entry 20', 'entry 15', 'entry 10', 'entry 5', 'entry 0'])
    const window = await queryLogFiles(dir, { pageNo: 1, pageSize: 50, from: 1_010, to: 1_013 })
    expect(msgs(window.rows)).toEqual(['entry 13', 'entry 12', 'entry 11', 'entry 10'])
    const quota = await queryLogFiles(dir, { pageNo: 1, pageSize: 50, text: 'disk quota' })
    expect(msgs(quota.rows)).toEqual(['entry 25'])
  })
  it('skips a file that rotation removed between the listing and its reading (it is gone from disk)', async () => {
    const rotating = path.join(dir, 'rotating')
    mkdirSync(rotating)
    // Listed by name, gone when read: what a dangling link is to stat and open.
    symlinkSync(path.join(rotating, 'removed-by-rotation'), path.join(rotating, 'device.1.log'))
    writeFileSync(path.join(rotating, 'device.2.log'), [entry(1), entry(2)].join('\n') + '\n')
    const page = await queryLogFiles(rotating, { pageNo: 1, pageSize: 10 })
    expect(page).toMatchObject({ total: 2, files: 2 })
    expect(msgs(page.rows)).toEqual(['entry 2', 'entry 1'])
  })
})
