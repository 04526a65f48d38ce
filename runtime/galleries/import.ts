import { createHash, randomUUID } from 'node:crypto'
import { lstat, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import { archiveFormat, insidePath, unpackArchive, type ArchiveLimits, type ArchiveViolation } from '../archive/safe-unpack.ts'
import type { Db } from '../db/client.ts'
import { galleryImportJobs } from '../../shared/db/schema/index.ts'
import { ApiError } from '../../shared/errors/index.ts'
import type { ImportJob, ImportRowError } from '../../shared/galleries/types.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import { MANIFEST_FILES, parseManifest, type ImportRow } from './import-manifest.ts'

export interface ImportJobsOptions {
  db: Db
  clock: Clock
  log: Logger
  dataPath: string
  limits: ArchiveLimits
  uploads: Pick<UploadService, 'claim'>
  /**
   * Prepares one row: `skipped` when its person already has this image, else the face is
   * described (GalleryFaceCount when the image has not exactly one) and the answer is the
   * step that stores the person and face.
   */
  importRow(galleryId: string, row: ImportRow, image: { path: string; sha256: string }): Promise<'skipped' | StoreRow>
}

export type StoreRow = () => Promise<'imported'>
type Prepared = 'skipped' | StoreRow | ImportRowError

const PERSON_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/** Rows described ahead of the one being stored (bench/gallery-import.bench.ts: 2 on 2 cores). */
const ROWS_AHEAD = 2
/** Folders some zip tools add on their own (macOS resource forks): skipped, never written. */
const IGNORED = /^(__MACOSX)(\/|$)|(^|\/)\.DS_Store$/

function refusal(violation: ArchiveViolation): ApiError {
  switch (violation.kind) {
    case 'too-many-entries': return new ApiError('FaceImportArchiveTooLarge', { details: { limitEntries: violation.limit } })
    case 'too-large': return new ApiError('FaceImportArchiveTooLarge', { details: { limitBytes: String(violation.limit), atLeastBytes: String(violation.atLeast) } })
    case 'unsafe-path': case 'entry-type': return new ApiError('FaceImportArchiveUnsafe', { details: { entry: violation.entry.slice(0, 512), reason: violation.reason } })
    case 'unsafe-link': return new ApiError('FaceImportArchiveUnsafe', { details: { entry: violation.entry.slice(0, 512), reason: 'link' } })
    case 'corrupt': return new ApiError('FaceImportArchiveInvalid', { details: { reason: violation.reason.slice(0, 200) } })
  }
}

/**
 * Face imports (spec 4.10 "File import"): an archive uploaded with purpose `face-import`
 * becomes an asynchronous job (one at a time: the machine has 2 cores) that unpacks it under
 * the archive rules of runtime/archive (regular files and folders only, no absolute or `..`
 * paths, bounded entries and expanded size) into `<DATA_DIR>/imports/<jobId>`, reads its
 * manifest and registers each row, recording progress, counts and per-row errors in
 * `gallery_import_jobs`. A job still running when the device stopped is marked failed at start.
 */
export class ImportJobs {
  #queue: Promise<void> = Promise.resolve()

  constructor(private readonly options: ImportJobsOptions) {}

  #dir(jobId?: string) {
    const root = path.join(this.options.dataPath, 'imports')
    return jobId ? path.join(root, jobId) : root
  }

  /** At start: jobs cut off by a stop are failed, their unpacked files removed. */
  async recover(): Promise<void> {
    const { db, clock } = this.options
    const error = new ApiError('FaceImportInterrupted').item
    await db.update(galleryImportJobs).set({ state: 'failed', error: error as never, updatedAt: clock.now() }).where(eq(galleryImportJobs.state, 'running'))
    await rm(this.#dir(), { recursive: true, force: true })
  }

  async start(galleryId: string, uploadId: string, identity: Identity): Promise<{ jobId: string }> {
    const upload = await this.options.uploads.claim(uploadId, identity, 'face-import', { keepUntilRelease: true })
    const jobId = randomUUID()
    const now = this.options.clock.now()
    await this.options.db.insert(galleryImportJobs).values({
      jobId, galleryId, state: 'running', total: 0, processed: 0, imported: 0, skipped: 0, failed: 0, errors: [], createdAt: now, updatedAt: now,
    })
    // One job after another; a job that could not even record its failure does not stop the next.
    this.#queue = this.#queue.then(() => this.#run(jobId, galleryId, upload.path)).finally(() => upload.release())
      .catch((error: Error) => this.options.log.error({ jobId, err: error.message }, 'face import job failed'))
    return { jobId }
  }

  async status(jobId: string): Promise<ImportJob> {
    const row = (await this.options.db.select().from(galleryImportJobs).where(eq(galleryImportJobs.jobId, jobId)))[0]
    if (!row) throw new ApiError('FaceImportNotFound', { details: { jobId } })
    return { ...row, errors: row.errors as ImportRowError[], error: row.error ?? null, createdAt: String(row.createdAt), updatedAt: String(row.updatedAt) }
  }

  async #run(jobId: string, galleryId: string, archive: string): Promise<void> {
    const { db, clock, log } = this.options
    const dir = this.#dir(jobId)
    const save = (fields: Partial<typeof galleryImportJobs.$inferInsert>) =>
      db.update(galleryImportJobs).set({ ...fields, updatedAt: clock.now() }).where(eq(galleryImportJobs.jobId, jobId))
    // Rows being prepared while the loop stores an earlier one: settled before the folder goes.
    const ahead: Promise<Prepared>[] = []
    try {
      const format = await archiveFormat(archive)
      if (!format) throw new ApiError('FaceImportArchiveInvalid', { details: { reason: 'not a zip or tar.gz archive' } })
      await unpackArchive(archive, dir, format, { limits: this.options.limits, links: 'refuse', skip: IGNORED, refusal })
      const rows = await readManifest(dir)
      await save({ total: rows.length })
      const counts = { processed: 0, imported: 0, skipped: 0, failed: 0 }
      const errors: ImportRowError[] = []
      const seen = new Set<string>()
      // The sidecar describes the next rows (ROWS_AHEAD at once) while this one is stored:
      // a describe alone leaves part of the 2 cores idle, and every database write stays in
      // this loop, one after another, in manifest order.
      let next = 0
      const fill = () => {
        while (ahead.length < ROWS_AHEAD && next < rows.length) {
          const row = this.#prepare(galleryId, rows[next++]!, dir, seen)
          row.catch(() => undefined) // a failure waiting its turn is not unhandled: the loop awaits it
          ahead.push(row)
        }
      }
      fill()
      while (ahead.length > 0) {
        const prepared = await ahead.shift()!
        fill()
        const outcome = typeof prepared === 'function' ? await prepared() : prepared
        counts.processed++
        if (typeof outcome === 'string') counts[outcome]++
        else { counts.failed++; errors.push(outcome) }
        await save({ ...counts, errors })
      }
      // The unpacked folder goes before the job is reported ended (a client that sees `done` sees no folder).
      await rm(dir, { recursive: true, force: true })
      await save({ state: 'done' })
      log.info({ jobId, galleryId, ...counts }, 'face import finished')
    } catch (error) {
      const item = error instanceof ApiError ? error.item : new ApiError('Internal').item
      if (!(error instanceof ApiError)) log.error({ jobId, err: (error as Error).message }, 'face import failed')
      await Promise.allSettled(ahead)
      await rm(dir, { recursive: true, force: true })
      await save({ state: 'failed', error: item as never })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  /**
   * One manifest row: skipped, the step that stores it, or why it failed. Its ids are checked
   * before the first await, so rows prepared together are still judged in manifest order.
   */
  async #prepare(galleryId: string, row: ImportRow, dir: string, seen: Set<string>): Promise<Prepared> {
    const failure = (reason: ImportRowError['reason'], extra: { faces?: number; detail?: string } = {}): ImportRowError =>
      ({ row: row.row, personId: row.personId, file: row.file, reason, ...extra })
    if (!PERSON_ID.test(row.personId)) return failure('invalid-row', { detail: 'personId: letters, digits, . _ - (at most 128)' })
    if (row.name.length === 0 || row.name.length > 128) return failure('invalid-row', { detail: 'name: 1 to 128 characters' })
    // A person id appears once per manifest: a second row would silently replace the first.
    if (seen.has(row.personId)) return failure('duplicate-id')
    seen.add(row.personId)
    const inside = insidePath(row.file)
    const file = inside && inside !== '.' ? path.join(dir, inside) : null
    if (!file || !(await lstat(file).then((s) => s.isFile(), () => false))) return failure('missing-file')
    const sha256 = createHash('sha256').update(await readFile(file)).digest('hex')
    try {
      return await this.options.importRow(galleryId, row, { path: file, sha256 })
    } catch (error) {
      if (error instanceof ApiError && error.id === 'GalleryFaceCount') {
        const faces = Number(error.item.details.faces)
        return failure(faces === 0 ? 'no-face' : 'several-faces', { faces })
      }
      if (error instanceof ApiError && (error.id === 'GalleryFaceTooSmall' || error.id === 'GalleryFaceBlurred' || error.id === 'GalleryFaceTurned'))
        return failure('poor-face', { detail: `${error.item.messageKey}: ${String(error.item.details.measure)} ${String(error.item.details.measured)}, limit ${String(error.item.details.limit)}` })
      if (error instanceof ApiError && (error.id === 'ImageDecodeFailed' || error.id === 'IMAGE_INPUT_TOO_LARGE' || error.id === 'IMAGE_RESOLUTION_TOO_LARGE'))
        return failure('bad-image', { detail: error.item.messageKey })
      throw error
    }
  }
}

async function readManifest(dir: string): Promise<ImportRow[]> {
  for (const name of MANIFEST_FILES) {
    const text = await readFile(path.join(dir, name), 'utf8').catch(() => null)
    if (text !== null) return parseManifest(name, text)
  }
  throw new ApiError('FaceImportManifestInvalid', { details: { reason: `the archive has no ${MANIFEST_FILES.join(' or ')} at its root` } })
}
