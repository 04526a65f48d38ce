import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Audio files (spec 4.10 Audio): uploads checked and loudness-normalized with ffmpeg; the
 * stored file is `file` relative to DATA_DIR (MP3, the normalized copy, never the upload).
 */
export const audioFiles = sqliteTable('audio_files', {
  audioId: text('audio_id').primaryKey(),
  audioName: text('audio_name').notNull(),
  originalName: text('original_name').notNull(),
  /** The upload's container as ffmpeg named it (wav, mp3, ogg, flac, ...). */
  sourceFormat: text('source_format').notNull(),
  durationMs: integer('duration_ms').notNull(),
  sampleRate: integer('sample_rate').notNull(),
  channels: integer('channels').notNull(),
  sizeBytes: integer('size_bytes').notNull(),
  /** Integrated loudness of the upload before normalization (LUFS); null when too short to measure. */
  inputLoudness: real('input_loudness'),
  file: text('file').notNull(),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
})

/** Audio columns: network speakers the device pushes audio files to (spec 4.10 Audio). */
export const audioColumns = sqliteTable('audio_columns', {
  columnId: text('column_id').primaryKey(),
  columnName: text('column_name').notNull(),
  protocol: text('protocol', { enum: ['http-push'] }).notNull(),
  /** Without credentials; those live in username/password. */
  url: text('url').notNull(),
  method: text('method', { enum: ['POST', 'PUT'] }).notNull(),
  format: text('format', { enum: ['mp3', 'wav', 'mulaw'] }).notNull(),
  username: text('username'),
  password: text('password'),
  timeoutMs: integer('timeout_ms').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
