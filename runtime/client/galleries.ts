import { fromWire, galleryKinds, type GalleryKind } from '../../shared/galleries/kinds.ts'
import type { Gallery, GalleryItem, GalleryMatch, ImportJob } from '../../shared/galleries/types.ts'
import type { TargetBox } from '../../shared/inference/types.ts'
import type { DeviceClient } from './client.ts'
import { DeviceError, NetworkError } from './errors.ts'
import { ROUTES } from './routes.ts'
import type { Page } from './types.ts'

export type { Gallery, GalleryItem, GalleryMatch, ImportJob }
export interface SearchRegion { box: TargetBox; matches: GalleryMatch[] }

/**
 * The galleries of one kind (spec 4.10 Face, Body, Things gallery; docs/galleries.md "Face galleries",
 * "Body and things galleries") through a DeviceClient. Routes and field names come from the
 * kind catalogue; records come back with the generic names (`itemId`, `imageIds`, `items`).
 */
export class GalleryClient {
  readonly #info

  constructor(private readonly client: DeviceClient, readonly kind: GalleryKind) {
    this.#info = galleryKinds[kind]
  }

  #route(name: string) {
    return `/gtw/cwai/${this.#info.folder}/${name}`
  }

  async #call<T>(name: string, body: Record<string, unknown>): Promise<T> {
    const { wire } = this.#info
    const sent = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined).map(([k, v]) => [k === 'itemId' ? wire.itemId : k === 'imageId' ? wire.imageId : k, v]))
    return this.client.call<T>(this.#route(name), sent)
  }

  #generic<T>(record: unknown): T {
    return fromWire(this.kind, record as object) as T
  }

  async galleries(): Promise<Page<Gallery>> {
    const page = await this.#call<Page<unknown>>('LibraryPage', { pageNum: 1, pageSize: 500 })
    return { total: page.total, rows: page.rows.map((r) => this.#generic<Gallery>(r)) }
  }

  async addGallery(input: { galleryId?: string; name: string; description?: string }): Promise<Gallery> {
    return this.#generic(await this.#call('AddLibrary', input))
  }

  async deleteGallery(galleryId: string): Promise<void> {
    await this.#call('DeleteLibrary', { galleryId })
  }

  async items(galleryId: string): Promise<Page<GalleryItem>> {
    const page = await this.#call<Page<unknown>>(`${this.#info.noun}Page`, { galleryId, pageNum: 1, pageSize: 500 })
    return { total: page.total, rows: page.rows.map((r) => this.#generic<GalleryItem>(r)) }
  }

  async addItem(input: { galleryId: string; itemId: string; name: string }): Promise<GalleryItem> {
    return this.#generic(await this.#call(`Add${this.#info.noun}`, input))
  }

  async deleteItem(galleryId: string, itemId: string): Promise<void> {
    await this.#call(`Delete${this.#info.noun}`, { galleryId, itemId })
  }

  /** Adds the image of a completed upload (purpose `image`). */
  async addImage(galleryId: string, itemId: string, uploadId: string): Promise<{ imageId: number; box: TargetBox }> {
    return this.#generic(await this.#call(`Add${this.#info.noun}Image`, { galleryId, itemId, uploadId }))
  }

  async deleteImage(galleryId: string, itemId: string, imageId: number): Promise<void> {
    await this.#call(`Delete${this.#info.noun}Image`, { galleryId, itemId, imageId })
  }

  /** The closest items for each region of the image of a completed upload (one gallery or all). */
  async search(input: { uploadId: string; galleryId?: string; topK?: number }): Promise<SearchRegion[]> {
    const answer = await this.#call<Record<string, { box: TargetBox; matches: unknown[] }[]>>('SearchByImage', input)
    return answer[this.#info.wire.regions]!.map((r) => ({ box: r.box, matches: r.matches.map((m) => this.#generic<GalleryMatch>(m)) }))
  }

  /** An image's stored picture (JPEG): a GET with the mtk, so that a page can show it from a Blob. */
  async picture(imageId: number, signal?: AbortSignal): Promise<Blob> {
    const route = this.#route(this.#info.pictureRoute)
    const url = `${this.client.baseUrl}${route}?${this.#info.wire.imageId}=${imageId}`
    let response: Response
    try {
      response = await fetch(url, { headers: this.client.mtk ? { mtk: this.client.mtk } : {}, signal })
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw error
      throw new NetworkError(route, error, url)
    }
    if (response.ok && /^image\//.test(response.headers.get('content-type') ?? '')) return response.blob()
    const envelope = await response.json().catch(() => null) as { resMsg?: ConstructorParameters<typeof DeviceError>[2] } | null
    throw new DeviceError(route, response.status, envelope?.resMsg ?? [], null)
  }
}

/** Face imports (spec 4.10 File import): an archive upload of purpose `face-import` into a face gallery. */
export function startImport(client: DeviceClient, galleryId: string, uploadId: string): Promise<{ jobId: string }> {
  return client.call(ROUTES.importFiles, { galleryId, uploadId })
}

export function importStatus(client: DeviceClient, jobId: string): Promise<ImportJob> {
  return client.call(ROUTES.importStatus, { jobId })
}
