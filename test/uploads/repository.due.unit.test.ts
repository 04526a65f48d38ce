import { afterEach, describe, expect, it } from 'vitest'
import { alice, bytes, chunkOf, harness, MB, stream, type Harness } from './harness.ts'

// Admission and the sweeper read only the sessions past a deadline (runtime/uploads/expiry.ts),
// not every open or complete one: complete uploads waiting to be claimed cost nothing per upload.
describe('UploadRepository.listDue', () => {
  let h: Harness
  afterEach(async () => { await h.close() })

  const upload = async (clientRequestId: string, complete: boolean) => {
    const file = bytes(complete ? 100 : 2 * MB)
    const { fields, body } = chunkOf(file, MB, 0, { clientRequestId })
    return (await h.uploads.putChunk(alice, fields, stream(body))).uploadId
  }

  it('returns open sessions idle for idleTimeoutMs and, with an absolute lifetime, open or complete ones older than it', async () => {
    h = await harness({ uploadAbsoluteTimeoutMs: 0 })
    const idle = h.config.uploadIdleTimeoutMs
    const waiting = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(`done-${i}`, true)))
    const stale = await upload('stale', false)
    h.clock.advance(idle - 1)
    const fresh = await upload('fresh', false)
    const now = h.clock.now()
    expect(await h.uploads.repo.listDue(now, idle, 0)).toEqual([])
    expect((await h.uploads.repo.listDue(now + 1, idle, 0)).map((s) => s.id)).toEqual([stale])
    // An absolute lifetime also reaches complete sessions, and the fresh open one once it is old enough.
    const absolute = (await h.uploads.repo.listDue(now + 1, idle, idle)).map((s) => s.id).sort()
    expect(absolute).toEqual([...waiting, stale].sort())
    expect((await h.uploads.repo.listDue(now + idle, 0, idle)).map((s) => s.id).sort()).toEqual([...waiting, stale, fresh].sort())
    expect(await h.uploads.repo.listDue(now + 10 * idle, 0, 0)).toEqual([])
  })
})
