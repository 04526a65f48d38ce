import { randomUUID } from 'node:crypto'
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from '../../shared/config.ts'
import { DataUrl } from '../../shared/http/json-bytes.ts'
import { FULL_PICTURE_ROUTE, picturesDir } from '../../shared/tasks/full-picture.ts'

/**
 * spec 2.6 `fullPicture`: a `data:image/jpeg;base64,...` value, or — when a file service is
 * configured (FILE_SERVICE_BASE_URL) — a URL of the device serving the stored JPEG.
 */
export async function toFullPicture(jpeg: Buffer, config: Pick<Config, 'dataPath' | 'fileServiceBaseUrl' | 'fullPictureRetentionMs'>, now: number): Promise<string | DataUrl> {
  if (!config.fileServiceBaseUrl) return new DataUrl('image/jpeg', jpeg)
  const dir = picturesDir(config)
  await mkdir(dir, { recursive: true })
  const id = randomUUID()
  await writeFile(path.join(dir, `${id}.jpg`), jpeg)
  await sweep(dir, now - config.fullPictureRetentionMs)
  return `${config.fileServiceBaseUrl.replace(/\/+$/, '')}${FULL_PICTURE_ROUTE}?id=${id}`
}

/** Removes pictures older than the retention. */
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
