import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'

/**
 * The Prometheus endpoint (docs/metrics.md "Metrics"). A handler, not a runtime route: the contract
 * already sends a returned `Response` as it is (the text exposition, not the envelope), and
 * the `scrape` auth mode lets a scraper use the configured token where it has no mtk. The
 * registry lives in the runtime and is reached through `ctx.metrics`. The spec shows no
 * metrics route; it sits with the other device routes under System (spec 4.10).
 */
export default defineHandler({
  routes: ['/gtw/cwai/System/Metrics'],
  auth: 'scrape',
  body: 'none',
  methods: ['GET'],
  summary: 'Prometheus metrics in the text exposition format: HTTP requests per route, uploads, inference per algorithm, event deliveries per channel, process memory and event-loop lag. mtk, or `Authorization: Bearer <METRICS_TOKEN>`.',
  input: Type.Object({}),
  async handle(_input, ctx) {
    const { contentType, body } = await ctx.metrics.render()
    return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } })
  },
})
