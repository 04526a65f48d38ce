import { randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { asc, count, eq } from 'drizzle-orm'
import type { Config } from '../../shared/config.ts'
import type { Db } from '../db/client.ts'
import { containsText } from '../db/like.ts'
import { audioColumns, audioFiles } from '../../shared/db/schema/index.ts'
import { ApiError, invalidParam } from '../../shared/errors/index.ts'
import type { Clock, Identity, Logger } from '../../shared/handler.ts'
import { KeyedMutex } from '../keyed-mutex.ts'
import type { UploadService } from '../../shared/uploads/index.ts'
import { AUDIO_PREVIEW_ROUTE, AUDIO_UPLOAD_PURPOSE, type AudioColumnView, type AudioFileView, type AudioService, type ColumnTestResult, type PlayOutcome, type PlayTestResult } from '../../shared/audio/types.ts'
import type { AddAudioColumnInput, UpdateAudioColumnInput } from '../../shared/audio/schemas.ts'
import { ffmpegBinary } from '../cameras/ffmpeg.ts'
import { AudioFfmpegError, TARGET_LOUDNESS, convertForPush, decodedAudio, normalizeToMp3, probeAudio, PUSH_FORMATS } from './ffmpeg-audio.ts'
import { push, tcpConnect } from './http-push.ts'
import { splitCredentials, type SplitUrl } from '../url-credentials.ts'

type FileRow = typeof audioFiles.$inferSelect
type ColumnRow = typeof audioColumns.$inferSelect

export interface AudioServiceOptions {
  db: Db
  config: Pick<Config, 'dataPath' | 'ffmpegPath' | 'audioMaxDurationMs' | 'audioMaxFileBytes' | 'audioFfmpegTimeoutMs'>
  clock: Clock
  log: Logger
  uploads: UploadService
}

const DEFAULT_TIMEOUT_MS = 10_000
const AUDIO_DIR = 'audio'

const invalidFile = (reason: string, details: Record<string, unknown> = {}) =>
  new ApiError('AudioFileInvalid', { details: { reason, ...details }, msgText: `The audio file was refused: ${reason}` })

/** A column URL: http(s) only, credentials split off (given fields win), no white space. */
function parseColumnUrl(raw: string): SplitUrl {
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(raw)) throw invalidParam('/url', 'contains white space or control characters')
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw invalidParam('/url', 'is not an absolute URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalidParam('/url', 'must start with http:// or https://')
  if (!parsed.hostname) throw invalidParam('/url', 'has no host')
  return splitCredentials(parsed)
}

/**
 * `ctx.audio` (spec 4.10 Audio): audio files in `audio_files` with their normalized MP3 under
 * `<DATA_DIR>/audio`, and audio columns in `audio_columns`. Plays on one column run one at a
 * time (a speaker plays one thing at once), plays on different columns run side by side.
 */
export class AudioFilesAndColumns implements AudioService {
  readonly #binary: string
  readonly #columnQueue = new KeyedMutex()

  constructor(private readonly options: AudioServiceOptions) {
    this.#binary = ffmpegBinary(options.config.ffmpegPath)
  }

  get #dir() {
    return path.join(this.options.config.dataPath, AUDIO_DIR)
  }

  // ── files ──────────────────────────────────────────────────────────────────────────
  async addFile(input: { uploadId: string; audioName?: string }, identity: Identity): Promise<AudioFileView> {
    const { config } = this.options
    // A refused file leaves the upload complete (lease → abandon): the client may cancel it or fix the setting.
    const lease = await this.options.uploads.lease(input.uploadId, identity, AUDIO_UPLOAD_PURPOSE)
    const audioId = randomUUID()
    const file = path.join(this.#dir, `${audioId}.mp3`)
    const partial = `${file}.partial`
    try {
      if (lease.size > config.audioMaxFileBytes) throw invalidFile(`the file is larger than ${config.audioMaxFileBytes} bytes`, { actualBytes: lease.size, limitBytes: config.audioMaxFileBytes })
      const probed = await this.#ffmpeg(() => probeAudio(this.#binary, lease.path, config.audioFfmpegTimeoutMs))
      if (probed.durationMs !== null && probed.durationMs > config.audioMaxDurationMs) throw tooLong(probed.durationMs, config.audioMaxDurationMs)
      await mkdir(this.#dir, { recursive: true })
      const { inputLoudness } = await this.#ffmpeg(() => normalizeToMp3(this.#binary, lease.path, partial, { channels: probed.channels, maxMs: config.audioMaxDurationMs, timeoutMs: config.audioFfmpegTimeoutMs }))
      // The decoded length, not the header's: a header may lie; decoding stopped a second past the limit.
      const decoded = await this.#ffmpeg(() => decodedAudio(this.#binary, partial, config.audioFfmpegTimeoutMs))
      if (decoded.durationMs > config.audioMaxDurationMs) throw tooLong(decoded.durationMs, config.audioMaxDurationMs)
      if (decoded.durationMs === 0) throw invalidFile('the audio stream holds no samples')
      await rename(partial, file)
      const row: FileRow = {
        audioId, audioName: input.audioName ?? lease.originalFilename.slice(0, 128), originalName: lease.originalFilename.slice(0, 255),
        sourceFormat: probed.format, durationMs: decoded.durationMs, sampleRate: decoded.sampleRate, channels: decoded.channels,
        sizeBytes: (await stat(file)).size, inputLoudness, file: path.posix.join(AUDIO_DIR, `${audioId}.mp3`),
        createdBy: identity.accountName, createdAt: this.options.clock.now(),
      }
      await this.options.db.insert(audioFiles).values(row)
      await lease.commit()
      this.options.log.info({ audioId, format: row.sourceFormat, durationMs: row.durationMs, inputLoudness }, 'audio file added')
      return view(row)
    } catch (error) {
      await rm(partial, { force: true })
      await rm(file, { force: true })
      await lease.abandon()
      throw error
    }
  }

  /** ffmpeg's refusal as the catalogue's AudioFileInvalid. */
  async #ffmpeg<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step()
    } catch (error) {
      if (error instanceof AudioFfmpegError) throw invalidFile(error.reason)
      throw error
    }
  }

  async page(query: { pageNum: number; pageSize: number; audioName?: string }) {
    const where = query.audioName ? containsText(audioFiles.audioName, query.audioName) : undefined
    const [total] = await this.options.db.select({ n: count() }).from(audioFiles).where(where)
    const rows = await this.options.db.select().from(audioFiles).where(where).orderBy(asc(audioFiles.createdAt), asc(audioFiles.audioId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    return { total: total?.n ?? 0, rows: rows.map(view) }
  }

  async deleteFile(audioId: string): Promise<void> {
    const [gone] = await this.options.db.delete(audioFiles).where(eq(audioFiles.audioId, audioId)).returning()
    if (!gone) throw new ApiError('AudioFileNotFound', { details: { audioId } })
    await rm(path.join(this.options.config.dataPath, gone.file), { force: true })
    this.options.log.info({ audioId }, 'audio file deleted')
  }

  async #file(audioId: string): Promise<FileRow> {
    const [row] = await this.options.db.select().from(audioFiles).where(eq(audioFiles.audioId, audioId))
    if (!row) throw new ApiError('AudioFileNotFound', { details: { audioId } })
    return row
  }

  async fileOf(audioId: string) {
    const row = await this.#file(audioId)
    const base = row.audioName.replace(/\.[A-Za-z0-9]{1,5}$/, '')
    return { path: path.join(this.options.config.dataPath, row.file), downloadName: `${base}.mp3` }
  }

  async playTest(audioId: string): Promise<PlayTestResult> {
    const { path: file } = await this.fileOf(audioId)
    const decoded = await this.#ffmpeg(() => decodedAudio(this.#binary, file, this.options.config.audioFfmpegTimeoutMs))
    return { audioId, decodedDurationMs: decoded.durationMs, sampleRate: decoded.sampleRate, channels: decoded.channels, previewUrl: `${AUDIO_PREVIEW_ROUTE}?audioId=${encodeURIComponent(audioId)}` }
  }

  // ── columns ────────────────────────────────────────────────────────────────────────
  async addColumn(input: AddAudioColumnInput): Promise<AudioColumnView> {
    const parsed = parseColumnUrl(input.url)
    const now = this.options.clock.now()
    const row: ColumnRow = {
      columnId: randomUUID(), columnName: input.columnName, protocol: 'http-push', url: parsed.url, method: input.method ?? 'POST', format: input.format ?? 'mp3',
      username: input.username ?? parsed.username, password: input.password ?? parsed.password, timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      createdAt: now, updatedAt: now,
    }
    await this.options.db.insert(audioColumns).values(row)
    return columnView(row)
  }

  async updateColumn(input: UpdateAudioColumnInput): Promise<AudioColumnView> {
    const current = await this.#column(input.columnId)
    const parsed = input.url !== undefined ? parseColumnUrl(input.url) : null
    const row: ColumnRow = {
      ...current,
      columnName: input.columnName ?? current.columnName,
      url: parsed?.url ?? current.url,
      method: input.method ?? current.method,
      format: input.format ?? current.format,
      username: input.username ?? parsed?.username ?? current.username,
      password: input.password === '' ? null : input.password ?? parsed?.password ?? current.password,
      timeoutMs: input.timeoutMs ?? current.timeoutMs,
      updatedAt: this.options.clock.now(),
    }
    await this.options.db.update(audioColumns).set(row).where(eq(audioColumns.columnId, row.columnId))
    return columnView(row)
  }

  async deleteColumn(columnId: string): Promise<void> {
    const gone = await this.options.db.delete(audioColumns).where(eq(audioColumns.columnId, columnId)).returning()
    if (gone.length === 0) throw new ApiError('AudioColumnNotFound', { details: { columnId } })
  }

  async columns(query: { pageNum: number; pageSize: number }) {
    const [total] = await this.options.db.select({ n: count() }).from(audioColumns)
    const rows = await this.options.db.select().from(audioColumns).orderBy(asc(audioColumns.createdAt), asc(audioColumns.columnId))
      .limit(query.pageSize).offset((query.pageNum - 1) * query.pageSize)
    return { total: total?.n ?? 0, rows: rows.map(columnView) }
  }

  async #column(columnId: string): Promise<ColumnRow> {
    const [row] = await this.options.db.select().from(audioColumns).where(eq(audioColumns.columnId, columnId))
    if (!row) throw new ApiError('AudioColumnNotFound', { details: { columnId } })
    return row
  }

  /** TCP connect to the column, then an HTTP HEAD with its credentials: reachable, and do they work. */
  async testColumn(columnId: string): Promise<ColumnTestResult> {
    const row = await this.#column(columnId)
    this.options.log.debug({ columnId, url: row.url }, 'testing audio column')
    const connected = await tcpConnect(row.url, row.timeoutMs)
    if (!connected.ok) return { columnId, reachable: false, connectMs: null, httpStatus: null, authOk: null, error: connected.error }
    try {
      const { status } = await push({ url: row.url, method: 'HEAD', username: row.username, password: row.password }, null, { timeoutMs: row.timeoutMs })
      return { columnId, reachable: true, connectMs: connected.ms, httpStatus: status, authOk: status !== 401 && status !== 403, error: null }
    } catch (error) {
      return { columnId, reachable: true, connectMs: connected.ms, httpStatus: null, authOk: null, error: (error as Error).message }
    }
  }

  playOnColumn(request: { columnId: string; audioId: string; signal?: AbortSignal }): Promise<PlayOutcome> {
    return this.#columnQueue.run(request.columnId, async () => {
      request.signal?.throwIfAborted()
      const column = await this.#column(request.columnId)
      const file = await this.#file(request.audioId)
      const stored = path.join(this.options.config.dataPath, file.file)
      const format = column.format
      const bytes = format === 'mp3'
        ? await readFile(stored)
        : await this.#ffmpeg(() => convertForPush(this.#binary, stored, format, { timeoutMs: this.options.config.audioFfmpegTimeoutMs, signal: request.signal }))
      const target = { url: column.url, method: column.method, username: column.username, password: column.password }
      this.options.log.debug({ columnId: column.columnId, audioId: file.audioId, format, bytes: bytes.length }, 'pushing audio to column')
      let answer
      try {
        // A column may play while it receives: the file's duration on top of the timeout.
        answer = await push(target, { bytes, contentType: PUSH_FORMATS[format].contentType }, { timeoutMs: column.timeoutMs + file.durationMs, signal: request.signal })
      } catch (error) {
        request.signal?.throwIfAborted()
        throw new ApiError('AudioColumnUnreachable', { details: { columnId: column.columnId, reason: (error as Error).message } })
      }
      const details = { columnId: column.columnId, status: answer.status }
      if (answer.status === 401 || answer.status === 403) throw new ApiError('AudioColumnAuthFailed', { details })
      if (answer.status >= 300) throw new ApiError('AudioColumnRejected', { details })
      this.options.log.info({ columnId: column.columnId, audioId: file.audioId, format, bytes: bytes.length, status: answer.status }, 'audio played on column')
      return { columnId: column.columnId, audioId: file.audioId, format, bytesSent: bytes.length, httpStatus: answer.status, timeMs: answer.timeMs }
    })
  }
}

const tooLong = (durationMs: number, limitMs: number) => new ApiError('AudioFileTooLong', { details: { durationMs, limitMs } })

const view = (row: FileRow): AudioFileView => ({
  audioId: row.audioId, audioName: row.audioName, originalName: row.originalName, sourceFormat: row.sourceFormat, durationMs: row.durationMs,
  sampleRate: row.sampleRate, channels: row.channels, sizeBytes: row.sizeBytes, inputLoudness: row.inputLoudness, targetLoudness: TARGET_LOUDNESS,
  createdBy: row.createdBy, createdAt: row.createdAt,
})

const columnView = (row: ColumnRow): AudioColumnView => ({
  columnId: row.columnId, columnName: row.columnName, protocol: row.protocol, url: row.url, method: row.method, format: row.format,
  username: row.username, passwordSet: !!row.password, timeoutMs: row.timeoutMs, createdAt: row.createdAt, updatedAt: row.updatedAt,
})
