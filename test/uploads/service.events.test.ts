import { afterEach, describe, expect, it } from 'vitest'
import { alice, apiError, bytes, chunkOf, harness, MB, stream, type Harness } from './harness.ts'

// Issue 6 producers in the upload service: an admission refusal and an idle expiry each
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
})
