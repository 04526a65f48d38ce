import { existsSync, readFileSync, statSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { alice, bytes, sha256 } from './harness.ts'
import { tusPerTest } from './tus-app.ts'

/** A request body fed by the test, to hold a PATCH in flight. */
function slowBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start(c) { controller = c } })
  return { body, send: (data: Buffer) => controller.enqueue(new Uint8Array(data)), end: () => controller.close() }
}

// spec 3.1 / 8: a chunk being received is activity. A tus PATCH in flight holds the session's
// write lock like an uploadTemp chunk: the sweeper leaves it alone, cancelUpload stops it.
describe('tus PATCH in flight', () => {
  const t = tusPerTest()

  const data = bytes(64 * 1024)
  const startPatch = async () => {
    const { response, url, uploadId } = await t.tus.create('alice', data.length)
    expect(response.status).toBe(201)
    const slow = slowBody()
    const patching = t.tus.patch('alice', url, 0, slow.body)
    slow.send(data.subarray(0, 1000))
    await vi.waitFor(() => expect(statSync(t.h.uploads.filePath(uploadId)).size).toBe(1000))
    return { url, uploadId, slow, patching }
  }

  it('is not expired by the sweeper however long it takes; it renews the idle timer when done', async () => {
    const { uploadId, slow, patching } = await startPatch()
    t.h.clock.advance(t.h.config.uploadIdleTimeoutMs * 2)
    expect(await t.h.uploads.sweep()).toEqual({ expired: 0, deletedFiles: 0 })
    expect(await t.h.uploads.capabilities()).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: String(data.length) })
    slow.send(data.subarray(1000))
    slow.end()
    const response = await patching
    expect(response.status).toBe(204)
    expect(response.headers.get('upload-offset')).toBe(String(data.length))
    expect(await t.h.uploads.repo.find(uploadId)).toMatchObject({ state: 'complete', receivedBytes: data.length, lastActivityAt: t.h.clock.now() })
    const claimed = await t.h.uploads.claim(uploadId, alice, 'image')
    expect(sha256(readFileSync(claimed.path))).toBe(sha256(data))
  })

  it('is stopped by cancelUpload: 410 uploadCancelled, reservation released, bytes deleted', async () => {
    const { uploadId, patching } = await startPatch()
    await t.h.uploads.cancel(alice, uploadId) // must not wait for the rest of the body
    const response = await patching
    expect(response.status).toBe(410)
    expect((await response.json() as { resMsg: unknown[] }).resMsg[0]).toMatchObject({ messageKey: 'api.error.uploadCancelled', details: { uploadId, state: 'cancelled' } })
    expect(await t.h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(existsSync(t.h.uploads.filePath(uploadId))).toBe(false)
    expect(await t.h.uploads.repo.find(uploadId)).toMatchObject({ state: 'cancelled' })
  })
})
