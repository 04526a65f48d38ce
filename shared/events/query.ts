import { Type } from '@sinclair/typebox'
import { and, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm'
import { events } from '../db/schema/index.ts'
import { invalidParam } from '../errors/index.ts'
import { eventKindNames } from './kinds.ts'

// Shared filters of the Event endpoints (docs/events.md "Event endpoints"). Times are ISO 8601;
// `startTime` is inclusive, `endTime` exclusive.
export const EventKindSchema = Type.Union(eventKindNames.map((k) => Type.Literal(k)))
export const EventFilter = {
  kinds: Type.Optional(Type.Array(EventKindSchema, { maxItems: 32, uniqueItems: true })),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  startTime: Type.Optional(Type.String({ format: 'date-time' })),
  endTime: Type.Optional(Type.String({ format: 'date-time' })),
}

export interface EventFilterInput {
  kinds?: string[]
  source?: string
  startTime?: string
  endTime?: string
}

/** The WHERE conditions of a filter; an empty or inverted time range is InvalidParam. */
export function eventConditions(filter: EventFilterInput, restrictKinds?: readonly string[]): SQL[] {
  const start = filter.startTime === undefined ? null : Date.parse(filter.startTime)
  const end = filter.endTime === undefined ? null : Date.parse(filter.endTime)
  if (start !== null && end !== null && start >= end) throw invalidParam('/endTime', 'must be later than startTime')
  const conditions: SQL[] = []
  let kinds = filter.kinds && filter.kinds.length > 0 ? filter.kinds : null
  if (restrictKinds) kinds = kinds ? kinds.filter((k) => restrictKinds.includes(k)) : [...restrictKinds]
  if (kinds) conditions.push(kinds.length ? inArray(events.kind, kinds) : eq(events.id, -1))
  if (filter.source) conditions.push(eq(events.source, filter.source))
  if (start !== null) conditions.push(gte(events.time, start))
  if (end !== null) conditions.push(lt(events.time, end))
  return conditions
}

export const whereAll = (conditions: SQL[]) => (conditions.length ? and(...conditions) : undefined)

/** EventPage's filters on the payload: the camera, task and label of analysis events (docs/events.md "Event endpoints"). */
export const PayloadFilter = {
  cameraId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Events of this camera (payload.cameraId).' })),
  taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Events of this stream task (payload.taskId).' })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Events about objects with this label (payload.label).' })),
}

export function payloadConditions(filter: { cameraId?: string; taskId?: string; label?: string }): SQL[] {
  return (['cameraId', 'taskId', 'label'] as const).filter((field) => filter[field] !== undefined)
    .map((field) => sql`json_extract(${events.payload}, ${`$.${field}`}) = ${filter[field]}`)
}

/**
 * The recording area's event for a clip written after another event (`payload.eventId`,
 * `payload.clipUrl`): EventPage gives each event the clip recorded for it.
 */
export const CLIP_READY_KIND = 'recording.clipReady'
