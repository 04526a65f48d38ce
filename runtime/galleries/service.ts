import { randomUUID } from 'node:crypto'
import { and, count, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../shared/db/client.ts'
import { faceGalleries, galleryFaces, galleryPersons } from '../../shared/db/schema/index.ts'
import { containsText } from '../../shared/db/like.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type {
  DescribedFace, FaceMatch, GalleriesService, Gallery, GalleryImage, Person, RecognizeRequest, SearchFace, SearchHit,
} from '../../shared/galleries/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { ImageSource } from '../../shared/inference/types.ts'
import type { UploadLease, UploadService } from '../../shared/uploads/index.ts'
import type { SidecarClient } from '../inference/client.ts'
import { decodeBase64Image } from '../tasks/image-source.ts'
import type { ArchiveLimits } from '../../shared/archive/safe-unpack.ts'
import type { ImportRow } from './import-manifest.ts'
import { ImportJobs } from './import.ts'

export interface GalleryServiceOptions {
  db: Db
  clock: Clock
  log: Logger
  inference: Pick<SidecarClient, 'describeFaces'>
  uploads: Pick<UploadService, 'lease' | 'claim'>
  /** The algorithm whose `recognizer` describes gallery faces (the shipped `face-recognition`). */
  algorithmId: string
  dataPath: string
  /** Bounds of a face-import archive. */
  importLimits: ArchiveLimits
}

/**
 * The `candidates` faces nearest to `descriptor` by the vector index, those of `galleryIds`
 * (all when empty) kept, with their person's name and cosine similarity, best first.
 */
export function nearestFacesQuery(descriptor: Float32Array, candidates: number, galleryIds: string[]): SQL {
  const vector = new Uint8Array(descriptor.buffer, descriptor.byteOffset, descriptor.byteLength)
  const inGalleries = galleryIds.length > 0 ? sql`AND f.gallery_id IN (${sql.join(galleryIds.map((g) => sql`${g}`), sql`, `)})` : sql``
  return sql`
    SELECT f.gallery_id AS galleryId, f.person_id AS personId, p.name AS name,
           1 - vector_distance_cos(f.descriptor, vector32(${vector})) AS similarity
    FROM vector_top_k('gallery_faces_descriptor_idx', vector32(${vector}), ${candidates}) AS t
    JOIN gallery_faces f ON f.face_id = t.id
    JOIN gallery_persons p ON p.gallery_id = f.gallery_id AND p.person_id = f.person_id
    WHERE 1 ${inGalleries}
    ORDER BY similarity DESC`
}

/** Upload purposes a person image may come with (spec 4.12: images and face imports). */
const IMAGE_PURPOSES = ['image', 'face-import'] as const

/**
 * `ctx.galleries`: face galleries in libsql. Descriptors come from the sidecar (the algorithm's
 * `recognizer` node: eyes-aligned face → FaceRes, L2-normalized); they are stored in an
 * `F32_BLOB` column with a cosine `libsql_vector_idx` index and searched with `vector_top_k`,
 * never by scanning. The `recognizer` node of a running task reaches `recognize` through the
 * sidecar client (runtime/sidecar/protocol.ts RECOGNIZE_CALL).
 */
export class GalleryService implements GalleriesService {
  readonly imports: ImportJobs

  constructor(private readonly options: GalleryServiceOptions) {
    this.imports = new ImportJobs({ ...options, limits: options.importLimits, importRow: (galleryId, row, image) => this.#importRow(galleryId, row, image) })
  }

  // ── galleries ──────────────────────────────────────────────────────────────────────
  async createGallery(input: { galleryId?: string; name: string; description?: string }): Promise<Gallery> {
    const now = this.options.clock.now()
    const galleryId = input.galleryId ?? randomUUID()
    const inserted = await this.options.db.insert(faceGalleries)
      .values({ galleryId, name: input.name, description: input.description ?? '', createdAt: now, updatedAt: now })
      .onConflictDoNothing().returning()
    if (inserted.length === 0) throw new ApiError('GalleryExists', { details: { galleryId } })
    return this.#gallery(galleryId)
  }

  async updateGallery(input: { galleryId: string; name?: string; description?: string }): Promise<Gallery> {
    const changed = await this.options.db.update(faceGalleries)
      .set({ ...(input.name !== undefined ? { name: input.name } : {}), ...(input.description !== undefined ? { description: input.description } : {}), updatedAt: this.options.clock.now() })
      .where(eq(faceGalleries.galleryId, input.galleryId)).returning()
    if (changed.length === 0) throw new ApiError('GalleryNotFound', { details: { galleryId: input.galleryId } })
    return this.#gallery(input.galleryId)
  }

  async deleteGallery(galleryId: string): Promise<void> {
    await this.options.db.transaction(async (tx) => {
      const gone = await tx.delete(faceGalleries).where(eq(faceGalleries.galleryId, galleryId)).returning()
      if (gone.length === 0) throw new ApiError('GalleryNotFound', { details: { galleryId } })
      await tx.delete(galleryFaces).where(eq(galleryFaces.galleryId, galleryId))
      await tx.delete(galleryPersons).where(eq(galleryPersons.galleryId, galleryId))
    })
  }

  async listGalleries({ pageNum, pageSize }: { pageNum: number; pageSize: number }) {
    const { db } = this.options
    const [{ total }] = await db.select({ total: count() }).from(faceGalleries) as [{ total: number }]
    const ids = await db.select({ galleryId: faceGalleries.galleryId }).from(faceGalleries)
      .orderBy(faceGalleries.createdAt, faceGalleries.galleryId).limit(pageSize).offset((pageNum - 1) * pageSize)
    return { total, rows: await Promise.all(ids.map((r) => this.#gallery(r.galleryId))) }
  }

  async #gallery(galleryId: string): Promise<Gallery> {
    const { db } = this.options
    const row = (await db.select().from(faceGalleries).where(eq(faceGalleries.galleryId, galleryId)))[0]
    if (!row) throw new ApiError('GalleryNotFound', { details: { galleryId } })
    const [{ persons }] = await db.select({ persons: count() }).from(galleryPersons).where(eq(galleryPersons.galleryId, galleryId)) as [{ persons: number }]
    const [{ faces }] = await db.select({ faces: count() }).from(galleryFaces).where(eq(galleryFaces.galleryId, galleryId)) as [{ faces: number }]
    return { ...row, persons, faces, createdAt: String(row.createdAt), updatedAt: String(row.updatedAt) }
  }

  // ── persons ────────────────────────────────────────────────────────────────────────
  async createPerson(input: { galleryId: string; personId: string; name: string; attributes?: Record<string, unknown> }): Promise<Person> {
    await this.#gallery(input.galleryId)
    const now = this.options.clock.now()
    const inserted = await this.options.db.insert(galleryPersons)
      .values({ galleryId: input.galleryId, personId: input.personId, name: input.name, attributes: input.attributes ?? {}, createdAt: now, updatedAt: now })
      .onConflictDoNothing().returning()
    if (inserted.length === 0) throw new ApiError('GalleryPersonExists', { details: { galleryId: input.galleryId, personId: input.personId } })
    return this.getPerson(input.galleryId, input.personId)
  }

  async updatePerson(input: { galleryId: string; personId: string; name?: string; attributes?: Record<string, unknown> }): Promise<Person> {
    const changed = await this.options.db.update(galleryPersons)
      .set({ ...(input.name !== undefined ? { name: input.name } : {}), ...(input.attributes !== undefined ? { attributes: input.attributes } : {}), updatedAt: this.options.clock.now() })
      .where(this.#personWhere(input.galleryId, input.personId)).returning()
    if (changed.length === 0) throw this.#noPerson(input.galleryId, input.personId)
    return this.getPerson(input.galleryId, input.personId)
  }

  async deletePerson(galleryId: string, personId: string): Promise<void> {
    await this.options.db.transaction(async (tx) => {
      const gone = await tx.delete(galleryPersons).where(this.#personWhere(galleryId, personId)).returning()
      if (gone.length === 0) throw this.#noPerson(galleryId, personId)
      await tx.delete(galleryFaces).where(and(eq(galleryFaces.galleryId, galleryId), eq(galleryFaces.personId, personId)))
    })
  }

  async getPerson(galleryId: string, personId: string): Promise<Person> {
    const row = (await this.options.db.select().from(galleryPersons).where(this.#personWhere(galleryId, personId)))[0]
    if (!row) throw this.#noPerson(galleryId, personId)
    return (await this.#withFaces([row]))[0]!
  }

  async listPersons({ galleryId, name, pageNum, pageSize }: { galleryId: string; name?: string; pageNum: number; pageSize: number }) {
    await this.#gallery(galleryId)
    const { db } = this.options
    const where = and(eq(galleryPersons.galleryId, galleryId), name ? containsText(galleryPersons.name, name) : undefined)
    const [{ total }] = await db.select({ total: count() }).from(galleryPersons).where(where) as [{ total: number }]
    const rows = await db.select().from(galleryPersons).where(where)
      .orderBy(galleryPersons.createdAt, galleryPersons.personId).limit(pageSize).offset((pageNum - 1) * pageSize)
    return { total, rows: await this.#withFaces(rows) }
  }

  async #withFaces(rows: (typeof galleryPersons.$inferSelect)[]): Promise<Person[]> {
    if (rows.length === 0) return []
    const faces = await this.options.db.select({ faceId: galleryFaces.faceId, galleryId: galleryFaces.galleryId, personId: galleryFaces.personId })
      .from(galleryFaces).where(and(eq(galleryFaces.galleryId, rows[0]!.galleryId), inArray(galleryFaces.personId, rows.map((r) => r.personId))))
      .orderBy(galleryFaces.faceId)
    return rows.map((r) => ({
      galleryId: r.galleryId, personId: r.personId, name: r.name, attributes: r.attributes,
      faceIds: faces.filter((f) => f.personId === r.personId).map((f) => f.faceId),
      createdAt: String(r.createdAt), updatedAt: String(r.updatedAt),
    }))
  }

  #personWhere(galleryId: string, personId: string) {
    return and(eq(galleryPersons.galleryId, galleryId), eq(galleryPersons.personId, personId))
  }

  #noPerson(galleryId: string, personId: string) {
    return new ApiError('GalleryPersonNotFound', { details: { galleryId, personId } })
  }

  // ── faces ──────────────────────────────────────────────────────────────────────────
  async addFace(input: { galleryId: string; personId: string; image: GalleryImage; identity: Identity }) {
    await this.getPerson(input.galleryId, input.personId)
    return this.#withImage(input.image, input.identity, async (image) => {
      const face = await this.#oneFace(image)
      const [row] = await this.options.db.insert(galleryFaces).values({
        galleryId: input.galleryId, personId: input.personId, descriptor: face.descriptor, picture: face.picture!, createdAt: this.options.clock.now(),
      }).returning({ faceId: galleryFaces.faceId })
      return { faceId: row!.faceId, box: face.box }
    })
  }

  async startImport(input: { galleryId: string; uploadId: string; identity: Identity }) {
    await this.#gallery(input.galleryId)
    return this.imports.start(input.galleryId, input.uploadId, input.identity)
  }

  importStatus(jobId: string) {
    return this.imports.status(jobId)
  }

  /**
   * One import row: the person is created or renamed, and the face added unless that person
   * already has a face from the same image (so importing an archive again changes nothing).
   */
  async #importRow(galleryId: string, row: ImportRow, image: { path: string; sha256: string }): Promise<'imported' | 'skipped'> {
    const { db, clock } = this.options
    const known = await db.select({ faceId: galleryFaces.faceId }).from(galleryFaces)
      .where(and(eq(galleryFaces.galleryId, galleryId), eq(galleryFaces.personId, row.personId), eq(galleryFaces.sourceSha256, image.sha256))).limit(1)
    if (known.length > 0) return 'skipped'
    const face = await this.#oneFace({ kind: 'path', path: image.path })
    const now = clock.now()
    await db.transaction(async (tx) => {
      await tx.insert(galleryPersons).values({ galleryId, personId: row.personId, name: row.name, attributes: row.attributes, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: [galleryPersons.galleryId, galleryPersons.personId], set: { name: row.name, attributes: row.attributes, updatedAt: now } })
      await tx.insert(galleryFaces).values({ galleryId, personId: row.personId, descriptor: face.descriptor, picture: face.picture!, sourceSha256: image.sha256, createdAt: now })
    })
    return 'imported'
  }

  /** Exactly one face, or nothing is stored: with several, which one is the person is a guess. */
  async #oneFace(image: ImageSource): Promise<DescribedFace> {
    const faces = await this.options.inference.describeFaces(this.options.algorithmId, image, { pictures: true })
    if (faces.length !== 1)
      throw new ApiError('GalleryFaceCount', { details: { faces: faces.length, boxes: faces.map((f) => f.box) }, msgText: `A person image must show exactly one face; ${faces.length} found.` })
    return faces[0]!
  }

  async deleteFace(galleryId: string, personId: string, faceId: number): Promise<void> {
    const gone = await this.options.db.delete(galleryFaces)
      .where(and(eq(galleryFaces.faceId, faceId), eq(galleryFaces.galleryId, galleryId), eq(galleryFaces.personId, personId))).returning({ faceId: galleryFaces.faceId })
    if (gone.length === 0) throw new ApiError('GalleryFaceNotFound', { details: { galleryId, personId, faceId } })
  }

  async facePicture(faceId: number): Promise<Buffer> {
    const row = (await this.options.db.select({ picture: galleryFaces.picture }).from(galleryFaces).where(eq(galleryFaces.faceId, faceId)))[0]
    if (!row) throw new ApiError('GalleryFaceNotFound', { details: { faceId } })
    return row.picture
  }

  // ── search ─────────────────────────────────────────────────────────────────────────
  async search(input: { galleryId?: string; image: GalleryImage; topK: number; threshold?: number; identity: Identity }): Promise<SearchFace[]> {
    if (input.galleryId !== undefined) await this.#gallery(input.galleryId)
    const faces = await this.#withImage(input.image, input.identity, (image) => this.options.inference.describeFaces(this.options.algorithmId, image))
    const galleryIds = input.galleryId !== undefined ? [input.galleryId] : []
    return Promise.all(faces.map(async (face: DescribedFace) => ({
      box: face.box,
      landmark: face.landmark,
      matches: (await this.#nearestPersons(face.descriptor, galleryIds, input.topK)).filter((m) => input.threshold === undefined || m.similarity >= input.threshold),
    })))
  }

  recognize = async ({ descriptors, galleryIds }: RecognizeRequest): Promise<(FaceMatch | null)[]> =>
    Promise.all(descriptors.map(async (d) => (await this.#nearestPersons(d, galleryIds, 1))[0] ?? null))

  /**
   * The `k` closest persons (best face each) through the vector index. `vector_top_k` ranks
   * the whole index, so candidates of other galleries are filtered out afterwards and the
   * candidate count grows until `k` persons are found or every stored face was a candidate.
   */
  async #nearestPersons(descriptor: Float32Array, galleryIds: string[], k: number): Promise<SearchHit[]> {
    const { db } = this.options
    const [{ stored }] = await db.select({ stored: count() }).from(galleryFaces) as [{ stored: number }]
    for (let candidates = Math.max(16, k * 4); ; candidates *= 4) {
      const rows = await db.all<{ galleryId: string; personId: string; name: string; similarity: number }>(nearestFacesQuery(descriptor, candidates, galleryIds))
      const best = new Map<string, SearchHit>()
      for (const r of rows) {
        const key = `${r.galleryId}\u0000${r.personId}`
        if (!best.has(key)) best.set(key, { galleryId: r.galleryId, personId: r.personId, name: r.name, similarity: Math.round(r.similarity * 1e4) / 1e4 })
      }
      if (best.size >= k || candidates >= stored) return [...best.values()].slice(0, k)
    }
  }

  /** spec 4.7 sources for a gallery image: a completed upload (consumed on success) or Base64. */
  async #withImage<T>(image: GalleryImage, identity: Identity, use: (source: ImageSource) => Promise<T>): Promise<T> {
    if ((image.uploadId === undefined) === (image.imageBase64 === undefined))
      throw invalidParam('/uploadId', 'exactly one image source is required: uploadId or imageBase64')
    if (image.imageBase64 !== undefined) return use(decodeBase64Image(image.imageBase64))
    const lease = await this.#lease(image.uploadId!, identity)
    try {
      const result = await use({ kind: 'path', path: lease.path })
      await lease.commit()
      return result
    } catch (error) {
      await lease.abandon()
      throw error
    }
  }

  async #lease(uploadId: string, identity: Identity): Promise<UploadLease> {
    for (const purpose of IMAGE_PURPOSES) {
      try {
        return await this.options.uploads.lease(uploadId, identity, purpose)
      } catch (error) {
        if (!(error instanceof ApiError && error.id === 'UPLOAD_PURPOSE_MISMATCH') || purpose === IMAGE_PURPOSES.at(-1)) throw error
      }
    }
    throw new Error('unreachable')
  }
}
