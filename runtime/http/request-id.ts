import { randomUUID } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Gives every request an id (a sane incoming X-Request-Id is kept) and echoes it in the response. */
export const requestId = (): MiddlewareHandler<{ Variables: { requestId: string } }> =>
  async function requestId(c, next) {
    const incoming = c.req.header('x-request-id')
    const id = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID()
    c.set('requestId', id)
    c.header('X-Request-Id', id)
    await next()
  }
