import type { Identity } from '../handler.ts'
import type { AddAudioColumnInput, UpdateAudioColumnInput } from './schemas.ts'

/**
 * The audio area (spec 4.10 Audio, `/gtw/cwai/Audio/`): audio files uploaded through the
 * upload protocol (purpose `audio`, spec 4.12), checked and loudness-normalized with ffmpeg;
 * audio columns (network speakers) the device pushes them to. `ctx.audio`
 * (runtime/audio/service.ts) owns it.
 */

export const AUDIO_UPLOAD_PURPOSE = 'audio'
export const AUDIO_PREVIEW_ROUTE = '/gtw/cwai/Audio/AudioFilePreview'

export interface AudioFileView {
  audioId: string
  audioName: string
  originalName: string
  sourceFormat: string
  /** Of the stored (normalized) file. */
  durationMs: number
  sampleRate: number
  channels: number
  sizeBytes: number
  /** Integrated loudness of the upload (LUFS) before normalization; null when too short to measure. */
  inputLoudness: number | null
  /** Integrated loudness every stored file is normalized to (LUFS). */
  targetLoudness: number
  createdBy: string | null
  createdAt: number
}

export interface PlayTestResult {
  audioId: string
  /** Duration decoded from the stored file now (not the stored figure). */
  decodedDurationMs: number
  sampleRate: number
  channels: number
  /** Authenticated (mtk) GET of the stored MP3, single Range supported. */
  previewUrl: string
}

export type AudioColumnProtocol = 'http-push'
export type AudioPushFormat = 'mp3' | 'wav' | 'mulaw'

export interface AudioColumnView {
  columnId: string
  columnName: string
  protocol: AudioColumnProtocol
  /** Without credentials. */
  url: string
  method: 'POST' | 'PUT'
  format: AudioPushFormat
  username: string | null
  /** Whether a password is stored; the password itself is never returned. */
  passwordSet: boolean
  timeoutMs: number
  createdAt: number
  updatedAt: number
}

export interface ColumnTestResult {
  columnId: string
  /** A TCP connection to the column's host and port opened. */
  reachable: boolean
  connectMs: number | null
  /** Status of an HTTP HEAD of the column's URL (with its credentials); null when it did not answer. */
  httpStatus: number | null
  /** false when the column answered 401 or 403 to the credentials. */
  authOk: boolean | null
  error: string | null
}

export interface PlayOutcome {
  columnId: string
  audioId: string
  format: AudioPushFormat
  bytesSent: number
  httpStatus: number
  /** Time from the first byte sent to the column's answer. */
  timeMs: number
}

/**
 * "Play a file on a column": the action alarm policies (and any other area) take through
 * `ctx.audio`. Errors: AudioFileNotFound, AudioColumnNotFound, AudioColumnUnreachable
 * (retryable), AudioColumnAuthFailed, AudioColumnRejected. Plays on one column run one at a
 * time, in order; `signal` abandons a play (waiting or sending).
 */
export interface AudioPlayer {
  playOnColumn(request: { columnId: string; audioId: string; signal?: AbortSignal }): Promise<PlayOutcome>
}

export interface AudioService extends AudioPlayer {
  /** Claims an `audio` upload, checks and normalizes it; the upload stays usable when it is refused. */
  addFile(input: { uploadId: string; audioName?: string }, identity: Identity): Promise<AudioFileView>
  page(query: { pageNum: number; pageSize: number; audioName?: string }): Promise<{ total: number; rows: AudioFileView[] }>
  deleteFile(audioId: string): Promise<void>
  playTest(audioId: string): Promise<PlayTestResult>
  /** Absolute path of the stored MP3 (AudioFileNotFound). */
  fileOf(audioId: string): Promise<{ path: string; downloadName: string }>
  addColumn(input: AddAudioColumnInput): Promise<AudioColumnView>
  updateColumn(input: UpdateAudioColumnInput): Promise<AudioColumnView>
  deleteColumn(columnId: string): Promise<void>
  columns(query: { pageNum: number; pageSize: number }): Promise<{ total: number; rows: AudioColumnView[] }>
  testColumn(columnId: string): Promise<ColumnTestResult>
}
