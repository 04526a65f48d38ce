/**
 * System/DownloadLog names its file only by a name QueryLogFiles lists (docs/system.md "Logs"):
 * a malformed name or an unknown parameter is 400 InvalidParam, a well-formed name not listed
 * is 404 LogFileNotFound, both in the envelope; a rotated file is served as it lies on disk.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'

// Files of 16 KB: a few hundred requests rotate the log.
test.override('deviceOptions', { env: { LOG_FILE_MAX_BYTES: String(16 * 1024), LOG_LEVEL: 'info' } })

test('DownloadLog refuses malformed, unknown and unlisted ids with the envelope, and serves a rotated log by its id', async ({ device, mtk }) => {
  const get = (query: string) => fetch(`${device.url}/gtw/cwai/System/DownloadLog${query}`, { headers: { mtk } })
  const refusal = async (query: string) => {
    const response = await get(query)
    expect(response.headers.get('content-type')).toContain('application/json')
    return { status: response.status, body: await response.json() }
  }

  for (const [query, field] of [['?id=../../device.db', '/id'], ['?id=%zz', '/id'], ['?id=-1', '/id'], ['?id=', '/id'],
    ['?name=device.1.log/../../device.db', '/name'], ['?id=device.1.log&zz=1', '/zz'], ['?name=device.1.log&id=device.2.log', '/id']] as const) {
    const { status, body } = await refusal(query)
    expect(status, query).toBe(400)
    expect(body.resCode).toBe(0)
    expect(body.resMsg[0], query).toMatchObject({ messageKey: 'api.error.InvalidParam', recommendedAction: 'CHECK_REQUEST_PARAMETERS', details: { field } })
  }
  const unknown = await refusal('?id=device.999.log')
  expect(unknown.status).toBe(404)
  expect(unknown.body.resMsg[0]).toMatchObject({ messageKey: 'api.error.LogFileNotFound', details: { name: 'device.999.log' } })

  // Requests until the log has rotated at least once.
  const files = async () => (await device.post('/gtw/cwai/System/QueryLogFiles', {}, mtk)).body.resData.rows as { name: string; active: boolean; sizeBytes: number }[]
  for (let i = 0; i < 400 && (await files()).length < 2; i++) await device.post('/gtw/cwai/System/QueryDebugParam', {}, mtk)
  const rows = await files()
  expect(rows.length).toBeGreaterThanOrEqual(2)
  const rotated = rows.find((row) => !row.active)!
  const onDisk = readFileSync(path.join(device.dataDir, 'logs', rotated.name))
  for (const query of [`?id=${rotated.name}`, `?name=${rotated.name}`, `?name=${rotated.name}&id=${rotated.name}`]) {
    const served = await get(query)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('application/x-ndjson')
    expect(Buffer.from(await served.arrayBuffer()).equals(onDisk)).toBe(true)
  }
  expect(onDisk.length).toBe(rotated.sizeBytes)
})
