import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'

const maxBytes = 4096
const count = 2
test.override('deviceOptions', { env: { LOG_FILE_MAX_BYTES: String(maxBytes), LOG_FILE_COUNT: String(count) } })

test.describe('rotating log files', () => {
  test('keeps at most count + 1 files of bounded size and still answers QueryLogs', async ({ device, mtk }) => {
    // ~200 bytes per access line: 200 requests write ~40 KB, ten times one file.
    for (let i = 0; i < 200; i++) await device.post('/v1/cwai/aihost/InterfaceTest', { echo: `rotation ${i}` }, mtk, { 'x-request-id': `rot-${i}` })
    const logDir = path.join(device.dataDir, 'logs')
    const files = readdirSync(logDir).filter((name) => name.endsWith('.log'))
    expect(files.length).toBeGreaterThan(1)
    expect(files.length).toBeLessThanOrEqual(count + 1)
    // A file may pass the limit by the line that made it rotate.
    for (const name of files) expect(statSync(path.join(logDir, name)).size).toBeLessThan(maxBytes + 2048)

    let latest: any
    for (let attempt = 0; attempt < 50; attempt++) {
      latest = (await device.post('/v1/cwai/aihost/QueryLogs', { requestId: 'rot-199' }, mtk)).body.resData
      if (latest.total === 1) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(latest.total).toBe(1)
    // The oldest lines have been rotated away: disk use is bounded.
    const oldest = (await device.post('/v1/cwai/aihost/QueryLogs', { requestId: 'rot-0' }, mtk)).body.resData
    expect(oldest.total).toBe(0)
  })
})
