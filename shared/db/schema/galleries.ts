import { sql } from 'drizzle-orm'
import { blob, customType, index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { GalleryKind } from '../../galleries/kinds.ts'

/** Length of a face descriptor (the dlib ResNet-29 of `face-recognition`, docs/galleries.md "Face descriptor"). */
export const FACE_DESCRIPTOR_DIMS = 128

/**
 * libsql's vector column (`F32_BLOB(n)`): float32 values, searched through a
 * `libsql_vector_idx` index with `vector_top_k` (drizzle has no vector type of its own).
 */
const f32Blob = (dims: number) => customType<{ data: Float32Array; driverData: Uint8Array }>({
  dataType: () => `F32_BLOB(${dims})`,
  toDriver: (v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength),
  fromDriver: (b) => new Float32Array(Uint8Array.from(b).buffer),
})

/**
 * How a gallery kind compares descriptors (docs/galleries.md "Measure"): `cosine` of
 * L2-normalized descriptors, or the `euclidean` distance of raw ones (dlib's own measure).
 */
export type GalleryMeasure = 'cosine' | 'euclidean'

/** Length of a body or things descriptor (the converted `image-descriptor`, models/README.md). */
export const IMAGE_DESCRIPTOR_DIMS = 600

/** SQL names of one gallery kind's tables (the face gallery keeps the names it shipped with). */
interface GalleryTableNames {
  galleries: string
  items: string
  images: string
  itemColumn: string
  imageColumn: string
}

/**
 * The three tables of a gallery kind (spec 4.10): galleries; items (a face gallery's persons)
 * under a client-chosen id; images, each with its descriptor (`F32_BLOB`, a
 * `libsql_vector_idx` of the kind's measure) and the picture of the region it describes.
 */
function galleryTables(names: GalleryTableNames, dims: number, measure: GalleryMeasure) {
  const galleries = sqliteTable(names.galleries, {
    galleryId: text('gallery_id').primaryKey(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  })
  const items = sqliteTable(names.items, {
    galleryId: text('gallery_id').notNull(),
    itemId: text(names.itemColumn).notNull(),
    name: text('name').notNull(),
    attributes: text('attributes', { mode: 'json' }).notNull().$type<Record<string, unknown>>(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  }, (t) => [primaryKey({ columns: [t.galleryId, t.itemId] })])
  const images = sqliteTable(names.images, {
    imageId: integer(names.imageColumn).primaryKey({ autoIncrement: true }),
    galleryId: text('gallery_id').notNull(),
    itemId: text(names.itemColumn).notNull(),
    /**
     * Null while the image waits to be described again with the current model (docs/galleries.md
     * "Descriptor model changes"); such a row is in no search.
     */
    descriptor: f32Blob(dims)('descriptor'),
    /**
     * The model that made `descriptor` (`descriptorModelOf`, models/descriptor-model.ts); a search
     * compares only descriptors of the searching model. Null: made before models were recorded.
     */
    descriptorModel: text('descriptor_model'),
    /** JPEG of the region described (aligned face, person), for the console. */
    picture: blob('picture', { mode: 'buffer' }).notNull(),
    /** SHA-256 of the image it came from: an import run again skips what it already added. */
    sourceSha256: text('source_sha256'),
    createdAt: integer('created_at').notNull(),
  }, (t) => [
    index(`${names.images}_${names.itemColumn.replace(/_id$/, '')}_idx`).on(t.galleryId, t.itemId),
    // Neighbours kept as 1-bit signs, 32 per node, a search beam of 400 (docs/galleries.md "Face
    // galleries", bench/gallery-search.bench.ts, 100,000 faces): insert ~5 ms, recall@10 0.97,
    // ~18× faster than a scan. The default beam (200) gave recall 0.93–0.95; 8-bit neighbours
    // 0.995 but ~22 ms an insert and ~40 KB of index a face (1-bit: ~6 KB). Distances of the
    // results are exact (computed on the row's own vector).
    // drizzle-kit writes this expression quoted as one column name: the migration's CREATE INDEX lines are corrected by hand.
    // A Euclidean gallery (faces: raw dlib descriptors, docs/galleries.md "Measure") has an l2
    // index; libsql keeps 1-bit neighbours only for the cosine, so its neighbours are 8-bit, with
    // the beam of 200 (8-bit neighbours: recall@10 0.995 at 100,000; at 128 values and 10,000
    // faces recall 1.00, ~5 ms a search, ~8 ms an insert: docs/galleries.md "Search speed").
    measure === 'euclidean'
      ? index(`${names.images}_descriptor_idx`).on(sql`libsql_vector_idx(${t.descriptor}, 'metric=l2', 'compress_neighbors=float8', 'max_neighbors=32', 'search_l=200')`)
      : index(`${names.images}_descriptor_idx`).on(sql`libsql_vector_idx(${t.descriptor}, 'metric=cosine', 'compress_neighbors=float1bit', 'max_neighbors=32', 'search_l=400')`),
  ])
  return { galleries, items, images, vectorIndex: `${names.images}_descriptor_idx`, measure }
}

export type GalleryTables = ReturnType<typeof galleryTables>

/** Each kind's tables (shared/galleries/kinds.ts). */
export const galleryTablesOf: Record<GalleryKind, GalleryTables> = {
  face: galleryTables({ galleries: 'face_galleries', items: 'gallery_persons', images: 'gallery_faces', itemColumn: 'person_id', imageColumn: 'face_id' }, FACE_DESCRIPTOR_DIMS, 'euclidean'),
  body: galleryTables({ galleries: 'body_galleries', items: 'body_gallery_items', images: 'body_gallery_images', itemColumn: 'item_id', imageColumn: 'image_id' }, IMAGE_DESCRIPTOR_DIMS, 'cosine'),
  things: galleryTables({ galleries: 'things_galleries', items: 'things_gallery_items', images: 'things_gallery_images', itemColumn: 'item_id', imageColumn: 'image_id' }, IMAGE_DESCRIPTOR_DIMS, 'cosine'),
}

// drizzle-kit finds tables among the module's exports.
export const { galleries: faceGalleries, items: galleryPersons, images: galleryFaces } = galleryTablesOf.face
export const { galleries: bodyGalleries, items: bodyGalleryItems, images: bodyGalleryImages } = galleryTablesOf.body
export const { galleries: thingsGalleries, items: thingsGalleryItems, images: thingsGalleryImages } = galleryTablesOf.things

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
