import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../../shared/handler.ts'

/** One structured line per request; never headers or bodies (they carry mtk and passwords). */
export const accessLog = (log: Logger): MiddlewareHandler<{ Variables: { requestId: string } }> =>
  async function accessLog(c, next) {
    const started = performance.now()
    await next()
    log.info({ requestId: c.get('requestId'), method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request')
  }
