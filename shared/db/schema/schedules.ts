import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { DateException, WeeklyWindow } from '../../schedules/windows.ts'

/**
 * Schedules (spec 4.10 Schedule): weekly windows and date exceptions, in the device's time
 * zone. Stream tasks (`stream_tasks.schedule_id`) and alarm policies refer to them; one in use
 * is not deleted.
 */
export const schedules = sqliteTable('schedules', {
  scheduleId: text('schedule_id').primaryKey(),
  scheduleName: text('schedule_name').notNull().unique(),
  description: text('description').notNull().default(''),
  windows: text('windows', { mode: 'json' }).notNull().$type<WeeklyWindow[]>(),
  exceptions: text('exceptions', { mode: 'json' }).notNull().$type<DateException[]>(),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
