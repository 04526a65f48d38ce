import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** Lower-case hex sha256 of a stream (an upload's chunk, or a whole session's file). */
export async function sha256Of(source: Readable): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(source, hash)
  return hash.digest('hex')
}

/** Lower-case hex sha256 of a file (a model, a backup's files), read 1 MB at a time. */
export const sha256File = (file: string): Promise<string> => sha256Of(createReadStream(file, { highWaterMark: 1024 * 1024 }))
