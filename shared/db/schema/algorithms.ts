import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * The algorithm rows of spec 2.3: the projection of the registry's entries (runtime/algorithms/
 * registry.ts), which alone writes and reads them: shipped manifests, installed packages and
 * saved layouts (`source`: `preset`, `package`, `layout`). `models` is the manifest's model list
 * as JSON. Everyone else asks `ctx.algorithms`.
 */
export const algorithms = sqliteTable('algorithms', {
  algorithmId: text('algorithm_id').primaryKey(),
  algorithmName: text('algorithm_name').notNull(),
  algorithmUsage: text('algorithm_usage').notNull(),
  algorithmCategory: text('algorithm_category').notNull(),
  supplier: text('supplier').notNull(),
  version: text('version').notNull(),
  description: text('description').notNull(),
  models: text('models', { mode: 'json' }).notNull().$type<{ modelId: string; package: string; file: string; format: string }[]>(),
  /** spec 2.3: 0 = normal; other values are not shown. */
  runningStatus: integer('running_status').notNull().default(0),
  source: text('source').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * Shipped algorithms an operator deleted (`/gtw/cwai/Algorithm/delete`): they stay out of
 * the registry across restarts until an algorithm with the same id is installed again.
 */
export const removedPresetAlgorithms = sqliteTable('removed_preset_algorithms', {
  algorithmId: text('algorithm_id').primaryKey(),
  removedAt: integer('removed_at').notNull(),
})
