import { readFileSync, statSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { UploadRepository } from '../../runtime/uploads/repository.ts'
import { alice, bytes, chunkOf, harness, MB, sha256, stream, type Harness } from './harness.ts'

/**
 * Makes the next call of `method` return its row only once `release` resolves: that request
 * then holds a row read before another writer moved the session on, and reaches the write
 * lock only after that writer released it.
 */
function delayNextRead(repo: UploadRepository, method: 'find' | 'findLiveByRequest', release: Promise<unknown>) {
  const original = repo[method].bind(repo) as (...args: unknown[]) => Promise<unknown>
  vi.spyOn(repo, method).mockImplementationOnce(async (...args: unknown[]) => {
    const row = await original(...args)
    await release
    return row as never
  })
}

// spec 4.12: a resent chunk that was already accepted is acknowledged, never written again;
// spec 4.5 / shared/uploads/types.ts: on any outcome the stored bytes stay as accepted.
describe('a resent chunk racing the writer that accepted it', () => {
  let h: Harness
  beforeEach(async () => { h = await harness({ uploadMaxChunkBytes: 1 * MB }) })
  afterEach(async () => {
    vi.restoreAllMocks()
    await h.close()
  })

  const file = bytes(2 * MB + 4321)
  const put = (index: number, extra = {}) => {
    const { fields, body } = chunkOf(file, MB, index, extra)
    return h.uploads.putChunk(alice, fields, stream(body))
  }
  /** Sends chunk `index` through a body that is only fed when `feed` is called. */
  const putSlowly = (index: number, extra = {}) => {
    const { fields, body } = chunkOf(file, MB, index, extra)
    const slow = new PassThrough()
    return { result: h.uploads.putChunk(alice, fields, slow), feed: () => slow.end(body) }
  }

  it('chunk n resent with uploadId, read before the first copy committed, is acknowledged and truncates nothing', async () => {
    const { uploadId } = await put(0)
    let firstDone!: () => void
    const firstCommitted = new Promise<void>((resolve) => { firstDone = resolve })
    delayNextRead(h.uploads.repo, 'find', firstCommitted)
    const resend = put(1, { uploadId }) // reads the session (nextChunkIndex 1), then waits
    const first = await put(1, { uploadId })
    expect(first).toMatchObject({ uploadId, nextChunkIndex: '2', complete: false })
    firstDone()

    expect(await resend).toEqual({ uploadId, nextChunkIndex: '2', complete: false, filePath: `upload://${uploadId}` })
    expect(statSync(h.uploads.filePath(uploadId)).size).toBe(2 * MB)
    expect(await h.uploads.repo.find(uploadId)).toMatchObject({ state: 'open', nextChunkIndex: 2, receivedBytes: 2 * MB })
    expect(await put(2, { uploadId })).toMatchObject({ nextChunkIndex: '3', complete: true })
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
  })

  it('chunk 0 resent by clientRequestId, found before the first copy committed, is acknowledged and truncates nothing', async () => {
    const first = putSlowly(0)
    await vi.waitFor(async () => expect((await h.uploads.capabilities()).activeSessions).toBe(1))
    let firstDone!: () => void
    const firstCommitted = new Promise<void>((resolve) => { firstDone = resolve })
    delayNextRead(h.uploads.repo, 'findLiveByRequest', firstCommitted)
    const resend = put(0) // finds the session (nextChunkIndex 0), then waits
    first.feed()
    const { uploadId } = await first.result
    firstDone()

    expect(await resend).toEqual({ uploadId, nextChunkIndex: '1', complete: false, filePath: `upload://${uploadId}` })
    expect(statSync(h.uploads.filePath(uploadId)).size).toBe(MB)
    expect(await h.uploads.repo.find(uploadId)).toMatchObject({ state: 'open', nextChunkIndex: 1, receivedBytes: MB })
    await put(1, { uploadId })
    await put(2, { uploadId })
    const claimed = await h.uploads.claim(uploadId, alice, 'image')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(file))
  })
})
