/**
 * imageUrl downloads (spec 4.7, 4.11): a timeout and a budget derived from the free memory,
 * against a real HTTP server on loopback. The HTTP-level cases (404, redirects, too large)
 * are in detect-flow.integration.test.ts.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { downloadImage } from '../../runtime/tasks/image-source.ts'
import { AddressGuard } from '../../runtime/tasks/address-guard.ts'
import { settings } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { Ctx } from '../../shared/handler.ts'

const IMAGE_BYTES = 200_000

describe('imageUrl download: timeout, memory budget and refused networks (spec 4.11)', () => {
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
      if (request.url === '/to-metadata') {
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
        return response.end()
      }
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
    // The image server is on loopback, which the default setting refuses (last describe).
    config: { maxEncodedImageBytes: 8 * 1024 * 1024, imageDownloadTimeoutMs: 15_000, imageDownloadMemoryShare: 0.1, imageUrlBlockedNetworks: '169.254.0.0/16', ...config },
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

  it('a redirect to a refused network is not followed', async () => {
    const item = await refusal(downloadImage(`${base}/to-metadata`, ctx({})))
    expect(item).toMatchObject({ messageKey: 'api.error.ImageDownloadFailed', details: { host: '169.254.169.254', address: '169.254.169.254' } })
    expect(item.details.reason).toContain('IMAGE_URL_BLOCKED_NETWORKS')
  })

  it('with the default IMAGE_URL_BLOCKED_NETWORKS the device itself, link-local and multicast are refused, by address or by name', async () => {
    const port = (server.address() as AddressInfo).port
    const byDefault = ctx({ imageUrlBlockedNetworks: settings.imageUrlBlockedNetworks.default })
    const cases: [string, string[]][] = [
      [`http://127.0.0.1:${port}/chunked`, ['127.0.0.1']],
      [`http://127.9.9.9:${port}/chunked`, ['127.9.9.9']],
      [`http://[::1]:${port}/chunked`, ['::1']],
      [`http://[::ffff:127.0.0.1]:${port}/chunked`, ['::ffff:7f00:1']],
      [`http://0.0.0.0:${port}/chunked`, ['0.0.0.0']],
      ['http://169.254.169.254/latest/meta-data/', ['169.254.169.254']],
      ['http://224.0.0.1/x.jpg', ['224.0.0.1']],
      // A name is checked in the connection's own lookup.
      [`http://localhost:${port}/chunked`, ['127.0.0.1', '::1']],
    ]
    for (const [url, addresses] of cases) {
      const item = await refusal(downloadImage(url, byDefault))
      expect(item.messageKey, url).toBe('api.error.ImageDownloadFailed')
      expect(addresses, url).toContain(item.details.address)
    }
  })

  it('refuses a setting that is not a list of CIDRs, naming the entry', () => {
    expect(() => new AddressGuard('10.0.0.0/8,example.com/24')).toThrow('"example.com/24"')
    expect(() => new AddressGuard('10.0.0.0/33')).toThrow('"10.0.0.0/33"')
    expect(new AddressGuard('none').blocked('127.0.0.1')).toBe(false)
    expect(new AddressGuard('10.0.0.0/8').blocked('::ffff:10.1.2.3')).toBe(true)
  })
})
