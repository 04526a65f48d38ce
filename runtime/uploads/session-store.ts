/**
 * The upload store: a subclass of @tus/file-store's FileStore. Relied on, beyond its typed API:
 * the constructor's options and its call of `checkOrCreateDirectory` (replaced below), the
 * `extensions` list, the file layout (bytes at `<directory>/<id>`, written in place from the
 * offset, the record at `<id>.json`, the offset read back as the file size; the upload service
 * writes, truncates and removes these files itself), and how @tus/server drives the store
 * (`write(stream, id, offset)` for a PATCH, Upload-Checksum left to the store, errors from the
 * store handed to onResponseError as thrown). So @tus/file-store and @tus/server are pinned to
 * exact versions in package.json, and test/uploads/tus-store-internals.unit.test.ts fails when an
 * upgrade changes any of it.
 */
import { createHash, type Hash } from 'node:crypto'
import { createWriteStream, mkdirSync } from 'node:fs'
import { truncate } from 'node:fs/promises'
import path from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type http from 'node:http'
import { FileStore } from '@tus/file-store'
import { ApiError } from '../../shared/errors/index.ts'
import type { SessionWrite } from './locks.ts'

/** What the upload service does around the store's own work (manifest bookkeeping). */
export interface StoreHooks {
  /**
   * Before bytes of a tus PATCH are stored: takes the session's write lock, held until the
   * write and afterWrite are done (released by the store), so that the sweeper counts the
   * PATCH as activity and cancelUpload can stop it; throws when the session can take no bytes.
   */
  beginWrite(uploadId: string): Promise<SessionWrite>
  /** After bytes of a tus PATCH were stored; may throw a tus error ({status_code, body}). */
  afterWrite(uploadId: string, offset: number): Promise<void>
  /** Before a tus termination (DELETE) removes the bytes. */
  beforeRemove(uploadId: string): Promise<void>
}

/** tus checksum extension: `Upload-Checksum: <algorithm> <base64 digest>` of one PATCH body. */
export interface ExpectedChecksum {
  algorithm: string
  digest: string
}

const MB = 1024 * 1024

/** spec 3.1 "open → cancelled" while a tus PATCH was writing: the PATCH is stopped. */
const cancelled = (uploadId: string) => new ApiError('UPLOAD_CANCELLED', { details: { uploadId, state: 'cancelled' } })

export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5']

/**
 * The tus FileStore shared by both protocols, with the checksum extension (which @tus/server
 * leaves to the store) and hooks that keep the session manifests in step with tus requests.
 * `uploadTemp` chunks call `write` too; the hooks ignore sessions that are not tus sessions.
 */
export class SessionFileStore extends FileStore {
  /** Checksums announced by PATCH requests in flight, by upload id (tus locks one PATCH per upload). */
  readonly expectedChecksums = new Map<string, ExpectedChecksum>()

  constructor(directory: string, private readonly hooks: StoreHooks) {
    mkdirSync(directory, { recursive: true })
    // No expiration period of the store's own: @tus/server would count it from creation_date,
    // expiring uploads still in progress. The service's rule (last activity + idle timeout,
    // absolute lifetime, spec 3.1 / 8) decides, and runtime/uploads/tus.ts sets Upload-Expires.
    super({ directory, expirationPeriodInMilliseconds: 0 })
    this.extensions = [...this.extensions, 'checksum']
  }

  override async write(readable: http.IncomingMessage | Readable, id: string, offset: number): Promise<number> {
    const session = await this.hooks.beginWrite(id)
    const { signal } = session.abort
    const stop = () => readable.destroy(cancelled(id))
    signal.addEventListener('abort', stop, { once: true })
    try {
      return await this.writeChecked(readable, id, offset)
    } catch (error) {
      throw signal.aborted ? cancelled(id) : error
    } finally {
      signal.removeEventListener('abort', stop)
      session.release()
    }
  }

  /** FileStore.write plus the checksum extension and the afterWrite hook. */
  private async writeChecked(readable: http.IncomingMessage | Readable, id: string, offset: number): Promise<number> {
    const expected = this.expectedChecksums.get(id)
    if (!expected) {
      const end = await super.write(readable, id, offset)
      await this.hooks.afterWrite(id, end)
      return end
    }
    this.expectedChecksums.delete(id)
    const hash: Hash = createHash(expected.algorithm)
    const hashing = new Transform({ transform(chunk, _encoding, callback) { hash.update(chunk); callback(null, chunk) } })
    readable.once('error', (error) => hashing.destroy(error))
    const end = await super.write(readable.pipe(hashing), id, offset)
    if (hash.digest('base64') !== expected.digest) {
      // tus checksum extension: a mismatching PATCH is discarded and answered 460.
      await truncate(path.join(this.directory, id), offset)
      throw { status_code: 460, body: 'Checksum Mismatch\n' }
    }
    await this.hooks.afterWrite(id, end)
    return end
  }

  /**
   * A write of the uploadTemp protocol (its manifest is committed by the service, no hooks).
   * Same as FileStore.write, with a 1 MB write buffer: the many small reads of a request body
   * leave in few large writev calls instead of one thread-pool round trip each.
   */
  async writeChunk(readable: Readable, id: string, offset: number): Promise<number> {
    const file = createWriteStream(path.join(this.directory, id), { flags: 'r+', start: offset, highWaterMark: MB })
    await pipeline(readable, file)
    return offset + file.bytesWritten
  }

  override async remove(id: string): Promise<void> {
    await this.hooks.beforeRemove(id)
    await super.remove(id)
  }
}

// FileStore's constructor also creates the folder, asynchronously, throwing from a callback
// when the folder vanished meanwhile (a test cleaning up); it exists already (see above).
Object.defineProperty(SessionFileStore.prototype, 'checkOrCreateDirectory', { value: () => undefined })
