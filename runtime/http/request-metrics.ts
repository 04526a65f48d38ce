import type { MiddlewareHandler } from 'hono'
import type { DeviceMetrics } from '../metrics/index.ts'

/** The `route` label of a path that no route answers: a raw URL would let a client grow the label set without bound. */
export const UNMATCHED_ROUTE = 'unmatched'

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * One counter increment and one histogram observation per request (the detect path is
 * benchmarked), labelled by the route pattern `routeOf` finds for the path, never the path.
 * The duration runs to the response headers: a streamed file's body may take longer.
 */
export const requestMetrics = (http: DeviceMetrics['http'], routeOf: (path: string) => string | undefined): MiddlewareHandler =>
  async function requestMetrics(c, next) {
    const started = performance.now()
    await next()
    const route = routeOf(c.req.path) ?? UNMATCHED_ROUTE
    const method = METHODS.has(c.req.method) ? c.req.method : 'other'
    http.requests.inc({ route, method, status: c.res.status })
    http.duration.observe({ route, method }, (performance.now() - started) / 1000)
  }
