import type { Context } from 'hono'
import { secureHeaders } from 'hono/secure-headers'

/**
 * hono's secure headers (nosniff, no referrer, same-origin resource and opener policies, no
 * X-Powered-By...) on every answer, less Strict-Transport-Security: the device serves plain
 * HTTP on its network, where browsers ignore it, and a TLS front end would set its own.
 * Nothing of the device is meant to be framed.
 */
const BASE = { strictTransportSecurity: false, xFrameOptions: 'DENY' } as const

export const securityHeaders = () => secureHeaders(BASE)

/**
 * The device's WebSocket listener, on whatever port it bound (spec 6; WS_PORT=0 picks one).
 * URL's hostname keeps an IPv6 address in its brackets.
 */
const deviceWebSocket = (c: Context) => `ws://${new URL(c.req.url).hostname}:*`

/**
 * The console talks to no host but the device: same origin, plus the device's WebSocket
 * listener. Its scripts and styles are bundled files (runtime/console/index.html has no inline
 * ones), so neither needs 'unsafe-inline'; images it shows are data: and blob: URLs.
 */
export const consoleSecurityHeaders = () =>
  secureHeaders({
    ...BASE,
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      imgSrc: ["'self'", 'data:', 'blob:'],
      // The Audio page plays an audio file's preview, fetched with the mtk, from a blob: URL.
      mediaSrc: ["'self'", 'blob:'],
      connectSrc: ["'self'", deviceWebSocket],
      styleSrc: ["'self'"],
      scriptSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      frameAncestors: ["'none'"],
    },
  })
