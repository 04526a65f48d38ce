import { and, eq } from 'drizzle-orm'
import type { ArchiveLimits } from '../archive/safe-unpack.ts'
import type { Db } from '../db/client.ts'
import { galleryTablesOf } from '../../shared/db/schema/index.ts'
import { GALLERY_KINDS, type GalleryKind } from '../../shared/galleries/kinds.ts'
import type { GalleriesService, GalleryMatch, RecognizeRequest } from '../../shared/galleries/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { EventsService } from '../../shared/events/types.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import type { SidecarClient } from '../inference/client.ts'
import type { ImportRow } from './import-manifest.ts'
import { Redescriber } from './redescribe.ts'
import { ImportJobs, type StoreRow } from './import.ts'
import { GalleryStore } from './store.ts'

export interface GalleryServiceOptions {
  db: Db
  clock: Clock
  log: Logger
  inference: Pick<SidecarClient, 'describe'>
  uploads: Pick<UploadService, 'lease' | 'claim'>
  /** Per kind, the algorithm whose `recognizer` node describes its images (GALLERY_*_ALGORITHM). */
  algorithms: Record<GalleryKind, string>
  dataPath: string
  /** Bounds of a face-import archive. */
  importLimits: ArchiveLimits
  events: Pick<EventsService, 'emit'>
  /** The descriptor model of an algorithm's recognizer (models/descriptor-model.ts); null when it is not active. */
  modelOf(algorithmId: string): string | null
}

/**
 * `ctx.galleries`: the face, body and things galleries (one GalleryStore per kind, same code,
 * tables and names from the catalogues), face imports, and the search behind the pipelines'
 * `recognizer` nodes, which reach `recognize` through the sidecar client
 * (runtime/sidecar/protocol.ts RECOGNIZE_CALL).
 */
export class GalleryService implements GalleriesService {
  readonly imports: ImportJobs
  /** Images described by another model than the current one, described again after the start. */
  readonly redescriber: Redescriber
  readonly #stores: Record<GalleryKind, GalleryStore>

  constructor(private readonly options: GalleryServiceOptions) {
    this.#stores = Object.fromEntries(GALLERY_KINDS.map((kind) => [kind, new GalleryStore({
      ...options, kind, tables: galleryTablesOf[kind], algorithmId: options.algorithms[kind],
    })])) as Record<GalleryKind, GalleryStore>
    this.redescriber = new Redescriber(options)
    this.imports = new ImportJobs({ ...options, limits: options.importLimits, importRow: (galleryId, row, image) => this.#importRow(galleryId, row, image) })
  }

  of(kind: GalleryKind): GalleryStore {
    return this.#stores[kind]
  }

  async startImport(input: { galleryId: string; uploadId: string; identity: Identity }) {
    await this.#stores.face.getGallery(input.galleryId)
    return this.imports.start(input.galleryId, input.uploadId, input.identity)
  }

  redescription() {
    return this.redescriber.status()
  }

  importStatus(jobId: string) {
    return this.imports.status(jobId)
  }

  recognize = async ({ kind, descriptors, galleryIds, model }: RecognizeRequest): Promise<(GalleryMatch | null)[]> =>
    Promise.all(descriptors.map(async (d) => (await this.#stores[kind].nearestItems(d, model, galleryIds, 1))[0] ?? null))

  /**
   * One face-import row: skipped when its person already has a face from the same image (so
   * importing an archive again changes nothing); else the face is described now and the
   * answer stores it, creating or renaming the person.
   */
  async #importRow(galleryId: string, row: ImportRow, image: { path: string; sha256: string }): Promise<'skipped' | StoreRow> {
    const { db, clock } = this.options
    const { items, images } = galleryTablesOf.face
    const known = await db.select({ imageId: images.imageId }).from(images)
      .where(and(eq(images.galleryId, galleryId), eq(images.itemId, row.personId), eq(images.sourceSha256, image.sha256))).limit(1)
    if (known.length > 0) return 'skipped'
    const face = await this.#stores.face.describeOne({ kind: 'path', path: image.path })
    return async () => {
      const now = clock.now()
      await db.transaction(async (tx) => {
        await tx.insert(items).values({ galleryId, itemId: row.personId, name: row.name, attributes: row.attributes, createdAt: now, updatedAt: now })
          .onConflictDoUpdate({ target: [items.galleryId, items.itemId], set: { name: row.name, attributes: row.attributes, updatedAt: now } })
        await tx.insert(images).values({ galleryId, itemId: row.personId, descriptor: face.descriptor, descriptorModel: face.model, picture: face.picture!, sourceSha256: image.sha256, createdAt: now })
      })
      return 'imported'
    }
  }
}
