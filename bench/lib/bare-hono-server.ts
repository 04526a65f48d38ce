/**
 * The baseline of the HTTP overhead benchmark: a bare hono route on @hono/node-server that
 * answers POST `<route>` with a fixed JSON payload (the device route's own response body, so
 * both sides serialise the same JSON). No middleware, no auth, no logging.
 *
 * Run as a child process: `node --import tsx bench/lib/bare-hono-server.ts <route> <payload.json>`;
 * prints `{"port":N}` once listening on 127.0.0.1 and exits on SIGTERM.
 */
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const [route, payloadFile] = process.argv.slice(2)
if (!route || !payloadFile) throw new Error('usage: bare-hono-server.ts <route> <payload.json>')
const payload: unknown = JSON.parse(readFileSync(payloadFile, 'utf8'))

const app = new Hono()
app.post(route, async (c) => {
  await c.req.json() // read the small JSON body, as the device route does
  return c.json(payload as object)
})

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  process.stdout.write(JSON.stringify({ port: info.port }) + '\n')
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
