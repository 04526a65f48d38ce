import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { apiError, bytes, chunkOf, harness, identity, MB, stream, type Harness } from './harness.ts'

// spec 2.5, 8: reservation accounting under 8 concurrent uploads. The reserve is set so that only
// about 3.5 files fit in what is left, so admission must be serialized for the limit to hold.
//
// The disk is the real staging folder, but its free space is read as "a fixed amount minus
// what the staging folder holds": other test files writing and deleting on the same machine
// at the same time would otherwise move the limit under the test.
const DISK_BYTES = 10 * 1024 * 1024 * 1024

function stagedBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const full = path.join(dir, entry.name)
    return sum + (entry.isDirectory() ? stagedBytes(full) : statSync(full).size)
  }, 0)
}
describe('reservation accounting under 8 concurrent uploads', () => {
  let h: Harness
  afterEach(async () => { await h.close() })

  it('never admits more than fits above the reserve; the rejected ones get STORAGE_RESERVE_REACHED', async () => {
    const size = 32 * MB
    const reserve = DISK_BYTES - Math.floor(3.5 * size)
    let stagingDir = ''
    const statDisk = async () => ({ availableBytes: DISK_BYTES - stagedBytes(stagingDir), totalBytes: DISK_BYTES })
    h = await harness({ uploadReserveBytes: reserve, uploadMaxChunkBytes: 8 * MB }, { statDisk })
    stagingDir = h.uploads.stagingDir

    const file = bytes(size)
    let minHeadroom = Infinity
    const watch = async () => {
      const caps = await h.uploads.capabilities()
      minHeadroom = Math.min(minHeadroom, Number(caps.availableBytes) - Number(caps.reservedBySessionsBytes) - Number(caps.reserveBytes))
    }
    const upload = async (user: number) => {
      const who = identity(`user-${user}`)
      const first = chunkOf(file, 8 * MB, 0, { clientRequestId: `req-${user}` })
      const { uploadId } = await h.uploads.putChunk(who, first.fields, stream(first.body))
      for (let index = 1; index < 4; index++) {
        await watch()
        const next = chunkOf(file, 8 * MB, index, { clientRequestId: `req-${user}`, uploadId })
        await h.uploads.putChunk(who, next.fields, stream(next.body))
      }
      return uploadId
    }
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, user) => upload(user)))
    const admitted = results.filter((r) => r.status === 'fulfilled')
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')

    // 3 fit (3.5 in theory).
    expect(admitted).toHaveLength(3)
    for (const { reason } of refused) {
      const item = await apiError(Promise.reject(reason))
      expect(item).toMatchObject({ messageKey: 'api.error.storageReserveReached', recommendedAction: 'FREE_DISK_SPACE', details: { requiredBytes: size, reserveBytes: reserve } })
    }
    // Free space minus what admitted sessions still had to write never dipped below the reserve
    // (an uploadTemp session stores nothing but its bytes).
    expect(minHeadroom).toBeGreaterThanOrEqual(0)
    const caps = await h.uploads.capabilities()
    expect(caps).toMatchObject({ activeSessions: admitted.length, reservedBySessionsBytes: '0' })
  })

  it('an upload that fits only without the reservation of a session past its idle deadline expires that session and is admitted, before any sweep', async () => {
    const size = 4 * MB
    let stagingDir = ''
    const statDisk = async () => ({ availableBytes: DISK_BYTES - stagedBytes(stagingDir), totalBytes: DISK_BYTES })
    h = await harness({ uploadReserveBytes: DISK_BYTES - Math.floor(1.5 * size), uploadMaxChunkBytes: MB }, { statDisk })
    stagingDir = h.uploads.stagingDir
    const file = bytes(size)
    const first = chunkOf(file, MB, 0, { clientRequestId: 'idle' })
    const { uploadId: idle } = await h.uploads.putChunk(identity('a'), first.fields, stream(first.body))
    const second = chunkOf(file, MB, 0, { clientRequestId: 'next' })
    expect(await apiError(h.uploads.putChunk(identity('b'), second.fields, stream(second.body))))
      .toMatchObject({ messageKey: 'api.error.storageReserveReached' })
    expect(await h.uploads.repo.find(idle)).toMatchObject({ state: 'open' })

    h.clock.advance(h.config.uploadIdleTimeoutMs)
    const { uploadId } = await h.uploads.putChunk(identity('b'), second.fields, stream(second.body))
    expect(await h.uploads.repo.find(idle)).toMatchObject({ state: 'expired', endReason: 'idle' })
    expect(await h.uploads.repo.find(uploadId)).toMatchObject({ state: 'open', receivedBytes: MB })
    expect(await h.uploads.capabilities()).toMatchObject({ activeSessions: 1, reservedBySessionsBytes: String(size - MB) })
  })
})
