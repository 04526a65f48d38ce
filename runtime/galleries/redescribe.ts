import { setTimeout as sleep } from 'node:timers/promises'
import { eq, isNull, ne, or } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { galleryTablesOf } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { EventsService } from '../../shared/events/types.ts'
import { GALLERY_KINDS, type GalleryKind } from '../../shared/galleries/kinds.ts'
import type { Redescription } from '../../shared/galleries/types.ts'
import type { Logger } from '../../shared/handler.ts'
import type { SidecarClient } from '../inference/client.ts'

export interface RedescriberOptions {
  db: Db
  log: Logger
  inference: Pick<SidecarClient, 'describe'>
  events: Pick<EventsService, 'emit'>
  /** Per kind, the algorithm whose `recognizer` node describes its images. */
  algorithms: Record<GalleryKind, string>
  /** The descriptor model of an algorithm's recognizer (models/descriptor-model.ts); null when it is not active. */
  modelOf(algorithmId: string): string | null
}

/** An event after this many images (and at the start and the end). */
const EVENT_EVERY = 10
/** Tries of one image whose description failed for another reason than the picture itself. */
const TRIES = 5

/**
 * Describes again, in the background after the start, the gallery images that another model
 * described (docs/galleries.md "Descriptor model changes"): from each image's stored picture
 * (the aligned face or the person the device kept), the largest region found. Searches compare
 * only descriptors of one model, so an image matches nobody until it is described again.
 * Progress: `gallery.redescribing` events and `redescription()` (QueryDeviceStatus).
 */
export class Redescriber {
  readonly #status = new Map<GalleryKind, Redescription>()
  #stopped = false
  #running: Promise<void> | null = null

  constructor(private readonly options: RedescriberOptions) {
    for (const kind of GALLERY_KINDS) this.#status.set(kind, { kind, state: 'idle', model: null, total: 0, described: 0, failed: 0 })
  }

  status(): Redescription[] {
    return GALLERY_KINDS.map((kind) => ({ ...this.#status.get(kind)! }))
  }

  /** Starts the background work (returns at once). */
  start(): void {
    this.#running ??= (async () => {
      for (const kind of GALLERY_KINDS) {
        if (this.#stopped) return
        await this.#run(kind).catch((error: Error) => {
          this.#status.get(kind)!.state = 'waiting'
          this.options.log.error({ err: error.message, kind }, 'describing gallery images again failed; tried again at the next start')
        })
      }
    })()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await this.#running
  }

  async #run(kind: GalleryKind): Promise<void> {
    const { db, algorithms } = this.options
    const { images } = galleryTablesOf[kind]
    const status = this.#status.get(kind)!
    const model = this.options.modelOf(algorithms[kind])
    status.model = model
    if (!model) {
      status.state = 'waiting'
      return
    }
    const stale = await db.select({ imageId: images.imageId }).from(images)
      .where(or(isNull(images.descriptorModel), ne(images.descriptorModel, model))).orderBy(images.imageId)
    if (stale.length === 0) return
    Object.assign(status, { state: 'running', total: stale.length, described: 0, failed: 0 })
    this.options.log.info({ kind, model, images: stale.length }, 'describing gallery images again with a new descriptor model')
    await this.#emit(status)
    for (const [i, { imageId }] of stale.entries()) {
      if (this.#stopped) return
      const row = (await db.select({ picture: images.picture }).from(images).where(eq(images.imageId, imageId)))[0]
      if (!row) continue // deleted meanwhile
      const region = await this.#describe(algorithms[kind], row.picture)
      if (region && region.model === model) {
        await db.update(images).set({ descriptor: region.descriptor, descriptorModel: model }).where(eq(images.imageId, imageId))
        status.described++
      } else {
        // Kept for the console, matching nobody, and not tried again at every start.
        await db.update(images).set({ descriptor: null, descriptorModel: model }).where(eq(images.imageId, imageId))
        status.failed++
      }
      if ((i + 1) % EVENT_EVERY === 0 && i + 1 < stale.length) await this.#emit(status)
    }
    status.state = 'done'
    this.options.log.info({ kind, model, described: status.described, failed: status.failed }, 'gallery images described again')
    await this.#emit(status)
  }

  /** The largest region of a stored picture, or null when the model finds none or cannot read it. */
  async #describe(algorithmId: string, picture: Buffer) {
    for (let attempt = 1; ; attempt++) {
      try {
        const regions = await this.options.inference.describe(algorithmId, { kind: 'bytes', bytes: picture })
        return regions.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0] ?? null
      } catch (error) {
        // An answer about the picture (undecodable, too large) is final; a failing sidecar is tried again.
        if (error instanceof ApiError || attempt >= TRIES || this.#stopped) {
          if (error instanceof ApiError) return null
          throw error
        }
        await sleep(2000 * attempt)
      }
    }
  }

  async #emit(status: Redescription): Promise<void> {
    const { kind, model, state, total, described, failed } = status
    await this.options.events.emit('gallery.redescribing', { kind, model, state, total, described, failed }).catch(() => undefined)
  }
}
