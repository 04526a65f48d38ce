import { readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { alice, bytes, harness, sha256, type Harness } from './harness.ts'
import { tusApp } from './tus-app.ts'

const IDLE = 60_000
const httpDate = (ms: number) => new Date(ms).toUTCString()

// spec 3.1 / 8: every accepted chunk renews the idle timer, for tus PATCHes as for uploadTemp
// chunks; the absolute lifetime (when configured) caps it. @tus/server itself would count the
// expiration from creation, so the clock here is Date itself (faked), the one @tus/server reads.
describe('tus expiration follows the idle rule of upload sessions', () => {
  let h: Harness
  let tus: ReturnType<typeof tusApp>
  const start = async (overrides: Record<string, unknown> = {}) => {
    h = await harness({ uploadIdleTimeoutMs: IDLE, ...overrides }, { clock: { now: () => Date.now(), monotonic: () => Date.now() } })
    tus = tusApp(h, [alice])
  }
  const advance = (ms: number) => vi.setSystemTime(Date.now() + ms)
  beforeEach(() => { vi.useFakeTimers({ toFake: ['Date'] }) })
  afterEach(async () => {
    vi.useRealTimers()
    await h.close()
  })

  const data = bytes(3000)
  const part = (index: number) => data.subarray(index * 1000, (index + 1) * 1000)

  it('an upload active for longer than the idle timeout in total completes; each PATCH moves Upload-Expires on', async () => {
    await start()
    const { response, url, uploadId } = await tus.create('alice', data.length)
    expect(response.headers.get('upload-expires')).toBe(httpDate(Date.now() + IDLE))
    for (const index of [0, 1]) {
      advance(IDLE - 15_000)
      const patched = await tus.patch('alice', url, index * 1000, part(index))
      expect(patched.status).toBe(204)
      expect(patched.headers.get('upload-expires')).toBe(httpDate(Date.now() + IDLE))
    }
    advance(IDLE - 15_000) // 135 s after creation
    const last = await tus.patch('alice', url, 2000, part(2))
    expect(last.status).toBe(204)
    expect(last.headers.get('upload-expires')).toBeNull() // finished: it no longer expires by idleness
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(data))
  })

  it('an upload idle for the idle timeout is gone: 410 uploadExpired, reservation released', async () => {
    await start()
    const { url } = await tus.create('alice', data.length)
    advance(IDLE - 1)
    expect((await tus.patch('alice', url, 0, part(0))).status).toBe(204)
    advance(IDLE)
    const gone = await tus.patch('alice', url, 1000, part(1))
    expect(gone.status).toBe(410)
    expect((await gone.json() as { resMsg: unknown[] }).resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadExpired', details: { state: 'expired' } })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('the absolute lifetime, when configured, caps Upload-Expires and ends even an active upload', async () => {
    await start({ uploadAbsoluteTimeoutMs: 100_000 })
    const createdAt = Date.now()
    const { response, url } = await tus.create('alice', data.length)
    expect(response.headers.get('upload-expires')).toBe(httpDate(createdAt + IDLE))
    advance(50_000)
    const patched = await tus.patch('alice', url, 0, part(0))
    expect(patched.headers.get('upload-expires')).toBe(httpDate(createdAt + 100_000))
    advance(50_000)
    const gone = await tus.patch('alice', url, 1000, part(1))
    expect(gone.status).toBe(410)
    expect((await gone.json() as { resMsg: unknown[] }).resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })
})
