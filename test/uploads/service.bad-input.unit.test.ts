import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { alice, apiError, bytes, chunkOf, harness, MB, sha256, stream, type Harness } from './harness.ts'

// Bad input to the upload protocol (spec 4.5, 7.1): every rejection names the cause and leaves the session as it was.
describe('uploadTemp bad input (spec 4.5, 7.1, 7.2)', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => { await h.close() })

  const file = bytes(2 * MB + 777)
  const put = (index: number, extra = {}, body?: Buffer) => {
    const chunk = chunkOf(file, MB, index, extra)
    return h.uploads.putChunk(alice, chunk.fields, stream(body ?? chunk.body))
  }
  // Free-space figures move with everything else on the machine; reservations must not.
  const reservations = () => h.uploads.capabilities().then(({ activeSessions, reservedBySessionsBytes }) => ({ activeSessions, reservedBySessionsBytes }))
  /** Session state as the manifest and the store see it. */
  const snapshot = async (uploadId: string) => ({
    caps: await reservations(),
    size: statSync(h.uploads.filePath(uploadId)).size,
    row: await h.uploads.repo.find(uploadId),
  })
  const open = async () => {
    const { uploadId } = await put(0)
    await put(1, { uploadId })
    return { uploadId, before: await snapshot(uploadId) }
  }

  it.each([
    ['totalChunks 0', { totalChunks: 0 }, 'totalChunks'],
    ['negative totalSize', { totalSize: -5 }, 'totalSize'],
    ['negative chunkSize', { chunkSize: -1 }, 'chunkSize'],
    ['fractional chunkIndex', { chunkIndex: 0.5 }, 'chunkIndex'],
    ['chunkIndex beyond totalChunks', { chunkIndex: 3 }, 'chunkIndex'],
    ['empty purpose', { purpose: '' }, 'purpose'],
    ['malformed sha256', { sha256: 'abc' }, 'sha256'],
  ])('%s → api.error.InvalidParam naming the part, with CHECK_UPLOAD_PARAMETERS', async (_name, extra, field) => {
    const error = await apiError(put(0, extra))
    expect(error).toMatchObject({ messageKey: 'api.error.InvalidParam', details: { field }, recommendedAction: 'CHECK_UPLOAD_PARAMETERS' })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('a chunk after 0 without uploadId → InvalidParam uploadId; the open session keeps its reservation', async () => {
    const { uploadId } = await put(0)
    const before = await snapshot(uploadId)
    expect(await apiError(put(1, { uploadId: undefined }))).toMatchObject({
      messageKey: 'api.error.InvalidParam', details: { field: 'uploadId' }, recommendedAction: 'CHECK_UPLOAD_PARAMETERS',
    })
    expect(await snapshot(uploadId)).toEqual(before)
    expect(before.caps).toEqual({ activeSessions: 1, reservedBySessionsBytes: String(file.length - MB) })
  })

  it('chunkIndex ahead of nextChunkIndex → UPLOAD_CHUNK_OUT_OF_ORDER with the next index; nothing written', async () => {
    const { uploadId } = await put(0)
    const before = await snapshot(uploadId)
    const small = bytes(10)
    const error = await apiError(h.uploads.putChunk(alice, { ...chunkOf(file, MB, 2, { uploadId }).fields }, stream(small)))
    expect(error).toMatchObject({ messageKey: 'api.error.uploadChunkOutOfOrder', details: { chunkIndex: 2, nextChunkIndex: '1' }, recommendedAction: 'CHECK_UPLOAD_PARAMETERS' })
    expect(await snapshot(uploadId)).toEqual(before)
  })

  it('chunkIndex behind nextChunkIndex (resend) is acknowledged without writing twice', async () => {
    const { uploadId, before } = await open()
    expect(await put(0, { uploadId })).toMatchObject({ uploadId, nextChunkIndex: '2', complete: false })
    expect(await put(1, { uploadId })).toMatchObject({ nextChunkIndex: '2' })
    expect(await snapshot(uploadId)).toEqual(before)
    // A resend that claims another size than the accepted chunk is refused.
    expect(await apiError(put(1, { uploadId, chunkSize: 5 }, bytes(5)))).toMatchObject({ messageKey: 'api.error.uploadParametersMismatch', details: { field: 'chunkSize', expected: MB } })
  })

  it('a chunk larger than maxChunkSize is rejected while streaming and truncated away', async () => {
    const { uploadId, before } = await open()
    const last = chunkOf(file, MB, 2, { uploadId }).fields
    const body = new PassThrough()
    const result = apiError(h.uploads.putChunk(alice, last, body))
    body.write(bytes(MB)) // more than the 777 declared, and then past maxChunkSize
    body.write(bytes(64 * 1024))
    const error = await result // answered before the body ended
    expect(error).toMatchObject({ messageKey: 'api.error.uploadChunkTooLarge', httpStatus: 413, details: { limitBytes: MB, resource: 'upload-chunk' } })
    expect((error.details as { actualBytes: number }).actualBytes).toBeGreaterThan(MB)
    body.end()
    expect(await snapshot(uploadId)).toEqual(before)
  })

  it('a declared chunkSize above maxChunkSize is refused before any byte is read', async () => {
    expect(await apiError(put(0, { chunkSize: MB + 1, totalChunks: 2 }))).toMatchObject({
      messageKey: 'api.error.uploadChunkTooLarge', details: { actualBytes: MB + 1, limitBytes: MB },
    })
  })

  it('chunkSize different from the bytes received → mismatch; the partial chunk is truncated away', async () => {
    const { uploadId, before } = await open()
    expect(await apiError(put(2, { uploadId }, bytes(700)))).toMatchObject({
      messageKey: 'api.error.uploadParametersMismatch', details: { field: 'chunkSize', expected: 777, actual: 700 },
    })
    expect(await snapshot(uploadId)).toEqual(before)
  })

  it('the last chunk must complete totalSize exactly', async () => {
    const { uploadId, before } = await open()
    expect(await apiError(put(2, { uploadId, chunkSize: 776 }, bytes(776)))).toMatchObject({
      messageKey: 'api.error.uploadParametersMismatch', details: { field: 'chunkSize', expected: 777 },
    })
    expect(await snapshot(uploadId)).toEqual(before)
  })

  it('an early chunk so small that the rest cannot fit → UPLOAD_CHUNKS_TOO_SMALL (USE_LARGER_CHUNKS)', async () => {
    const { uploadId } = await put(0)
    const before = await snapshot(uploadId)
    expect(await apiError(put(1, { uploadId, chunkSize: 100 }, bytes(100)))).toMatchObject({
      messageKey: 'api.error.uploadChunksTooSmall', recommendedAction: 'USE_LARGER_CHUNKS',
    })
    expect(await snapshot(uploadId)).toEqual(before)
    expect(before.caps).toEqual({ activeSessions: 1, reservedBySessionsBytes: String(file.length - MB) })
  })

  it.each([
    ['sha256', { sha256: 'a'.repeat(64) }],
    ['filename', { filename: 'other.jpg' }],
    ['purpose', { purpose: 'model' }],
    ['totalSize', { totalSize: file.length + 1 }],
    ['totalChunks', { totalChunks: 4 }],
    ['clientRequestId', { clientRequestId: 'another' }],
  ])('a changed %s in mid-upload → UPLOAD_PARAMETERS_MISMATCH; session unchanged', async (field, extra) => {
    const { uploadId, before } = await open()
    const error = await apiError(put(2, { uploadId, ...extra }))
    expect(error).toMatchObject({ messageKey: 'api.error.uploadParametersMismatch', recommendedAction: 'CHECK_UPLOAD_PARAMETERS', details: { field } })
    expect(await snapshot(uploadId)).toEqual(before)
    expect(await put(2, { uploadId })).toMatchObject({ complete: true })
  })

  it('chunk 0 resent with the same clientRequestId but another file → mismatch, no second session', async () => {
    const { uploadId } = await put(0)
    expect(await apiError(put(0, { totalSize: file.length - 1 }))).toMatchObject({ details: { field: 'totalSize' } })
    expect((await h.uploads.capabilities()).activeSessions).toBe(1)
    expect(await put(0)).toMatchObject({ uploadId })
  })

  it('totalSize larger than the free space → STORAGE_RESERVE_REACHED with requiredBytes, availableBytes, reserveBytes', async () => {
    const caps = await h.uploads.capabilities()
    const tooBig = Number(caps.availableBytes) + 1024 * MB // far beyond what other processes can free meanwhile
    const error = await apiError(h.uploads.putChunk(alice, {
      filename: 'huge.bin', purpose: 'model', chunkIndex: 0, totalChunks: Math.ceil(tooBig / MB), totalSize: tooBig, chunkSize: MB,
    }, stream(bytes(MB))))
    expect(error).toMatchObject({
      messageKey: 'api.error.storageReserveReached', recommendedAction: 'FREE_DISK_SPACE', retryable: false,
      details: { requiredBytes: tooBig, reserveBytes: 0 },
    })
    expect(typeof (error.details as { availableBytes: unknown }).availableBytes).toBe('number')
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('a filename with ../ and NUL bytes is kept as metadata only; the bytes stay inside the staging folder', async () => {
    const hostile = '../../etc/passwd\u0000.jpg'
    const small = bytes(300)
    const { fields } = chunkOf(small, MB, 0, { filename: hostile })
    const { uploadId } = await h.uploads.putChunk(alice, fields, stream(small))
    expect(await reservations()).toEqual({ activeSessions: 1, reservedBySessionsBytes: '0' }) // complete, not yet consumed
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(await reservations()).toEqual({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(claimed.originalFilename).toBe(hostile)
    expect(path.dirname(claimed.path)).toBe(h.uploads.stagingDir)
    expect(path.basename(claimed.path)).toBe(uploadId)
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(small))
    expect(readdirSync(h.dir).sort()).toEqual(['device.db', 'uploads'])
    expect(existsSync(path.join(h.uploads.stagingDir, '..', '..', 'etc', 'passwd'))).toBe(false)
  })

  it('sha256 of the completed file is verified: a mismatch fails the session and releases it', async () => {
    const wrong = sha256(Buffer.from('something else'))
    const { uploadId } = await put(0, { sha256: wrong })
    await put(1, { uploadId, sha256: wrong })
    const error = await apiError(put(2, { uploadId, sha256: wrong }))
    expect(error).toMatchObject({ messageKey: 'api.error.uploadChecksumMismatch', details: { expected: wrong, actual: sha256(file), state: 'failed' } })
    expect(existsSync(h.uploads.filePath(uploadId))).toBe(false)
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(await apiError(h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadFailed' })
  })

  it('a matching sha256 completes normally', async () => {
    const digest = sha256(file)
    const { uploadId } = await put(0, { sha256: digest })
    await put(1, { uploadId, sha256: digest })
    expect(await put(2, { uploadId, sha256: digest })).toMatchObject({ complete: true })
    expect((await h.uploads.claim(uploadId, alice, 'image')).sha256).toBe(digest)
  })

  it('two writers on one session → TRANSFER_BUSY with retryAfterSeconds; the first one still completes', async () => {
    const { uploadId } = await put(0)
    const { fields, body } = chunkOf(file, MB, 1, { uploadId })
    const slow = new PassThrough()
    const first = h.uploads.putChunk(alice, fields, slow)
    slow.write(body.subarray(0, 10))
    const busy = await apiError(put(1, { uploadId }))
    expect(busy).toMatchObject({ messageKey: 'api.error.transferBusy', retryable: true, retryAfterSeconds: 1, recommendedAction: 'RETRY_LATER' })
    slow.end(body.subarray(10))
    expect(await first).toMatchObject({ nextChunkIndex: '2' })
  })

  it('policy limits: maxChunks → USE_LARGER_CHUNKS_OR_CHANGE_POLICY, maxTotalSize → CHANGE_DEPLOYMENT_POLICY, metadata budget → UPLOAD_METADATA_BUDGET', async () => {
    await h.close()
    h = await harness({ uploadMaxChunkBytes: 1 * MB, uploadMaxChunks: 2, uploadMaxTotalBytes: 3 * MB, uploadMetadataBudgetBytes: 600 + 64 * 2 })
    expect(await apiError(put(0))).toMatchObject({ messageKey: 'api.error.uploadTooManyChunks', recommendedAction: 'USE_LARGER_CHUNKS_OR_CHANGE_POLICY', details: { totalChunks: 3, limit: 2 } })
    expect(await apiError(put(0, { totalSize: 3 * MB + 1, totalChunks: 2 }))).toMatchObject({ messageKey: 'api.error.uploadTooLarge', recommendedAction: 'CHANGE_DEPLOYMENT_POLICY' })
    await h.close()
    h = await harness({ uploadMaxChunkBytes: 1 * MB, uploadMetadataBudgetBytes: 700 })
    expect(await apiError(put(0))).toMatchObject({
      messageKey: 'api.error.uploadMetadataBudget', recommendedAction: 'USE_LARGER_CHUNKS_OR_CHANGE_POLICY', details: { limitBytes: 700 },
    })
  })

  it('a first chunk that fails leaves no session behind at all', async () => {
    const { fields } = chunkOf(file, MB, 0)
    expect(await apiError(h.uploads.putChunk(alice, fields, stream(bytes(10))))).toMatchObject({ details: { field: 'chunkSize' } })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(readdirSync(h.uploads.stagingDir)).toEqual([])
  })
})
