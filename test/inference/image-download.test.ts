/**
 * imageUrl downloads (spec 4.7, 4.11): a timeout and a budget derived from the free memory,
 * against a real HTTP server on loopback. The HTTP-level cases (404, redirects, too large)
 * are in detect-flow.test.ts.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { downloadImage } from '../../runtime/tasks/image-source.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Ctx } from '../../shared/handler.ts'

const IMAGE_BYTES = 200_000

describe('imageUrl download: timeout and memory budget (spec 4.11)', () => {
  let server: http.Server
  let base: string
  const stalled: http.ServerResponse[] = []

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      if (request.url === '/stalls') {
        // Headers, a first byte, then nothing: only the device's timeout ends this.
        response.writeHead(200, { 'content-type': 'image/jpeg' })
        response.write(Buffer.from([0xff]))
        stalled.push(response)
        return
      }
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'image/jpeg' }
      if (request.url === '/declared') headers['content-length'] = IMAGE_BYTES
      response.writeHead(200, headers)
      response.end(Buffer.alloc(IMAGE_BYTES, 7))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    for (const response of stalled) response.destroy()
    await new Promise((resolve) => server.close(resolve))
  })

  const ctx = (config: Partial<Ctx['config']>) => ({
    signal: new AbortController().signal,
    config: { maxEncodedImageBytes: 8 * 1024 * 1024, imageDownloadTimeoutMs: 15_000, imageDownloadMemoryShare: 0.1, ...config },
  }) as Pick<Ctx, 'config' | 'signal'>
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    return (error as ApiError).item
  }

  it('a server that stops sending fails with ImageDownloadFailed once the configured timeout passes', async () => {
    const item = await refusal(downloadImage(`${base}/stalls`, ctx({ imageDownloadTimeoutMs: 300 })))
    expect(item).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed', details: { reason: 'timed out' } })
  })

  it('an image larger than the share of free memory fails with ImageDownloadFailed naming the budget, declared or not', async () => {
    // A share that leaves a budget of about 20 kB of today's free memory: below the image, far below maxEncodedImageBytes.
    const share = 20_000 / os.freemem()
    for (const route of ['/declared', '/chunked']) {
      const item = await refusal(downloadImage(`${base}${route}`, ctx({ imageDownloadMemoryShare: share })))
      expect(item, route).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed', details: { reason: 'the image exceeds the download budget of the free memory' } })
      expect(item.details.limitBytes, route).toBeLessThan(IMAGE_BYTES)
    }
  })

  it('the same image within the budget downloads whole', async () => {
    const source = await downloadImage(`${base}/chunked`, ctx({}))
    expect(source).toMatchObject({ kind: 'bytes' })
    expect((source as unknown as { bytes: Buffer }).bytes.equals(Buffer.alloc(IMAGE_BYTES, 7))).toBe(true)
  })
})
