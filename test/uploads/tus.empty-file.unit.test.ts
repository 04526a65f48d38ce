import { readFileSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { uploadSessions } from '../../shared/db/schema/uploads.ts'
import { alice, apiError, sha256 } from './harness.ts'
import { tusPerTest } from './tus-app.ts'

const base64 = (text: string) => Buffer.from(text).toString('base64')

// An empty file is a valid upload (uploadTemp takes it as one empty chunk, runtime/uploads/rules.ts);
// over tus it is finished at creation, with no PATCH at all.
describe('a zero-byte tus upload', () => {
  const t = tusPerTest()

  it('is complete at creation and can be claimed once', async () => {
    const { response, url, uploadId } = await t.tus.create('alice', 0, `filename ${base64('empty.txt')},purpose ${base64('image')}`)
    expect(response.status).toBe(201)
    expect(response.headers.get('upload-expires')).toBeNull()
    const head = await t.tus.request('HEAD', url, 'alice')
    expect([head.status, head.headers.get('upload-offset'), head.headers.get('upload-length')]).toEqual([200, '0', '0'])
    expect(await t.h.uploads.repo.find(uploadId)).toMatchObject({ state: 'complete', nextChunkIndex: 1, receivedBytes: 0, totalSize: 0 })
    expect(await t.h.uploads.capabilities()).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: '0' })

    const claimed = await t.h.uploads.claim(uploadId, alice, 'image')
    expect(claimed).toMatchObject({ uploadId, originalFilename: 'empty.txt', size: 0, purpose: 'image', sha256: null })
    expect(readFileSync(claimed.path).length).toBe(0)
    expect(await apiError(t.h.uploads.claim(uploadId, alice, 'image'))).toMatchObject({ messageKey: 'api.error.uploadConsumed' })
    expect(await t.h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
  })

  it('with a sha256 that is not the empty digest fails at creation (460) and leaves nothing open', async () => {
    const wrong = sha256(Buffer.from('not empty'))
    const { response } = await t.tus.create('alice', 0, `purpose ${base64('image')},sha256 ${base64(wrong)}`)
    expect(response.status).toBe(460)
    expect(await t.h.uploads.capabilities()).toMatchObject({ activeSessions: 0, reservedBySessionsBytes: '0' })
    expect(await t.h.db.db.select().from(uploadSessions).where(eq(uploadSessions.state, 'failed'))).toEqual([expect.objectContaining({ totalSize: 0, endReason: 'sha256 mismatch' })])
  })

  it('with the empty digest as sha256 completes', async () => {
    const { response, uploadId } = await t.tus.create('alice', 0, `purpose ${base64('image')},sha256 ${base64(sha256(Buffer.alloc(0)))}`)
    expect(response.status).toBe(201)
    expect(await t.h.uploads.claim(uploadId, alice, 'image')).toMatchObject({ size: 0, sha256: sha256(Buffer.alloc(0)) })
  })
})
