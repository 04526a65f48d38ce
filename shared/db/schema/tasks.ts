import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Image-analysis tasks (spec 2.4, 3.2). A `created` task is loaded into the inference
 * sidecar at start, so a client's taskId keeps working across restarts; `cancelled` rows
 * stay for the record until the task id is created again.
 */
export const tasks = sqliteTable('tasks', {
  taskId: text('task_id').primaryKey(),
  algorithmCode: text('algorithm_code').notNull(),
  /** spec 2.4 `taskConfig` as sent (JSON). */
  taskConfig: text('task_config', { mode: 'json' }).notNull().$type<Record<string, unknown>>(),
  state: text('state', { enum: ['created', 'cancelled'] }).notNull(),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('tasks_state_idx').on(t.state)])
