import { existsSync, readFileSync, statSync, statfsSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { alice, apiError, bob, bytes, chunkOf, harness, MB, sha256, stream, type Harness } from './harness.ts'

// Every row of spec 3.1 (upload session) against the real service: libsql file + tus FileStore.
describe('upload session state machine (spec 3.1)', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => { await h.close() })

  const file = bytes(2 * MB + 12345) // three chunks of at most 1 MB
  const put = (index: number, extra = {}) => {
    const { fields, body } = chunkOf(file, MB, index, extra)
    return h.uploads.putChunk(alice, fields, stream(body))
  }

  it('(none) → open: chunk 0 is admitted, reserves the rest of totalSize and issues uploadId', async () => {
    const first = await put(0)
    expect(first).toEqual({ uploadId: expect.stringMatching(/^[0-9a-f]{32}$/), nextChunkIndex: '1', complete: false, filePath: `upload://${first.uploadId}` })
    const caps = await h.uploads.capabilities()
    expect(caps.activeSessions).toBe(1)
    // Written bytes already show in the filesystem's free space; the reservation is what is still to come.
    expect(caps.reservedBySessionsBytes).toBe(String(file.length - MB))
    expect(statSync(h.uploads.filePath(first.uploadId)).size).toBe(MB)
  })

  it('open → open → complete: chunks in order advance nextChunkIndex; the last one completes; claim hands back the same bytes', async () => {
    const { uploadId } = await put(0)
    expect(await put(1, { uploadId })).toMatchObject({ uploadId, nextChunkIndex: '2', complete: false })
    expect(await put(2, { uploadId })).toMatchObject({ uploadId, nextChunkIndex: '3', complete: true })
    const caps = await h.uploads.capabilities()
    expect(caps).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: '0' }) // complete counts until consumed
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(claimed).toMatchObject({ uploadId, originalFilename: 'photo.jpg', size: file.length, purpose: 'image', sha256: null })
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
    expect((await h.uploads.capabilities()).activeSessions).toBe(0)
    await claimed.release()
    expect(existsSync(claimed.path)).toBe(false)
  })

  it('open → open (resume): chunk 0 resent with the same clientRequestId returns the session and its next chunk, also after a restart', async () => {
    const { uploadId } = await put(0)
    await put(1, { uploadId })
    expect(await put(0)).toEqual({ uploadId, nextChunkIndex: '2', complete: false, filePath: `upload://${uploadId}` })
    const restarted = await h.restart()
    const { fields, body } = chunkOf(file, MB, 0)
    expect(await restarted.putChunk(alice, fields, stream(body))).toMatchObject({ uploadId, nextChunkIndex: '2' })
    expect(await put(2, { uploadId })).toMatchObject({ complete: true })
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
    expect(statSync(h.uploads.filePath(uploadId)).size).toBe(file.length)
  })

  it('open → open (resume) only for the same file: chunk 0 of another file of the same size is refused and the session is untouched', async () => {
    const { uploadId } = await put(0)
    const other = bytes(file.length)
    const { fields, body } = chunkOf(other, MB, 0) // same clientRequestId, sizes and name; no sha256
    expect(await apiError(h.uploads.putChunk(alice, fields, stream(body)))).toMatchObject({
      messageKey: 'api.error.uploadDifferentFile', recommendedAction: 'START_NEW_UPLOAD', retryable: false,
      details: { uploadId, chunkIndex: 0, clientRequestId: 'req-1' },
    })
    // A resend through uploadId is checked the same way, also after a restart.
    await h.restart()
    expect(await apiError(h.uploads.putChunk(alice, { ...fields, uploadId }, stream(body)))).toMatchObject({ messageKey: 'api.error.uploadDifferentFile' })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: String(file.length - MB) })
    expect(await put(0)).toMatchObject({ uploadId, nextChunkIndex: '1' })
    await put(1, { uploadId })
    // A resent last chunk of the other file is refused too, once the upload is complete.
    await put(2, { uploadId })
    const last = chunkOf(other, MB, 2, { uploadId })
    expect(await apiError(h.uploads.putChunk(alice, last.fields, stream(last.body)))).toMatchObject({ messageKey: 'api.error.uploadDifferentFile', details: { chunkIndex: 2 } })
    expect(sha256(readFileSync((await h.uploads.claim(uploadId, alice, 'image')).path))).toBe(sha256(file))
  })

  it('an empty file resent as its one empty chunk resumes its session', async () => {
    const { fields, body } = chunkOf(Buffer.alloc(0), MB, 0)
    const first = await h.uploads.putChunk(alice, fields, stream(body))
    expect(await h.uploads.putChunk(alice, fields, stream(body))).toEqual(first)
  })

  it('resume after a restart drops bytes a killed process wrote past the last accepted chunk', async () => {
    const { uploadId } = await put(0)
    // A chunk half written when the process died: bytes on disk, no manifest update.
    const { appendFileSync } = await import('node:fs')
    appendFileSync(h.uploads.filePath(uploadId), bytes(1000))
    await h.restart()
    expect(await put(1, { uploadId })).toMatchObject({ nextChunkIndex: '2' })
    await put(2, { uploadId })
    expect(sha256(readFileSync((await h.uploads.claim(uploadId, alice, 'image')).path))).toBe(sha256(file))
  })

  it('complete → consumed: a second claim fails with UPLOAD_CONSUMED; cancelling it too', async () => {
    const small = bytes(1000)
    const { fields, body } = chunkOf(small, MB, 0)
    const { uploadId, complete } = await h.uploads.putChunk(alice, fields, stream(body))
    expect(complete).toBe(true)
    await h.uploads.claim(uploadId, alice, 'image')
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed', recommendedAction: 'START_NEW_UPLOAD' })
    expect(await apiError(h.uploads.cancel(alice, uploadId))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
    expect(await apiError(h.uploads.putChunk(alice, { ...fields, uploadId }, stream(body)))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    // A resent chunk 0 with the same clientRequestId after consumption starts a new session (spec 4.12.3).
    const again = await h.uploads.putChunk(alice, fields, stream(body))
    expect(again.uploadId).not.toBe(uploadId)
  })

  it('claim refuses an open session (UPLOAD_NOT_COMPLETE) and another purpose (UPLOAD_PURPOSE_MISMATCH) without consuming it', async () => {
    const { uploadId } = await put(0)
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadNotComplete', details: { nextChunkIndex: '1' } })
    await put(1, { uploadId })
    await put(2, { uploadId })
    expect(await apiError(h.uploads.claim(uploadId, alice, 'model'))).toMatchObject({
      messageKey: 'api.error.uploadPurposeMismatch', details: { expected: 'model', actual: 'image' },
    })
    await expect(h.uploads.claim(uploadId, alice, 'image')).resolves.toMatchObject({ uploadId })
  })

  it('open → cancelled: the reservation is released at once and the bytes deleted; cancel again says cancelled', async () => {
    const { uploadId } = await put(0)
    await h.uploads.cancel(alice, uploadId)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(existsSync(h.uploads.filePath(uploadId))).toBe(false)
    expect(await apiError(h.uploads.cancel(alice, uploadId))).toMatchObject({ messageKey: 'api.error.uploadCancelled' })
    expect(await apiError(put(1, { uploadId }))).toMatchObject({ messageKey: 'api.error.uploadCancelled' })
  })

  it('complete → cancelled: a complete, unconsumed session can be cancelled and then not claimed', async () => {
    const { uploadId } = await put(0)
    await put(1, { uploadId })
    await put(2, { uploadId })
    await h.uploads.cancel(alice, uploadId)
    expect((await h.uploads.capabilities()).activeSessions).toBe(0)
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadCancelled' })
  })

  it('cancel while a chunk is streaming stops the write and releases everything', async () => {
    const { uploadId } = await put(0)
    const { fields, body } = chunkOf(file, MB, 1, { uploadId })
    const slow = new PassThrough()
    const writing = apiError(h.uploads.putChunk(alice, fields, slow))
    slow.write(body.subarray(0, 1000))
    await new Promise((resolve) => setTimeout(resolve, 50))
    await h.uploads.cancel(alice, uploadId)
    expect(await writing).toMatchObject({ messageKey: 'api.error.uploadCancelled' })
    expect(existsSync(h.uploads.filePath(uploadId))).toBe(false)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('open → expired: no accepted chunk within idleTimeoutMs (injected clock); every accepted chunk renews the timer', async () => {
    const idle = h.config.uploadIdleTimeoutMs
    const { uploadId } = await put(0)
    h.clock.advance(idle - 1)
    await put(1, { uploadId }) // renews
    h.clock.advance(idle - 1)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect((await h.uploads.capabilities()).activeSessions).toBe(1)
    h.clock.advance(1)
    expect(await h.uploads.sweep()).toEqual({ expired: 1, deletedFiles: 0 })
    expect(existsSync(h.uploads.filePath(uploadId))).toBe(false)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(await apiError(put(2, { uploadId }))).toMatchObject({ messageKey: 'api.error.uploadExpired', recommendedAction: 'START_NEW_UPLOAD' })
    expect(await apiError(h.uploads.cancel(alice, uploadId))).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })

  it('an expired session is refused even before the sweeper ran, and capabilities never count it', async () => {
    const { uploadId } = await put(0)
    h.clock.advance(h.config.uploadIdleTimeoutMs)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(await apiError(put(1, { uploadId }))).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })

  it('a complete session does not expire by idleness (spec 3.1: open → expired)', async () => {
    const { uploadId } = await put(0)
    await put(1, { uploadId })
    await put(2, { uploadId })
    h.clock.advance(h.config.uploadIdleTimeoutMs * 10)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    await expect(h.uploads.claim(uploadId, alice, 'image')).resolves.toMatchObject({ uploadId })
  })

  it('the sweeper deletes a claimed file nobody released once the idle timeout has passed', async () => {
    const { fields, body } = chunkOf(bytes(100), MB, 0)
    const { uploadId } = await h.uploads.putChunk(alice, fields, stream(body))
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    h.clock.advance(h.config.uploadIdleTimeoutMs)
    expect(await h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 1 })
    expect(existsSync(claimed.path)).toBe(false)
  })

  it('another user gets the same answer as for an unknown uploadId, for chunks, cancel and claim', async () => {
    const { uploadId } = await put(0)
    const unknown = await apiError(h.uploads.cancel(alice, 'f'.repeat(32)))
    expect(unknown).toMatchObject({ messageKey: 'api.error.uploadNotFound', details: { uploadId: 'f'.repeat(32) } })
    const foreign = await apiError(h.uploads.cancel(bob, uploadId))
    expect(foreign).toEqual({ ...unknown, details: { uploadId } })
    const { fields, body } = chunkOf(file, MB, 1, { uploadId })
    expect(await apiError(h.uploads.putChunk(bob, fields, stream(body)))).toEqual({ ...unknown, details: { uploadId } })
    expect(await apiError(h.uploads.claim(uploadId, bob, 'image'))).toEqual({ ...unknown, details: { uploadId } })
    // None of it touched Alice's session: still the one open session, with its reservation.
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: String(file.length - MB) })
    // Bob's identical clientRequestId is his own upload, not a resume of Alice's.
    const { fields: f0, body: b0 } = chunkOf(file, MB, 0)
    expect((await h.uploads.putChunk(bob, f0, stream(b0))).uploadId).not.toBe(uploadId)
    expect(await put(1, { uploadId })).toMatchObject({ nextChunkIndex: '2' })
  })

  it('absoluteTimeoutMs > 0 expires even a busy or complete session; 0 never does', async () => {
    await h.close()
    h = await harness({ uploadMaxChunkBytes: 1 * MB, uploadAbsoluteTimeoutMs: 60_000 })
    const { uploadId } = await put(0)
    h.clock.advance(59_999)
    await put(1, { uploadId })
    await put(2, { uploadId })
    h.clock.advance(1)
    expect(await h.uploads.sweep()).toMatchObject({ expired: 1 })
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadExpired' })
  })
})

describe('uploadCapabilities (spec 2.5)', () => {
  let h: Harness
  afterEach(async () => { await h.close() })

  it('reports every field, byte counts as decimal strings, from the live staging filesystem', async () => {
    h = await harness({ uploadReserveBytes: 512 * MB, uploadMaxTotalBytes: 0, uploadMaxChunks: 0, maxEncodedImageBytes: 7 * MB, maxImagePixels: 5_000_000 })
    const caps = await h.uploads.capabilities()
    const fs = statfsSync(h.uploads.stagingDir)
    expect(Object.keys(caps).sort()).toEqual(['absoluteTimeoutMs', 'activeSessions', 'availableBytes', 'availableForNewUploadsBytes',
      'idleTimeoutMs', 'maxChunkSize', 'maxChunks', 'maxEncodedImageBytes', 'maxImagePixels', 'maxTotalSize', 'persistentAcrossRestart',
      'reserveBytes', 'reservedBySessionsBytes', 'resumable'])
    for (const key of ['maxTotalSize', 'maxChunkSize', 'availableBytes', 'reserveBytes', 'availableForNewUploadsBytes', 'reservedBySessionsBytes', 'maxEncodedImageBytes'] as const)
      expect(caps[key]).toMatch(/^\d+$/)
    expect(caps).toMatchObject({
      maxTotalSize: '0', maxChunkSize: String(8 * MB), maxChunks: 0, reserveBytes: String(512 * MB), reservedBySessionsBytes: '0',
      activeSessions: 0, idleTimeoutMs: 30 * 60 * 1000, absoluteTimeoutMs: 0, resumable: true, persistentAcrossRestart: true,
      maxEncodedImageBytes: String(7 * MB), maxImagePixels: 5_000_000,
    })
    // Live free space: within 256 MB of what statfs says now (other processes write too).
    expect(Math.abs(Number(caps.availableBytes) - fs.bavail * fs.bsize)).toBeLessThan(256 * MB)
    expect(Number(caps.availableForNewUploadsBytes)).toBe(Math.max(0, Number(caps.availableBytes) - 512 * MB))
  })

  it('the percentage reserve wins when larger, and availableForNewUploadsBytes never goes negative', async () => {
    h = await harness({ uploadReserveBytes: 1, uploadReservePercent: 100 })
    const fs = statfsSync(h.uploads.stagingDir)
    const caps = await h.uploads.capabilities()
    expect(caps.reserveBytes).toBe(String(fs.blocks * fs.bsize))
    expect(caps.availableForNewUploadsBytes).toBe('0')
  })
})
