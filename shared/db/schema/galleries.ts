import { sql } from 'drizzle-orm'
import { blob, customType, index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/** Length of a face descriptor (FaceRes, models/README.md). */
export const FACE_DESCRIPTOR_DIMS = 1024

/**
 * libsql's vector column (`F32_BLOB(n)`): float32 values, searched through a
 * `libsql_vector_idx` index with `vector_top_k` (drizzle has no vector type of its own).
 */
const f32Blob = (dims: number) => customType<{ data: Float32Array; driverData: Uint8Array }>({
  dataType: () => `F32_BLOB(${dims})`,
  toDriver: (v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength),
  fromDriver: (b) => new Float32Array(Uint8Array.from(b).buffer),
})

/** Face galleries (spec 4.10 "Face gallery"). */
export const faceGalleries = sqliteTable('face_galleries', {
  galleryId: text('gallery_id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/** Persons of a gallery, under a client-chosen id. */
export const galleryPersons = sqliteTable('gallery_persons', {
  galleryId: text('gallery_id').notNull(),
  personId: text('person_id').notNull(),
  name: text('name').notNull(),
  attributes: text('attributes', { mode: 'json' }).notNull().$type<Record<string, unknown>>(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [primaryKey({ columns: [t.galleryId, t.personId] })])

/** One registered face image: its descriptor (vector-indexed, cosine) and its aligned picture. */
export const galleryFaces = sqliteTable('gallery_faces', {
  faceId: integer('face_id').primaryKey({ autoIncrement: true }),
  galleryId: text('gallery_id').notNull(),
  personId: text('person_id').notNull(),
  descriptor: f32Blob(FACE_DESCRIPTOR_DIMS)('descriptor').notNull(),
  /** JPEG of the aligned face, for the console. */
  picture: blob('picture', { mode: 'buffer' }).notNull(),
  /** SHA-256 of the image it came from: an import run again skips what it already added. */
  sourceSha256: text('source_sha256'),
  createdAt: integer('created_at').notNull(),
}, (t) => [
  index('gallery_faces_person_idx').on(t.galleryId, t.personId),
  // Neighbours kept as 1-bit signs, 32 per node: an insert of a 1024-value vector costs
  // ~6 ms instead of ~100 ms with full float neighbours (bench/gallery-search.bench.ts);
  // distances of the results are exact (computed on the row's own vector).
  // drizzle-kit writes this expression quoted as one column name: the migration's CREATE INDEX line is corrected by hand.
  index('gallery_faces_descriptor_idx').on(sql`libsql_vector_idx(${t.descriptor}, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32')`),
])

/**
 * Bulk imports of persons into a face gallery from one archive (spec 4.10 "File import"):
 * an asynchronous job with its progress, counts and per-row errors.
 */
export const galleryImportJobs = sqliteTable('gallery_import_jobs', {
  jobId: text('job_id').primaryKey(),
  galleryId: text('gallery_id').notNull(),
  state: text('state', { enum: ['running', 'done', 'failed'] }).notNull(),
  /** Rows of the manifest (0 until it has been read). */
  total: integer('total').notNull(),
  processed: integer('processed').notNull(),
  imported: integer('imported').notNull(),
  skipped: integer('skipped').notNull(),
  failed: integer('failed').notNull(),
  /** Per-row errors: `[{row, personId, file, reason, faces?}]`. */
  errors: text('errors', { mode: 'json' }).notNull().$type<unknown[]>(),
  /** Why the whole job failed (a catalogue message item), when it did. */
  error: text('error', { mode: 'json' }).$type<Record<string, unknown>>(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})
