import { existsSync, readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { alice, apiError, bob, bytes, chunkOf, harness, MB, sha256, stream, type Harness } from './harness.ts'

// spec 4.7 "Successful claim of an uploadId consumes it": a detection that fails leaves it complete.
describe('upload lease: consumed on commit, back to complete on abandon', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => { await h.close() })

  const file = bytes(5000)
  const completeUpload = async () => {
    const { fields, body } = chunkOf(file, MB, 0)
    const view = await h.uploads.putChunk(alice, fields, stream(body))
    expect(view.complete).toBe(true)
    return view.uploadId
  }

  it('abandon: the same uploadId can be leased again with its bytes; commit then consumes it and deletes the bytes', async () => {
    const uploadId = await completeUpload()
    const first = await h.uploads.lease(uploadId, alice, 'image')
    expect(first).toMatchObject({ uploadId, size: file.length, purpose: 'image', originalFilename: 'photo.jpg' })
    expect((await h.uploads.capabilities()).activeSessions).toBe(0)
    await first.abandon()
    expect((await h.uploads.capabilities()).activeSessions).toBe(1)
    const retry = await h.uploads.lease(uploadId, alice, 'image')
    expect(sha256(readFileSync(retry.path))).toBe(sha256(file))
    await retry.commit()
    expect(existsSync(retry.path)).toBe(false)
    expect(await apiError(h.uploads.lease(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
  })

  it('claim-once: while leased, concurrent leases and claims get UPLOAD_CONSUMED; exactly one of many concurrent leases wins', async () => {
    const uploadId = await completeUpload()
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => h.uploads.lease(uploadId, alice, 'image')))
    const won = results.filter((r) => r.status === 'fulfilled')
    expect(won).toHaveLength(1)
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason.item.messageKey).toBe('api.error.uploadConsumed')
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
    // A settled lease stays settled: abandon after commit does not revive the upload.
    const lease = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<Harness['uploads']['lease']>>>).value
    await lease.commit()
    await lease.abandon()
    expect(await apiError(h.uploads.lease(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
  })

  it('same identity and purpose only, as for claim; a refused lease leaves the session complete', async () => {
    const uploadId = await completeUpload()
    expect(await apiError(h.uploads.lease(uploadId, bob, 'image'))).toMatchObject({ messageKey: 'api.error.uploadNotFound' })
    expect(await apiError(h.uploads.lease(uploadId, alice, 'model'))).toMatchObject({ messageKey: 'api.error.uploadPurposeMismatch' })
    const lease = await h.uploads.lease(uploadId, alice, 'image')
    await lease.commit()
  })

  it('keepUntilRelease: a claimed file read past the idle timeout stays until its release; one without it is swept; none leaves a reservation', async () => {
    const kept = await h.uploads.claim(await completeUpload(), alice, 'image', { keepUntilRelease: true })
    const forgotten = await h.uploads.claim(await completeUpload(), alice, 'image')
    h.clock.advance(h.config.uploadIdleTimeoutMs * 3)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 1 })
    expect([existsSync(kept.path), existsSync(forgotten.path)]).toEqual([true, false])
    expect(sha256(readFileSync(kept.path))).toBe(sha256(file))
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    await kept.release()
    expect(existsSync(kept.path)).toBe(false)
    // Released: nothing is kept for it any more (a second release and the sweeper find nothing).
    await kept.release()
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
  })
})

// Consumers that lease an upload (camera video file, backup restore, logo, audio, detection)
// may work on it longer than the idle timeout: the sweeper must not delete it under them.
describe('upload lease: held while the consumer works on it', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => { await h.close() })

  const file = bytes(3000)
  const completeUpload = async () => {
    const { fields, body } = chunkOf(file, MB, 0)
    return (await h.uploads.putChunk(alice, fields, stream(body))).uploadId
  }

  it('a lease older than the idle timeout is not swept; abandon then gives the file back whole; commit lets it go', async () => {
    const lease = await h.uploads.lease(await completeUpload(), alice, 'image')
    h.clock.advance(h.config.uploadIdleTimeoutMs * 3)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect(sha256(readFileSync(lease.path))).toBe(sha256(file))
    await lease.abandon()
    const again = await h.uploads.lease(lease.uploadId, alice, 'image')
    expect(sha256(readFileSync(again.path))).toBe(sha256(file))
    h.clock.advance(h.config.uploadIdleTimeoutMs * 3)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    await again.commit()
    expect(existsSync(again.path)).toBe(false)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
  })
})
