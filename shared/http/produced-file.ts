import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { removeFilesStartingWith } from '../leftover-files.ts'
import { rangedFileResponse, type RangedFileOptions } from './ranged-file.ts'

const PRODUCED_PREFIX = 'export-'

/** Where exports are produced before they are served: `<DATA_DIR>/tmp`. */
export const scratchDirOf = (dataPath: string): string => path.join(dataPath, 'tmp')

/** At start-up: produced files a stopped process could not remove (a download cut by a crash). */
export const removeLeftoverProducedFiles = (scratchDir: string): Promise<number> => removeFilesStartingWith(scratchDir, PRODUCED_PREFIX)

/**
 * spec 4.11: every managed-file download supports a single Range. An export produced on the
 * fly (zip, tar.gz) has no length and cannot seek, so it is written to a scratch file first,
 * served ranged from there and deleted once the response is done.
 */
export async function producedFileResponse(
  request: Request | null,
  scratchDir: string,
  produce: () => Readable | Promise<Readable>,
  options: Omit<RangedFileOptions, 'removeWhenDone'> & { downloadName: string },
): Promise<Response> {
  await mkdir(scratchDir, { recursive: true })
  const file = path.join(scratchDir, `${PRODUCED_PREFIX}${randomUUID()}${path.extname(options.downloadName)}`)
  try {
    await pipeline(await produce(), createWriteStream(file, { flags: 'wx' }))
  } catch (error) {
    await rm(file, { force: true })
    throw error
  }
  return rangedFileResponse(request, file, { ...options, removeWhenDone: true })
}
