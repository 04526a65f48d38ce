import { afterEach, describe, expect, it } from 'vitest'
import { alice, apiError, bytes, chunkOf, harness, MB, stream, type Harness } from './harness.ts'

// spec 6 producers in the upload service: an admission refusal and an idle expiry each
// report one event (recorded here by a scripted publisher; the outbox itself is tested in test/events).
describe('upload service events', () => {
  let h: Harness
  const emitted: { kind: string; payload: Record<string, unknown> }[] = []
  const events = { emit: async (kind: string, payload: Record<string, unknown>) => { emitted.push({ kind, payload }); return emitted.length } }
  afterEach(async () => {
    emitted.length = 0
    await h.close()
  })

  it('reports storage.reserveReached when admission refuses a file', async () => {
    h = await harness({ uploadReserveBytes: Number.MAX_SAFE_INTEGER / 2 }, { events })
    const file = bytes(1024)
    const first = chunkOf(file, MB, 0, { clientRequestId: 'r1' })
    expect(await apiError(h.uploads.putChunk(alice, first.fields, stream(first.body)))).toMatchObject({ messageKey: 'api.error.storageReserveReached' })
    expect(emitted).toHaveLength(1)
    expect(emitted[0]).toMatchObject({ kind: 'storage.reserveReached', payload: { requiredBytes: 1024, reserveBytes: Number.MAX_SAFE_INTEGER / 2, availableForNewUploadsBytes: 0 } })
  })

  it('reports upload.expired once when the sweeper expires an idle session', async () => {
    h = await harness({}, { events })
    const file = bytes(3 * 1024)
    const first = chunkOf(file, 1024, 0, { clientRequestId: 'r2' })
    const { uploadId } = await h.uploads.putChunk(alice, first.fields, stream(first.body))
    h.clock.advance(h.config.uploadIdleTimeoutMs)
    expect(await h.uploads.sweep()).toMatchObject({ expired: 1 })
    expect(await h.uploads.sweep()).toMatchObject({ expired: 0 })
    expect(emitted).toEqual([{ kind: 'upload.expired', payload: { uploadId, purpose: first.fields.purpose, reason: 'idle', receivedBytes: 1024 } }])
  })

  // spec 3.1: the reason is the deadline that passed first, even when the sweeper comes late.
  it('reports the absolute lifetime as the reason when it ran out before the idle timeout', async () => {
    h = await harness({ uploadIdleTimeoutMs: 10_000, uploadAbsoluteTimeoutMs: 60_000 }, { events })
    const file = bytes(8 * 1024)
    const put = (index: number, uploadId?: string) => {
      const { fields, body } = chunkOf(file, 1024, index, { clientRequestId: 'r3', uploadId })
      return h.uploads.putChunk(alice, fields, stream(body))
    }
    const { uploadId: openId } = await put(0)
    const whole = chunkOf(file, 8 * 1024, 0, { clientRequestId: 'r4' })
    const { uploadId: completeId } = await h.uploads.putChunk(alice, whole.fields, stream(whole.body))
    for (let index = 1; index <= 6; index++) {
      h.clock.advance(9_000)
      await put(index, openId) // renews the idle timer: the last one at 54 s
    }
    // 65 s: both sessions passed their absolute deadline (60 s) before the open one's idle deadline (64 s).
    h.clock.advance(11_000)
    expect(await h.uploads.sweep()).toMatchObject({ expired: 2 })
    expect(emitted.map((e) => e.payload)).toEqual(expect.arrayContaining([
      expect.objectContaining({ uploadId: openId, reason: 'absolute lifetime' }),
      expect.objectContaining({ uploadId: completeId, reason: 'absolute lifetime' }),
    ]))
    expect(emitted).toHaveLength(2)
    expect(await h.uploads.repo.find(openId)).toMatchObject({ state: 'expired', endReason: 'absolute lifetime' })
    expect(await h.uploads.repo.find(completeId)).toMatchObject({ state: 'expired', endReason: 'absolute lifetime' })
  })
})
