import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Recording (spec 4.10 System: recording). Per camera: off, event clips or continuous, with
 * the pre- and post-roll of event clips. A camera without a row is not recorded. The
 * retention settings (days, budget) are a `system_settings` row (key `recording`).
 */
export const recordingCameras = sqliteTable('recording_cameras', {
  cameraId: text('camera_id').primaryKey(),
  mode: text('mode', { enum: ['off', 'events', 'continuous'] }).notNull(),
  preRollSeconds: integer('pre_roll_seconds').notNull(),
  postRollSeconds: integer('post_roll_seconds').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * Recorded clips: one mp4 per event (an object's visit, an alarm) or per piece of continuous
 * recording, under `DATA_DIR/recordings/<cameraId>/`. Retention deletes the oldest first.
 */
export const recordingClips = sqliteTable('recording_clips', {
  clipId: text('clip_id').primaryKey(),
  cameraId: text('camera_id').notNull(),
  kind: text('kind', { enum: ['event', 'continuous'] }).notNull(),
  /** The object.entered or alarm.raised event the clip belongs to (event clips). */
  eventId: integer('event_id'),
  eventKind: text('event_kind'),
  taskId: text('task_id'),
  objectId: text('object_id'),
  /** Wall-clock ms of the first frame and after the last one. */
  startTime: integer('start_time').notNull(),
  endTime: integer('end_time').notNull(),
  /** Video in the file: the span less any gap while the camera was reconnected. */
  durationMs: integer('duration_ms').notNull(),
  bytes: integer('bytes').notNull(),
  /** Relative to DATA_DIR. */
  file: text('file').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [
  index('recording_clips_start_idx').on(t.startTime),
  index('recording_clips_camera_start_idx').on(t.cameraId, t.startTime),
  index('recording_clips_event_idx').on(t.eventId),
])

/**
 * The events an event clip belongs to (docs/recording-and-live-view.md "Recording": one clip
 * per object): an object's visit (object.entered) and the alarms raised on it share one clip,
 * each with a row here. `promisedId`: the clip id an alarm policy's clip action put in the
 * alarm's `clipUrl` before the clip was written; that URL serves this clip.
 */
export const recordingClipEvents = sqliteTable('recording_clip_events', {
  clipId: text('clip_id').notNull(),
  eventId: integer('event_id'),
  eventKind: text('event_kind').notNull(),
  promisedId: text('promised_id'),
}, (t) => [
  index('recording_clip_events_clip_idx').on(t.clipId),
  index('recording_clip_events_event_idx').on(t.eventId),
  index('recording_clip_events_promised_idx').on(t.promisedId),
])
