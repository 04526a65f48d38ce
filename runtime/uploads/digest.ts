import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** Lower-case hex sha256 of a stream (a chunk, or a whole session's file). */
export async function sha256Of(source: Readable): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(source, hash)
  return hash.digest('hex')
}
