import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import AlgorithmPage from '../../functions/algorithm/page.ts'
import { algorithms } from '../../shared/db/schema/index.ts'
import type { Identity } from '../../shared/handler.ts'
import { createTestRuntime, type TestRuntime } from '../helpers/test-ctx.ts'

const admin: Identity = { userId: 'admin', accountName: 'admin', sessionId: null, transport: 'internal', passwordChangeRequired: false }

// spec 4.2: algorithmName and supplier are substring filters; LIKE wildcards in them are literal.
describe('algorithm/page name and supplier filters with %, _ and \\', () => {
  let t: TestRuntime
  const row = (algorithmId: string, algorithmName: string, supplier: string) => ({
    algorithmId, algorithmName, supplier, algorithmUsage: '2', algorithmCategory: 'test', version: '1', description: '',
    models: [], runningStatus: 0, source: 'test', updatedAt: 0,
  })
  const ids = async (filter: { algorithmName?: string; supplier?: string }) => {
    const page = await AlgorithmPage.handle({ algorithmCategory: 'test', pageNum: 1, pageSize: 100, ...filter }, t.ctx(admin) as never) as { total: number; rows: { algorithmId: string }[] }
    expect(page.total).toBe(page.rows.length)
    return page.rows.map((r) => r.algorithmId)
  }

  beforeAll(async () => {
    t = await createTestRuntime()
    await t.runtime.services.db.insert(algorithms).values([
      row('a', 'helmet_v2', 'Acme 100% Labs'),
      row('b', 'helmetXv2', 'Acme 1000 Labs'),
      row('c', 'path\\to', 'Back\\slash Inc'),
      row('d', 'pathXto', 'BackXslash Inc'),
    ])
  })
  afterAll(async () => { await t?.close() })

  it('an underscore, a percent sign or a backslash matches only itself', async () => {
    expect(await ids({ algorithmName: 'helmet_' })).toEqual(['a'])
    expect(await ids({ algorithmName: 'HELMET' })).toEqual(['a', 'b'])
    expect(await ids({ supplier: '100%' })).toEqual(['a'])
    expect(await ids({ supplier: '0% L' })).toEqual(['a'])
    expect(await ids({ algorithmName: 'h\\t' })).toEqual(['c'])
    expect(await ids({ supplier: 'k\\s' })).toEqual(['c'])
    expect(await ids({ algorithmName: '_' })).toEqual(['a'])
    expect(await ids({ supplier: '%' })).toEqual(['a'])
  })

  it('rows carry where the algorithm came from and when it last changed, as the other algorithm routes answer them', async () => {
    const page = await AlgorithmPage.handle({ algorithmId: 'face-detection', pageNum: 1, pageSize: 10 }, t.ctx(admin) as never) as { rows: Record<string, unknown>[] }
    expect(page.rows).toHaveLength(1)
    expect(page.rows[0]).toMatchObject({ algorithmId: 'face-detection', algorithmUsage: '2', runningStatus: 0, origin: 'preset' })
    expect(page.rows[0]!.updateTime).toMatch(/^\d{13}$/)
    expect(Object.keys(page.rows[0]!).sort()).toEqual([
      'algorithmCategory', 'algorithmId', 'algorithmName', 'algorithmUsage', 'description', 'models', 'origin', 'runningStatus', 'supplier', 'updateTime', 'version',
    ])
  })
})
