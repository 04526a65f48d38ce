import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { loadConfig, type Config } from '../../shared/config.ts'
import { migrateDb, openDb, type OpenDb } from '../../runtime/db/client.ts'
import { isApiError } from '../../shared/errors/index.ts'
import type { Identity, Logger } from '../../shared/handler.ts'
import type { ChunkFields } from '../../shared/uploads/index.ts'
import { UploadManager, type UploadServiceOptions } from '../../runtime/uploads/service.ts'

export const MB = 1024 * 1024
export const migrationsFolder = path.resolve(import.meta.dirname, '../../shared/db/migrations')

export const identity = (userId: string): Identity =>
  ({ userId, accountName: userId, sessionId: `s-${userId}`, transport: 'http', passwordChangeRequired: false })
export const alice = identity('alice')
export const bob = identity('bob')

const silent: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, child: () => silent }

/** `advance` is time passing (both clocks); `set` steps the wall clock alone (the monotonic clock stays). */
export class TestClock {
  mono = 0
  constructor(public time = 1_700_000_000_000) {}
  now = () => this.time
  monotonic = () => this.mono
  advance(ms: number) { this.time += ms; this.mono += ms }
  set(ms: number) { this.time = ms }
}

export interface Harness {
  dir: string
  config: Config
  clock: TestClock
  db: OpenDb
  uploads: UploadManager
  /** A new service on the same database file and staging folder (a process restart). */
  restart(): Promise<UploadManager>
  close(): Promise<void>
}

/** A real libsql file database and a real FileStore in a temporary folder. */
export async function harness(overrides: Partial<Record<keyof Config, unknown>> = {},
  extra: Partial<UploadServiceOptions> = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), 'uploads-test-'))
  const config = loadConfig({}, { dataDir: dir, uploadReserveBytes: 0, ...overrides })
  const clock = new TestClock()
  let db = openDb(config.databaseUrl)
  await migrateDb(db.db, migrationsFolder)
  const make = () => new UploadManager({ db: db.db, config, clock, log: silent, sweepTimer: false, ...extra })
  const h: Harness = {
    dir, config, clock, db, uploads: make(),
    async restart() {
      await h.uploads.close()
      db.close()
      db = openDb(config.databaseUrl)
      h.db = db
      h.uploads = make()
      return h.uploads
    },
    async close() {
      await h.uploads.close()
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return h
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
export const bytes = (n: number) => randomBytes(n)

/** Splits a file into chunks and returns the fields of chunk i. */
export function chunkOf(file: Buffer, chunkBytes: number, index: number, extra: Partial<ChunkFields> = {}) {
  const totalChunks = Math.max(1, Math.ceil(file.length / chunkBytes))
  const body = file.subarray(index * chunkBytes, Math.min(file.length, (index + 1) * chunkBytes))
  const fields: ChunkFields = {
    filename: 'photo.jpg', purpose: 'image', chunkIndex: index, totalChunks, totalSize: file.length,
    chunkSize: body.length, clientRequestId: 'req-1', ...extra,
  }
  return { fields, body }
}

export const stream = (data: Buffer) => Readable.from([data])

/** Awaits a promise that must fail with a catalogue error and returns its message item. */
export async function apiError(promise: Promise<unknown>) {
  try {
    await promise
  } catch (error) {
    if (!isApiError(error)) throw error
    return { ...error.item, httpStatus: error.httpStatus }
  }
  throw new Error('expected an ApiError, the call succeeded')
}
