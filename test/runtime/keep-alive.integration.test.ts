/**
 * A connection the client keeps for its next request is not closed under it (docs/architecture.md
 * "How a request travels"): a client busy for a few seconds between two requests sends the
 * second on the same connection and gets its answer. The server closed idle connections after
 * node's 5 s, so such a request met a socket closing under it ("other side closed", no answer).
 */
import { expect } from 'vitest'
import { deviceTest as test } from '../helpers/device-fixture.ts'

test('a request sent on a connection idle for 6 s, while the client was too busy to see it close, is answered', async ({ device, mtk }) => {
  const cancel = () => fetch(`${device.url}/v1/cwai/aihost/PTaskCancle`, { method: 'POST', headers: { mtk, 'content-type': 'application/json' }, body: '{"taskId":"none"}' })
  const first = await cancel()
  expect(first.headers.get('keep-alive')).toMatch(/^timeout=\d+$/)
  const advertised = Number(first.headers.get('keep-alive')!.slice('timeout='.length))
  expect(advertised).toBeGreaterThanOrEqual(60)
  await first.arrayBuffer()
  // The client's event loop is blocked (a slow synchronous step: key generation, a big parse):
  // it cannot notice a close meanwhile, and sends the next request on the pooled connection.
  const until = Date.now() + 6000
  while (Date.now() < until) { /* busy */ }
  const second = await cancel()
  expect(second.status).toBe(200)
  expect((await second.json()).resMsg[0].messageKey).toBe('api.error.NotCreated')
})
