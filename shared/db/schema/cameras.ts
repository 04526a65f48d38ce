import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Cameras (spec 4.10 Camera). The URL is stored without user info; the credentials are kept
 * apart because the device needs them to connect, and are never returned or logged. Status,
 * size and rate are live state of the reader, not stored.
 */
export const cameras = sqliteTable('cameras', {
  cameraId: text('camera_id').primaryKey(),
  cameraName: text('camera_name').notNull(),
  sourceType: text('source_type', { enum: ['rtsp', 'http', 'file', 'usb'] }).notNull(),
  url: text('url'),
  username: text('username'),
  password: text('password'),
  device: text('device'),
  /** file cameras: the stored video relative to DATA_DIR, and the upload's original name. */
  videoFile: text('video_file'),
  videoName: text('video_name'),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
