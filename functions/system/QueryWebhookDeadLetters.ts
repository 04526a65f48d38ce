import { Type } from '@sinclair/typebox'
import { count, desc, eq } from 'drizzle-orm'
import { defineHandler } from '../../shared/handler.ts'
import { events, webhookDeadLetters } from '../../shared/db/schema/index.ts'
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
    const [total] = await ctx.db.select({ n: count() }).from(webhookDeadLetters)
    const rows = await ctx.db.select({ dead: webhookDeadLetters, event: events }).from(webhookDeadLetters)
      .leftJoin(events, eq(events.id, webhookDeadLetters.eventId))
      .orderBy(desc(webhookDeadLetters.id)).limit(pageSize).offset((pageNum - 1) * pageSize)
    return {
      total: total?.n ?? 0,
      pageNum,
      pageSize,
      rows: rows.map(({ dead, event }) => ({
        eventId: dead.eventId,
        url: dead.url,
        attempts: dead.attempts,
        lastError: dead.lastError,
        firstAttemptAt: new Date(dead.firstAttemptAt).toISOString(),
        deadAt: new Date(dead.deadAt).toISOString(),
        event: event ? { id: event.id, kind: event.kind, time: new Date(event.time).toISOString(), source: event.source, payload: JSON.parse(event.payload) } : null,
      })),
    }
  },
})
