import { Type } from '@sinclair/typebox'
import { defineHandler } from '../../shared/handler.ts'
import { PageNumber, PageSize } from '../../shared/http/paging.ts'

const Input = Type.Object({
  pageNum: PageNumber(),
  pageSize: PageSize(20, 500),
}, { additionalProperties: false })

export default defineHandler({
  routes: ['/gtw/cwai/System/QueryWebhookDeadLetters'],
  auth: 'session',
  body: 'json',
  summary: 'Webhook deliveries that used up their attempts (dead letters), newest first, with the event when still retained.',
  input: Input,
  async handle({ pageNum, pageSize }, ctx) {
    const { total, rows } = await ctx.events.history.deadLetters(pageNum, pageSize)
    return {
      total,
      pageNum,
      pageSize,
      rows: rows.map((dead) => ({
        eventId: dead.eventId,
        url: dead.url,
        attempts: dead.attempts,
        lastError: dead.lastError,
        firstAttemptAt: new Date(dead.firstAttemptAt).toISOString(),
        deadAt: new Date(dead.deadAt).toISOString(),
        event: dead.event ? { id: dead.event.id, kind: dead.event.kind, time: new Date(dead.event.time).toISOString(), source: dead.event.source, payload: JSON.parse(dead.event.payload) } : null,
      })),
    }
  },
})
