import type { cameras } from '../../../shared/db/schema/index.ts'
import type { CopyInput } from '../copy-process.ts'
import type { InputSpec } from '../ffmpeg.ts'
import type { Reader, ReaderHandlers, ReaderTiming } from '../reader.ts'

export type CameraRow = typeof cameras.$inferSelect

/** The source fields of an add or update (docs/cameras-and-stream-tasks.md "Sources"). */
export interface SourceInput { url?: string; uploadId?: string; device?: string; username?: string; password?: string }

/** What a camera keeps when an update does not send a field; `keepVideo`: a file camera keeps its video. */
export interface StoredSource { username: string | null; password: string | null; keepVideo: boolean }

/** The source columns of a camera row, checked. */
export interface SourceFields { url: string | null; username: string | null; password: string | null; device: string | null }

/** The ffmpeg options that open one kind of input (before its `-i`); each kind only its own protocols. */
export interface FfmpegInput {
  args(options: { timeoutMs: number; rtspTimeoutOption: string; wallclock?: boolean }): string[]
  /** Its readers stamp every frame with the time it was received (ffmpeg.ts timedVideoFilter). */
  timed?: boolean
}

/** What opening a camera's reader is given by the channels (runtime/cameras/channels.ts). */
export interface OpenContext {
  row: CameraRow
  dataPath: string
  timing: ReaderTiming
  /** Largest snapshot an HTTP source may answer (MAX_ENCODED_IMAGE_BYTES). */
  maxBytes: number
  handlers: ReaderHandlers
  /** A reader of an ffmpeg input. */
  ffmpeg(spec: InputSpec): Reader
  /** The row's URL as an ffmpeg input of this kind: a relay ticket when it has credentials (credential-relay.ts). */
  urlInput(kind: string): Promise<InputSpec>
  /** ffmpeg arguments of an input, for a process that copies it (recording, live view). */
  args(spec: InputSpec, wallclock?: boolean): string[]
}

/** One camera source type: picked from `cameraSources` (sources/index.ts) by the row's `sourceType`. */
export interface CameraSource {
  /** Checks the source fields of an add or update; throws CameraUrlInvalid. */
  fields(input: SourceInput, stored: StoredSource): SourceFields
  /** Its ffmpeg input, when ffmpeg reads it. */
  input?: FfmpegInput
  /** Its reader, for the camera's own channel or for one consumer's. */
  open(context: OpenContext): Promise<Reader>
  /** Its stream for a copy without decoding; absent: StreamSourceUnsupported. */
  copy?(context: OpenContext, wallclock: boolean | undefined): Promise<CopyInput>
  /** Its video is an upload kept under DATA_DIR/cameras (`uploadId`). */
  storesVideo?: boolean
  /** Why the camera's own reader cannot give a full-resolution frame of another reader's moment. */
  noFullFrame?: string
}
