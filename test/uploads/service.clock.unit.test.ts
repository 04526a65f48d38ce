import { existsSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { alice, apiError, bytes, chunkOf, harness, MB, stream, type Harness } from './harness.ts'

const HOUR = 3_600_000

// docs/uploads.md "Expiry and the clock": idle and absolute expiry run on the monotonic clock
// while the process runs; a wall-clock step (NTP setting a clock that booted wrong) moves neither.
describe('upload expiry and wall-clock steps (spec 3.1, 4.12)', () => {
  let h: Harness
  const IDLE = 60_000
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB, uploadIdleTimeoutMs: IDLE }) })
  afterEach(async () => { await h.close() })

  const file = bytes(3 * MB) // three chunks of 1 MB
  const put = (index: number, extra = {}) => {
    const { fields, body } = chunkOf(file, MB, index, extra)
    return h.uploads.putChunk(alice, fields, stream(body))
  }

  it('a step forward of 3 h a second after a chunk does not expire the upload; it completes with the same uploadId', async () => {
    const { uploadId } = await put(0)
    h.clock.advance(1000)
    h.clock.set(h.clock.now() + 3 * HOUR)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect((await h.uploads.capabilities()).activeSessions).toBe(1)
    // Resuming (chunk 0 again, same clientRequestId) finds the same session, not a new one.
    expect(await put(0)).toMatchObject({ uploadId, nextChunkIndex: '1' })
    expect(await put(1, { uploadId })).toMatchObject({ uploadId, nextChunkIndex: '2' })
    h.clock.advance(IDLE - 1)
    expect(await put(2, { uploadId })).toMatchObject({ uploadId, complete: true })
  })

  it('a step back of 3 h does not expire the upload either, and idle expiry still comes on monotonic time', async () => {
    const { uploadId } = await put(0)
    h.clock.set(h.clock.now() - 3 * HOUR)
    h.clock.advance(IDLE - 1)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect(await put(1, { uploadId })).toMatchObject({ uploadId, nextChunkIndex: '2' })
    // Idle for the whole idle timeout: expired, although the wall clock says far less has passed
    // since the row's lastActivityAt (it is 3 h behind it).
    h.clock.advance(IDLE)
    expect(await h.uploads.sweep()).toEqual({ expired: 1, deletedFiles: 0 })
    expect(existsSync(h.uploads.filePath(uploadId))).toBe(false)
    expect(await apiError(put(2, { uploadId }))).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })

  it('the absolute lifetime runs on monotonic time too: a step back does not extend it, a step forward does not end it', async () => {
    await h.close()
    h = await harness({ uploadMaxChunkBytes: 1 * MB, uploadIdleTimeoutMs: IDLE, uploadAbsoluteTimeoutMs: 5 * IDLE })
    const { uploadId } = await put(0)
    h.clock.set(h.clock.now() + 3 * HOUR)
    h.clock.advance(IDLE / 2)
    expect(await put(1, { uploadId })).toMatchObject({ nextChunkIndex: '2' })
    h.clock.set(h.clock.now() - 6 * HOUR)
    for (let i = 0; i < 8; i++) {
      h.clock.advance(IDLE / 2)
      expect({ i, ...(await h.uploads.sweep()) }).toEqual({ i, expired: 0, deletedFiles: 0 })
      if (i === 0) expect(await put(2, { uploadId })).toMatchObject({ complete: true }) // complete: no idle expiry
    }
    h.clock.advance(IDLE / 2) // 5 × IDLE since creation, on the monotonic clock
    expect(await h.uploads.sweep()).toEqual({ expired: 1, deletedFiles: 0 })
  })

  it('after a restart, expiry is computed from what was persisted: the idle time already spent counts', async () => {
    const { uploadId } = await put(0)
    h.clock.advance(IDLE / 2)
    await h.restart()
    h.clock.advance(IDLE / 2 - 1)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    // Anchored at that first look: a step forward now does not end it.
    h.clock.set(h.clock.now() + 3 * HOUR)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    h.clock.advance(1)
    expect(await h.uploads.sweep()).toEqual({ expired: 1, deletedFiles: 0 })
    expect(await apiError(put(1, { uploadId }))).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })

  it('a claimed file is kept for the idle timeout after its claim whatever the wall clock does', async () => {
    const { fields, body } = chunkOf(bytes(100), MB, 0)
    const { uploadId } = await h.uploads.putChunk(alice, fields, stream(body))
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    h.clock.set(h.clock.now() + 3 * HOUR)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect(existsSync(claimed.path)).toBe(true)
    h.clock.advance(IDLE)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 1 })
    expect(existsSync(claimed.path)).toBe(false)
  })
})
