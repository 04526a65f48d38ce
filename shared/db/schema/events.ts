import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * The event outbox (docs/architecture.md "State, uploads, events"). Every event is written here
 * first, in the same transaction as the state change that caused it where there is one;
 * channels then read it in id order. AUTOINCREMENT ids are never reused, so an id is a
 * stable resume point ("last seen id") even after pruning.
 */
export const events = sqliteTable('events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  kind: text('kind').notNull(),
  /** Milliseconds since the epoch. */
  time: integer('time').notNull(),
  source: text('source').notNull(),
  /** JSON text. */
  payload: text('payload').notNull(),
}, (t) => [
  index('events_kind_time_idx').on(t.kind, t.time),
  index('events_time_idx').on(t.time),
  index('events_source_time_idx').on(t.source, t.time),
])

/** Per-channel delivery cursors: the highest event id a channel has delivered (at-least-once). */
export const eventCursors = sqliteTable('event_cursors', {
  channel: text('channel').primaryKey(),
  lastId: integer('last_id').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/** Webhook deliveries that used up their attempts: the dead-letter state operators see. */
export const webhookDeadLetters = sqliteTable('webhook_dead_letters', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  eventId: integer('event_id').notNull(),
  url: text('url').notNull(),
  attempts: integer('attempts').notNull(),
  lastError: text('last_error').notNull(),
  firstAttemptAt: integer('first_attempt_at').notNull(),
  deadAt: integer('dead_at').notNull(),
}, (t) => [index('webhook_dead_letters_dead_at_idx').on(t.deadAt)])

/**
 * Settings changed at run time through the System endpoints (MQTT, webhook). A row overrides
 * the configuration defaults of its area; `value` is JSON.
 */
export const systemSettings = sqliteTable('system_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
