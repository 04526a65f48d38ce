import { randomUUID } from 'node:crypto'
import { and, count, eq, inArray } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import type { GalleryTables } from '../../shared/db/schema/index.ts'
import { containsText } from '../db/like.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import { galleryKinds, type GalleryKind } from '../../shared/galleries/kinds.ts'
import type {
  DescribedRegion, Gallery, GalleryImage, GalleryItem, GalleryMatch, GalleryStore as Store, SearchRegion,
} from '../../shared/galleries/types.ts'
import type { Clock, Identity } from '../../shared/handler.ts'
import type { ImageSource } from '../../shared/inference/types.ts'
import type { UploadLease, UploadService } from '../../shared/uploads/index.ts'
import type { SidecarClient } from '../inference/client.ts'
import { decodeBase64Image } from '../tasks/image-source.ts'
import { nearestItems } from './search.ts'
import { faceQuality, qualityRefusal } from './face-quality.ts'

export interface GalleryStoreOptions {
  kind: GalleryKind
  tables: GalleryTables
  db: Db
  clock: Clock
  inference: Pick<SidecarClient, 'describe'>
  uploads: Pick<UploadService, 'lease'>
  /** The algorithm whose `recognizer` node describes this kind's images. */
  algorithmId: string
}

/** Upload purposes a gallery image may come with (spec 4.12: images and face imports). */
const IMAGE_PURPOSES = ['image', 'face-import'] as const

/**
 * The galleries of one kind in libsql (spec 4.10): galleries, items, images. Descriptors
 * come from the sidecar (the kind's algorithm's `recognizer` node); they are stored in an
 * `F32_BLOB` column with a `libsql_vector_idx` index of the kind's measure (cosine; Euclidean
 * for faces) and searched with `vector_top_k` beyond EXACT_SEARCH_MAX_IMAGES (search.ts); `similarity` is the measure's
 * (runtime/galleries/measure.ts). Names on the wire come from shared/galleries/kinds.ts.
 */
export class GalleryStore implements Store {
  readonly #info
  readonly #t: GalleryTables

  constructor(private readonly options: GalleryStoreOptions) {
    this.#info = galleryKinds[options.kind]
    this.#t = options.tables
  }

  // ── galleries ──────────────────────────────────────────────────────────────────────
  async createGallery(input: { galleryId?: string; name: string; description?: string }): Promise<Gallery> {
    const now = this.options.clock.now()
    const galleryId = input.galleryId ?? randomUUID()
    const inserted = await this.options.db.insert(this.#t.galleries)
      .values({ galleryId, name: input.name, description: input.description ?? '', createdAt: now, updatedAt: now })
      .onConflictDoNothing().returning()
    if (inserted.length === 0) throw new ApiError('GalleryExists', { details: { galleryId } })
    return this.getGallery(galleryId)
  }

  async updateGallery(input: { galleryId: string; name?: string; description?: string }): Promise<Gallery> {
    const { galleries } = this.#t
    const changed = await this.options.db.update(galleries)
      .set({ ...(input.name !== undefined ? { name: input.name } : {}), ...(input.description !== undefined ? { description: input.description } : {}), updatedAt: this.options.clock.now() })
      .where(eq(galleries.galleryId, input.galleryId)).returning()
    if (changed.length === 0) throw new ApiError('GalleryNotFound', { details: { galleryId: input.galleryId } })
    return this.getGallery(input.galleryId)
  }

  async deleteGallery(galleryId: string): Promise<void> {
    const { galleries, items, images } = this.#t
    await this.options.db.transaction(async (tx) => {
      const gone = await tx.delete(galleries).where(eq(galleries.galleryId, galleryId)).returning()
      if (gone.length === 0) throw new ApiError('GalleryNotFound', { details: { galleryId } })
      await tx.delete(images).where(eq(images.galleryId, galleryId))
      await tx.delete(items).where(eq(items.galleryId, galleryId))
    })
  }

  async listGalleries({ pageNum, pageSize }: { pageNum: number; pageSize: number }) {
    const { db } = this.options
    const { galleries } = this.#t
    const [{ total }] = await db.select({ total: count() }).from(galleries) as [{ total: number }]
    const ids = await db.select({ galleryId: galleries.galleryId }).from(galleries)
      .orderBy(galleries.createdAt, galleries.galleryId).limit(pageSize).offset((pageNum - 1) * pageSize)
    return { total, rows: await Promise.all(ids.map((r) => this.getGallery(r.galleryId))) }
  }

  /** A gallery with its counts; GalleryNotFound when there is none. */
  async getGallery(galleryId: string): Promise<Gallery> {
    const { db } = this.options
    const { galleries, items, images } = this.#t
    const row = (await db.select().from(galleries).where(eq(galleries.galleryId, galleryId)))[0]
    if (!row) throw new ApiError('GalleryNotFound', { details: { galleryId } })
    const [{ itemCount }] = await db.select({ itemCount: count() }).from(items).where(eq(items.galleryId, galleryId)) as [{ itemCount: number }]
    const [{ imageCount }] = await db.select({ imageCount: count() }).from(images).where(eq(images.galleryId, galleryId)) as [{ imageCount: number }]
    return { ...row, items: itemCount, images: imageCount, createdAt: String(row.createdAt), updatedAt: String(row.updatedAt) }
  }

  // ── items ──────────────────────────────────────────────────────────────────────────
  async createItem(input: { galleryId: string; itemId: string; name: string; attributes?: Record<string, unknown> }): Promise<GalleryItem> {
    await this.getGallery(input.galleryId)
    const now = this.options.clock.now()
    const inserted = await this.options.db.insert(this.#t.items)
      .values({ galleryId: input.galleryId, itemId: input.itemId, name: input.name, attributes: input.attributes ?? {}, createdAt: now, updatedAt: now })
      .onConflictDoNothing().returning()
    if (inserted.length === 0) throw new ApiError(this.#info.errors.itemExists, { details: this.#itemDetails(input.galleryId, input.itemId) })
    return this.getItem(input.galleryId, input.itemId)
  }

  async updateItem(input: { galleryId: string; itemId: string; name?: string; attributes?: Record<string, unknown> }): Promise<GalleryItem> {
    const changed = await this.options.db.update(this.#t.items)
      .set({ ...(input.name !== undefined ? { name: input.name } : {}), ...(input.attributes !== undefined ? { attributes: input.attributes } : {}), updatedAt: this.options.clock.now() })
      .where(this.#itemWhere(input.galleryId, input.itemId)).returning()
    if (changed.length === 0) throw this.#noItem(input.galleryId, input.itemId)
    return this.getItem(input.galleryId, input.itemId)
  }

  async deleteItem(galleryId: string, itemId: string): Promise<void> {
    const { items, images } = this.#t
    await this.options.db.transaction(async (tx) => {
      const gone = await tx.delete(items).where(this.#itemWhere(galleryId, itemId)).returning()
      if (gone.length === 0) throw this.#noItem(galleryId, itemId)
      await tx.delete(images).where(and(eq(images.galleryId, galleryId), eq(images.itemId, itemId)))
    })
  }

  async getItem(galleryId: string, itemId: string): Promise<GalleryItem> {
    const row = (await this.options.db.select().from(this.#t.items).where(this.#itemWhere(galleryId, itemId)))[0]
    if (!row) throw this.#noItem(galleryId, itemId)
    return (await this.#withImages([row]))[0]!
  }

  async listItems({ galleryId, name, pageNum, pageSize }: { galleryId: string; name?: string; pageNum: number; pageSize: number }) {
    await this.getGallery(galleryId)
    const { db } = this.options
    const { items } = this.#t
    const where = and(eq(items.galleryId, galleryId), name ? containsText(items.name, name) : undefined)
    const [{ total }] = await db.select({ total: count() }).from(items).where(where) as [{ total: number }]
    const rows = await db.select().from(items).where(where)
      .orderBy(items.createdAt, items.itemId).limit(pageSize).offset((pageNum - 1) * pageSize)
    return { total, rows: await this.#withImages(rows) }
  }

  async #withImages(rows: GalleryTables['items']['$inferSelect'][]): Promise<GalleryItem[]> {
    if (rows.length === 0) return []
    const { images } = this.#t
    const stored = await this.options.db.select({ imageId: images.imageId, itemId: images.itemId })
      .from(images).where(and(eq(images.galleryId, rows[0]!.galleryId), inArray(images.itemId, rows.map((r) => r.itemId))))
      .orderBy(images.imageId)
    return rows.map((r) => ({
      galleryId: r.galleryId, itemId: r.itemId, name: r.name, attributes: r.attributes,
      imageIds: stored.filter((f) => f.itemId === r.itemId).map((f) => f.imageId),
      createdAt: String(r.createdAt), updatedAt: String(r.updatedAt),
    }))
  }

  #itemWhere(galleryId: string, itemId: string) {
    return and(eq(this.#t.items.galleryId, galleryId), eq(this.#t.items.itemId, itemId))
  }

  /** Error details in the kind's own names (`personId` for a face gallery). */
  #itemDetails(galleryId: string, itemId: string, more: Record<string, unknown> = {}) {
    return { galleryId, [this.#info.wire.itemId]: itemId, ...more }
  }

  #noItem(galleryId: string, itemId: string) {
    return new ApiError(this.#info.errors.itemNotFound, { details: this.#itemDetails(galleryId, itemId) })
  }

  // ── images ─────────────────────────────────────────────────────────────────────────
  async addImage(input: { galleryId: string; itemId: string; image: GalleryImage; identity: Identity }) {
    await this.getItem(input.galleryId, input.itemId)
    return this.#withImage(input.image, input.identity, async (image) => {
      const region = await this.describeOne(image)
      const [row] = await this.options.db.insert(this.#t.images).values({
        galleryId: input.galleryId, itemId: input.itemId, descriptor: region.descriptor, descriptorModel: region.model, picture: region.picture!, createdAt: this.options.clock.now(),
      }).returning({ imageId: this.#t.images.imageId })
      return { imageId: row!.imageId, box: region.box }
    })
  }

  /**
   * The one region of an item image, described with its picture: exactly one subject (a face,
   * a person), or nothing is stored, since with several which one is the item is a guess.
   */
  async describeOne(image: ImageSource): Promise<DescribedRegion> {
    const regions = await this.options.inference.describe(this.options.algorithmId, image, { pictures: true })
    const subject = this.#info.subject
    if (subject && regions.length !== 1)
      throw new ApiError(subject.error, { details: { [subject.detail]: regions.length, boxes: regions.map((f) => f.box) }, msgText: `A ${this.#info.title.toLowerCase()} image must show exactly one ${subject.noun}; ${regions.length} found.` })
    const region = regions[0]!
    if (this.options.kind === 'face') {
      // Enrolment quality (docs/galleries.md "Enrolment quality"): a face that would never match is refused.
      const refusal = qualityRefusal(await faceQuality(region))
      if (refusal) throw new ApiError(refusal.error, { details: { measure: refusal.measure, measured: refusal.measured, limit: refusal.limit, box: region.box } })
    }
    return region
  }

  async deleteImage(galleryId: string, itemId: string, imageId: number): Promise<void> {
    const { images } = this.#t
    const gone = await this.options.db.delete(images)
      .where(and(eq(images.imageId, imageId), eq(images.galleryId, galleryId), eq(images.itemId, itemId))).returning({ imageId: images.imageId })
    if (gone.length === 0) throw new ApiError(this.#info.errors.imageNotFound, { details: this.#itemDetails(galleryId, itemId, { [this.#info.wire.imageId]: imageId }) })
  }

  async picture(imageId: number): Promise<Buffer> {
    const { images } = this.#t
    const row = (await this.options.db.select({ picture: images.picture }).from(images).where(eq(images.imageId, imageId)))[0]
    if (!row) throw new ApiError(this.#info.errors.imageNotFound, { details: { [this.#info.wire.imageId]: imageId } })
    return row.picture
  }

  /** The `k` closest items (best image each): search.ts. */
  nearestItems(descriptor: Float32Array, model: string, galleryIds: string[], k: number): Promise<GalleryMatch[]> {
    return nearestItems(this.options.db, this.#t, descriptor, model, galleryIds, k)
  }

  // ── search ─────────────────────────────────────────────────────────────────────────
  async search(input: { galleryId?: string; image: GalleryImage; topK: number; threshold?: number; identity: Identity }): Promise<SearchRegion[]> {
    if (input.galleryId !== undefined) await this.getGallery(input.galleryId)
    const regions = await this.#withImage(input.image, input.identity, (image) => this.options.inference.describe(this.options.algorithmId, image))
    const galleryIds = input.galleryId !== undefined ? [input.galleryId] : []
    return Promise.all(regions.map(async (region) => ({
      box: region.box,
      landmark: region.landmark,
      matches: (await this.nearestItems(region.descriptor, region.model, galleryIds, input.topK)).filter((m) => input.threshold === undefined || m.similarity >= input.threshold),
    })))
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
