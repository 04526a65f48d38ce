import { Hono } from 'hono'
import { afterEach, beforeEach } from 'vitest'
import type { Identity, Services } from '../../shared/handler.ts'
import { TUS_PATH, tusEndpoint } from '../../runtime/uploads/tus.ts'
import { alice, harness, type Harness } from './harness.ts'

/**
 * The native tus endpoint in process, over a harness's upload service (as runtime/http/app.ts
 * mounts it), with `mtk` = a user id of `users`. Answers like the device, without a server.
 */
export function tusApp(h: Harness, users: Identity[]) {
  const services = {
    config: h.config,
    sessions: { resolve: async (mtk?: string) => users.find((user) => user.userId === mtk) ?? null },
  } as unknown as Services
  const app = new Hono()
  const tus = tusEndpoint(services, h.uploads)
  app.all(TUS_PATH, tus)
  app.all(`${TUS_PATH}/*`, tus)

  const request = (method: string, url: string, mtk: string, headers: Record<string, string> = {}, body?: BodyInit) =>
    app.request(url, { method, headers: { 'Tus-Resumable': '1.0.0', mtk, ...headers }, ...(body ? { body, duplex: 'half' } : {}) } as RequestInit)
  return {
    request,
    /** tus creation; returns the response and the upload's URL and id. */
    async create(mtk: string, length: number, metadata = 'purpose aW1hZ2U=') {
      const response = await request('POST', TUS_PATH, mtk, { 'Upload-Length': String(length), 'Upload-Metadata': metadata })
      const url = response.headers.get('location') ?? ''
      return { response, url, uploadId: url.split('/').pop() ?? '' }
    },
    patch(mtk: string, url: string, offset: number, body: BodyInit) {
      return request('PATCH', url, mtk, { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) }, body)
    },
  }
}

/** A fresh harness and tus app (user alice) for each test of the calling describe block. */
export function tusPerTest(): { h: Harness; tus: ReturnType<typeof tusApp> } {
  const current = {} as { h: Harness; tus: ReturnType<typeof tusApp> }
  beforeEach(async () => {
    current.h = await harness()
    current.tus = tusApp(current.h, [alice])
  })
  afterEach(async () => { await current.h.close() })
  return current
}
