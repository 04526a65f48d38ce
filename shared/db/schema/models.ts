import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Managed models (spec 4.10 Model management, 4.11 exportConfig).
 * - `preset`: a model a shipped pipeline uses; registered at start from the pipeline
 *   manifests, file inside an installed npm package, never exportable or deletable.
 * - `user`: uploaded or imported by an operator; file under `<DATA_DIR>/models/`.
 */
export const models = sqliteTable('models', {
  modelId: text('model_id').primaryKey(),
  modelName: text('model_name').notNull(),
  source: text('source', { enum: ['preset', 'user'] }).notNull(),
  format: text('format').notNull(),
  /** Absolute path for presets (resolved package file); relative to DATA_DIR for user models. */
  location: text('location').notNull(),
  originalFilename: text('original_filename').notNull(),
  sizeBytes: integer('size_bytes').notNull(),
  sha256: text('sha256').notNull(),
  /** JSON: [{name, type, shape}] of the model's inputs and outputs, as onnxruntime reads them. */
  signature: text('signature').notNull(),
  /** JSON: {inputWidth, inputHeight, normalization: {mean, std}, labels} (operator-set). */
  settings: text('settings').notNull(),
  exportable: integer('exportable', { mode: 'boolean' }).notNull(),
  encrypted: integer('encrypted', { mode: 'boolean' }).notNull(),
  deviceBound: integer('device_bound', { mode: 'boolean' }).notNull(),
  /** Pipelines (algorithm ids) that use this model. JSON array. */
  usedBy: text('used_by').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
