import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Stream tasks (spec 4.9 TaskCreate/TaskCancle): continuous analysis of one camera with one
 * algorithm. A row exists while the task does (TaskCancle deletes it); the device resumes
 * every row when it starts.
 */
export const streamTasks = sqliteTable('stream_tasks', {
  taskId: text('task_id').primaryKey(),
  /** The operator's name (TaskCreate `taskName`); null: none, the taskId is shown. */
  taskName: text('task_name'),
  algorithmCode: text('algorithm_code').notNull(),
  cameraId: text('camera_id').notNull(),
  targetFps: real('target_fps').notNull(),
  /** spec 2.4 `taskConfig` as sent (JSON). */
  taskConfig: text('task_config', { mode: 'json' }).notNull().$type<Record<string, unknown>>(),
  /** Motion gating (default on) and the detector's minimum interval while nothing moves. */
  motionGating: integer('motion_gating', { mode: 'boolean' }).notNull(),
  minDetectIntervalMs: integer('min_detect_interval_ms').notNull(),
  /** With motion gating, while objects are tracked and the motion lies on them: the detector's interval (rows from before it: the default). */
  trackedDetectIntervalMs: integer('tracked_detect_interval_ms').notNull().default(1000),
  /** With motion gating, detect crops around the motion regions (default on; rows from before it: on). */
  regionDetection: integer('region_detection', { mode: 'boolean' }).notNull().default(true),
  /** A disabled task keeps its settings and reads nothing (Task/switch, batch stop). */
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  /** spec 4.10 Schedule: outside its windows the task reads frames but analyses none; null = always. */
  scheduleId: text('schedule_id'),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
