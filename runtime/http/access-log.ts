import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../../shared/handler.ts'

/**
 * One structured line per request; never headers or bodies (they carry mtk and passwords).
 * A client's periodic read (header `x-poll: 1`, docs/console-and-cli.md "Logs") that
 * succeeds is written at debug level: a console left open does not flood the info log.
 */
export const accessLog = (log: Logger): MiddlewareHandler<{ Variables: { requestId: string } }> =>
  async function accessLog(c, next) {
    const started = performance.now()
    await next()
    const quiet = c.req.header('x-poll') === '1' && c.res.status < 400
    log[quiet ? 'debug' : 'info']({ requestId: c.get('requestId'), method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request')
  }
