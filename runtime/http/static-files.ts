import path from 'node:path'
import { Hono } from 'hono'
import { serveStatic } from '@hono/node-server/serve-static'
import type { Services } from '../../shared/handler.ts'
import { distDir } from '../paths.ts'
import { consoleSecurityHeaders } from './security-headers.ts'

/**
 * Public static files built by build.mjs: the console (`/console/`) and the packaged interface
 * documents (`/staticfile/`, spec 4.11, 9). They need no mtk; every API call they make does.
 * Paths with `..`, doubled slashes or backslashes never leave the folder (serveStatic refuses them).
 */
export function staticFiles(services: Services) {
  const root = services.config.functionsDir ? path.resolve(services.config.functionsDir, '..') : distDir
  const app = new Hono()
  app.get('/', (c) => c.redirect('/console/', 302))
  app.get('/console', (c) => c.redirect('/console/', 301))
  // What the console cannot learn from a static file: the port the event WebSocket listener
  // actually bound (spec 6; WS_PORT=0 picks a free one).
  app.get('/console/device.json', async (c) => {
    const status = await services.events.settings.status().catch(() => null)
    return c.json({ wsPort: status?.websocket.port || services.config.wsPort })
  })
  app.use('/console/*', consoleSecurityHeaders())
  app.use('/console/*', serveStatic({ root }))
  app.use('/staticfile/*', serveStatic({ root }))
  return app
}

/** The mount a path of these static files belongs to, as the metrics' `route` label. */
export function staticRouteOf(path: string): string | undefined {
  if (path === '/') return '/'
  if (path === '/console' || path.startsWith('/console/')) return '/console/*'
  if (path.startsWith('/staticfile/')) return '/staticfile/*'
  return undefined
}
