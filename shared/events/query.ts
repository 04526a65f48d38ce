import { Type } from '@sinclair/typebox'
import { eventKindNames } from './kinds.ts'

// Shared filters of the Event endpoints (docs/events.md "Event endpoints"). Times are ISO 8601;
// `startTime` is inclusive, `endTime` exclusive. They are applied by `ctx.events.history`
// (runtime/events/history.ts).
export const EventKindSchema = Type.Union(eventKindNames.map((k) => Type.Literal(k)))
export const EventFilter = {
  kinds: Type.Optional(Type.Array(EventKindSchema, { maxItems: 32, uniqueItems: true })),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  startTime: Type.Optional(Type.String({ format: 'date-time' })),
  endTime: Type.Optional(Type.String({ format: 'date-time' })),
}

/** EventPage's filters on the payload: the camera, task and label of analysis events (docs/events.md "Event endpoints"). */
export const PayloadFilter = {
  cameraId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Events of this camera (payload.cameraId).' })),
  taskId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Events of this stream task (payload.taskId).' })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Events about objects with this label (payload.label).' })),
}

/**
 * The recording area's event for a clip written after another event (`payload.eventId`,
 * `payload.clipUrl`): EventPage gives each event the clip recorded for it.
 */
export const CLIP_READY_KIND = 'recording.clipReady'
