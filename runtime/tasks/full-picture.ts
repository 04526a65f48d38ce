import { randomUUID } from 'node:crypto'
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from '../../shared/config.ts'
import { ApiError } from '../../shared/errors/index.ts'
import { DataUrl } from '../../shared/http/data-url.ts'
import type { DetectionResultCore, ImageSource, InferenceService } from '../../shared/inference/types.ts'
import { FULL_PICTURE_ROUTE, picturesDir } from '../../shared/tasks/full-picture.ts'

type PictureConfig = Pick<Config, 'dataPath' | 'fileServiceBaseUrl' | 'fullPictureRetentionMs'>

/**
 * spec 2.6 `fullPicture` in URL mode (FILE_SERVICE_BASE_URL set): the detection answers at
 * once with a URL and keeps what the overlay needs — the encoded image as received and the
 * result — under `<DATA_DIR>/pictures/<id>.src|.json`; the overlay JPEG is rendered by the
 * sidecar when the URL is first fetched (`<id>.jpg`, the other two then go). A URL stays valid
 * for FULL_PICTURE_RETENTION_MS after its detection, fetched or not.
 */
export class FullPictures {
  /** Renders in progress, so that concurrent first fetches of one picture render it once. */
  readonly #rendering = new Map<string, Promise<string>>()
  #sweptAt = -Infinity

  constructor(private readonly config: PictureConfig, private readonly inference: Pick<InferenceService, 'renderOverlay'>) {}

  /** Keeps the image (a hard link to a staged upload: no copy) and the result; answers the picture's id and URL. */
  async defer(image: ImageSource, result: DetectionResultCore, now: number): Promise<{ id: string; url: string }> {
    const dir = picturesDir(this.config)
    await mkdir(dir, { recursive: true })
    const id = randomUUID()
    const source = path.join(dir, `${id}.src`)
    if (image.kind === 'path') await link(image.path, source).catch(() => copyFile(image.path, source))
    else if (image.kind === 'bytes') await writeFile(source, image.bytes)
    else throw new Error('a raw frame has no picture to defer')
    await writeFile(path.join(dir, `${id}.json`), JSON.stringify(result))
    // Retention counts from the detection: the upload's link keeps the upload's times.
    const at = new Date(now)
    await utimes(source, at, at)
    // Not on every detection: a sweep stats every kept file (fetches check the age themselves).
    const retention = this.config.fullPictureRetentionMs
    if (now - this.#sweptAt >= Math.min(60_000, retention / 10)) {
      this.#sweptAt = now
      await sweep(dir, now - retention)
    }
    return { id, url: `${this.config.fileServiceBaseUrl.replace(/\/+$/, '')}${FULL_PICTURE_ROUTE}?id=${id}` }
  }

  /** The JPEG file of picture `id`, rendered now on its first fetch. PictureNotFound when unknown or expired. */
  async file(id: string, now: number): Promise<string> {
    const dir = picturesDir(this.config)
    const jpeg = path.join(dir, `${id}.jpg`)
    const rendered = await stat(jpeg).catch(() => null)
    if (rendered) return this.#unexpired(jpeg, rendered.mtimeMs, id, now)
    let rendering = this.#rendering.get(id)
    if (!rendering) {
      rendering = this.#render(dir, id, now).finally(() => this.#rendering.delete(id))
      this.#rendering.set(id, rendering)
    }
    return rendering
  }

  async #render(dir: string, id: string, now: number): Promise<string> {
    const source = path.join(dir, `${id}.src`), resultFile = path.join(dir, `${id}.json`)
    const kept = await stat(source).catch(() => null)
    if (!kept) {
      // Rendered by a fetch that finished while this one looked for the JPEG.
      const rendered = await stat(path.join(dir, `${id}.jpg`)).catch(() => null)
      if (rendered) return this.#unexpired(path.join(dir, `${id}.jpg`), rendered.mtimeMs, id, now)
      throw new ApiError('PictureNotFound', { details: { id } })
    }
    await this.#unexpired(source, kept.mtimeMs, id, now)
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as DetectionResultCore
    const jpeg = await this.inference.renderOverlay({ kind: 'path', path: source }, result)
    const file = path.join(dir, `${id}.jpg`)
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, jpeg)
    await utimes(temporary, kept.mtime, kept.mtime)
    await rename(temporary, file)
    await rm(source, { force: true })
    await rm(resultFile, { force: true })
    return file
  }

  async #unexpired(file: string, mtimeMs: number, id: string, now: number): Promise<string> {
    if (mtimeMs >= now - this.config.fullPictureRetentionMs) return file
    await rm(file, { force: true })
    throw new ApiError('PictureNotFound', { details: { id } })
  }
}

/**
 * A picture that is already a JPEG (a camera capture, a stream task's snapshot), kept as
 * `<id>.jpg` under the pictures folder, so that FullPicture serves it (Range supported) for
 * FULL_PICTURE_RETENTION_MS like a rendered overlay.
 */
export async function keepRenderedPicture(jpeg: Buffer, config: PictureConfig): Promise<{ id: string; url: string }> {
  const dir = picturesDir(config)
  await mkdir(dir, { recursive: true })
  const id = randomUUID()
  await writeFile(path.join(dir, `${id}.jpg`), jpeg)
  return { id, url: `${config.fileServiceBaseUrl.replace(/\/+$/, '')}${FULL_PICTURE_ROUTE}?id=${id}` }
}

/** spec 2.6 `fullPicture` of a ready JPEG: a `data:` URL, or in URL mode the kept picture's URL. */
export async function toFullPicture(jpeg: Buffer, config: PictureConfig, now: number): Promise<string | DataUrl> {
  if (!config.fileServiceBaseUrl) return new DataUrl('image/jpeg', jpeg)
  const { url } = await keepRenderedPicture(jpeg, config)
  await sweep(picturesDir(config), now - config.fullPictureRetentionMs)
  return url
}

/** Removes pictures (and images waiting for their overlay) older than the retention. */
async function sweep(dir: string, olderThan: number): Promise<void> {
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name)
    try {
      if ((await stat(file)).mtimeMs < olderThan) await rm(file, { force: true })
    } catch {
      // removed concurrently
    }
  }
}
