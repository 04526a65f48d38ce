import { Hono } from 'hono'
import type { Services } from '../../shared/handler.ts'
import { requestId } from 'hono/request-id'
import { securityHeaders } from './security-headers.ts'
import { accessLog } from './access-log.ts'
import { dispatch } from './dispatch.ts'
import type { InFlight } from './inflight.ts'
import { requestMetrics } from './request-metrics.ts'
import type { RouteTable } from './route-table.ts'
import { InputValidator } from './validate.ts'
import { staticFiles, staticRouteOf } from './static-files.ts'
import type { DeviceMetrics } from '../metrics/index.ts'
import type { UploadManager } from '../uploads/service.ts'
import { TUS_PATH, tusEndpoint } from '../uploads/tus.ts'

type Vars = { Variables: { requestId: string } }

export interface AppParts {
  /** Mounts the native tus endpoint on it. */
  uploads?: UploadManager
  /** Counts every request (docs/metrics.md "Metrics"). */
  metrics?: DeviceMetrics
  /** Shared with the MQTT request route (spec 5.6). */
  validator?: InputValidator
}

/** The hono app: small named middleware, then the route table. */
export function createApp(services: Services, table: RouteTable, inflight: InFlight, { uploads, metrics, validator = new InputValidator() }: AppParts = {}) {
  const app = new Hono<Vars>()
  // A sane incoming X-Request-Id (at most 128 letters, digits, '_', '-', '=') is kept, else a UUID.
  app.use('*', requestId({ limitLength: 128 }))
  app.use('*', securityHeaders())
  app.use('*', accessLog(services.log))
  if (metrics) {
    const isTus = (path: string) => uploads !== undefined && (path === TUS_PATH || path.startsWith(`${TUS_PATH}/`))
    app.use('*', requestMetrics(metrics.http, (path) => table.lookup(path)?.route.path ?? (isTus(path) ? TUS_PATH : staticRouteOf(path))))
  }
  app.use('*', inflight.middleware())
  app.route('/', staticFiles(services))
  if (uploads) {
    // The native tus endpoint (spec 4.12): not a handler bundle, since it owns a path prefix.
    const tus = tusEndpoint(services, uploads)
    app.all(TUS_PATH, tus)
    app.all(`${TUS_PATH}/*`, tus)
  }
  app.all('*', dispatch({ services, table, validator }))
  return app
}
