import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Upload session manifests (spec 2.5, 3.1). The bytes live in the tus DataStore under
 * `<DATA_DIR>/uploads`, keyed by `id`; the manifest lives here so that sessions survive a
 * restart (spec 4.12.2, 8 "Restart persistence").
 *
 * `state`: open → complete → consumed; open|complete → cancelled; open → expired;
 * open → failed (sha256 mismatch). Terminal rows are kept so that a late chunk, a second
 * claim or a cancel of a consumed id gets a precise error instead of "unknown".
 */
export const uploadSessions = sqliteTable('upload_sessions', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull(),
  /** 'uploadTemp' (chunked multipart protocol) or 'tus' (native tus endpoint). */
  source: text('source').notNull(),
  clientRequestId: text('client_request_id'),
  /**
   * Original client filename as a JSON string literal (SQLite text stops at a NUL byte, and a
   * hostile filename may contain one). Metadata only, never used to build a path.
   */
  filenameJson: text('filename_json').notNull(),
  purpose: text('purpose').notNull(),
  totalChunks: integer('total_chunks').notNull(),
  totalSize: integer('total_size').notNull(),
  sha256: text('sha256'),
  state: text('state').notNull(),
  nextChunkIndex: integer('next_chunk_index').notNull(),
  receivedBytes: integer('received_bytes').notNull(),
  /** Estimated manifest size charged against the per-session metadata budget (spec 8). */
  metadataBytes: integer('metadata_bytes').notNull(),
  createdAt: integer('created_at').notNull(),
  lastActivityAt: integer('last_activity_at').notNull(),
  endedAt: integer('ended_at'),
  endReason: text('end_reason'),
  /** When the stored bytes of an ended session were deleted (null while they may still exist). */
  bytesDeletedAt: integer('bytes_deleted_at'),
}, (t) => [
  index('upload_sessions_user_request_idx').on(t.userId, t.clientRequestId),
  index('upload_sessions_state_idx').on(t.state),
])

/** One row per accepted chunk of an `uploadTemp` session: where it lies in the file. */
export const uploadChunks = sqliteTable('upload_chunks', {
  uploadId: text('upload_id').notNull().references(() => uploadSessions.id, { onDelete: 'cascade' }),
  chunkIndex: integer('chunk_index').notNull(),
  offset: integer('offset').notNull(),
  size: integer('size').notNull(),
}, (t) => [primaryKey({ columns: [t.uploadId, t.chunkIndex] })])
