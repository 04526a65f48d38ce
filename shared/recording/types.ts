import { Type, type Static } from '@sinclair/typebox'
import { CameraId } from '../cameras/inputs.ts'
import type { ClipRecorder } from './clip-recorder.ts'
import { DEFAULT_POST_ROLL_SECONDS, DEFAULT_PRE_ROLL_SECONDS } from './limits.ts'

/**
 * Recording (spec 4.10 System: recording): per camera off, event clips around an object's
 * visit or an alarm (with pre- and post-roll), or continuous; clips copied from the camera's
 * stream without re-encoding; retention by days and by a disk budget under the disk safety
 * reserve of spec 8. `ctx.recording` implements it (runtime/recording/).
 */
export const RECORD_MODES = ['off', 'events', 'continuous'] as const
export type RecordMode = (typeof RECORD_MODES)[number]

/** spec 4.11: clips are served with a single Range, as video/mp4. */
export const CLIP_ROUTE = '/gtw/cwai/File/Clip'
export const CLIP_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const clipUrlOf = (clipId: string) => `${CLIP_ROUTE}?id=${clipId}`
export const clipIdOf = (clipUrl: string) => new URL(clipUrl, 'http://device.invalid').searchParams.get('id') ?? ''

export const MAX_PRE_ROLL_SECONDS = 60
export const MAX_POST_ROLL_SECONDS = 300
export { DEFAULT_POST_ROLL_SECONDS, DEFAULT_PRE_ROLL_SECONDS }

const ByteCount = Type.String({ pattern: '^[0-9]{1,15}$', description: 'Bytes, as a decimal string (spec 8: byte counts are decimal strings).' })

export const CameraRecordSetting = Type.Object({
  cameraId: CameraId,
  mode: Type.Union(RECORD_MODES.map((m) => Type.Literal(m)), { description: '`off`, `events` (a clip per object visit and per alarm) or `continuous` (everything, as clips of RECORD_CONTINUOUS_CHUNK_SECONDS; event clips as well).' }),
  preRollSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_PRE_ROLL_SECONDS, default: DEFAULT_PRE_ROLL_SECONDS, description: 'Seconds of video before the event that its clip starts with (at least; clips start on a key frame).' })),
  postRollSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_POST_ROLL_SECONDS, default: DEFAULT_POST_ROLL_SECONDS, description: 'Seconds after the object left (or the alarm) that its clip goes on for.' })),
}, { additionalProperties: false })
export type CameraRecordSetting = Static<typeof CameraRecordSetting>

export const SetRecordParamInput = Type.Object({
  retentionDays: Type.Optional(Type.Number({ minimum: 0, maximum: 3650, description: 'Clips older than this are deleted; 0 = kept until the budget or the reserve needs the space.' })),
  budgetBytes: Type.Optional(ByteCount),
  cameras: Type.Optional(Type.Array(CameraRecordSetting, { maxItems: 256, description: 'Settings of these cameras; cameras not named keep theirs.' })),
}, { additionalProperties: false })
export type SetRecordParamInput = Static<typeof SetRecordParamInput>

export const ClipPageInput = Type.Object({
  pageNum: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
  cameraId: Type.Optional(CameraId),
  kind: Type.Optional(Type.Union([Type.Literal('event'), Type.Literal('continuous')])),
  eventId: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The clip of this event (object.entered or alarm.raised id).' })),
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000, description: 'Clips that end after this time (ms since epoch).' })),
  to: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000, description: 'Clips that start before this time (ms since epoch).' })),
}, { additionalProperties: false })
export type ClipPageInput = Static<typeof ClipPageInput>

const ClipId = Type.String({ pattern: CLIP_ID.source, description: 'The clipId of recording.clipReady or RecordClipPage.' })
export const ClipIdInput = Type.Object({ id: ClipId }, { additionalProperties: false })
/** The clip file's query: `?id=` and, for a player that cannot send mtk, `?token=` from ClipPlayUrl. */
export const ClipMediaInput = Type.Object({
  id: ClipId,
  token: Type.Optional(Type.String({ maxLength: 64, description: 'A playback token from File/ClipPlayUrl (instead of an mtk).' })),
}, { additionalProperties: false })

/** A camera's recording as QueryRecordParam shows it. */
export interface CameraRecordView {
  cameraId: string
  mode: RecordMode
  preRollSeconds: number
  postRollSeconds: number
  /** `recording`: segments are written; `connecting`/`offline`: the source is being (re)connected; `suspended`: the disk is at its reserve. */
  state: 'off' | 'connecting' | 'recording' | 'offline' | 'suspended'
  lastError: { messageKey: string; reason: string } | null
}

export interface RecordParamView {
  retentionDays: number
  budgetBytes: string
  headroomBytes: string
  usage: { clips: number; clipBytes: string; ringBytes: string; availableBytes: string; reserveBytes: string; availableForRecordingBytes: string }
  cameras: CameraRecordView[]
}

export interface ClipView {
  clipId: string
  clipUrl: string
  cameraId: string
  kind: 'event' | 'continuous'
  /** The clip's first event (object.entered, else the first alarm). */
  eventId: number | null
  eventKind: string | null
  /** Every event the clip belongs to: an object's visit and the alarms raised on it share one clip. */
  events: { eventId: number | null; eventKind: string }[]
  taskId: string | null
  objectId: string | null
  startTime: number
  endTime: number
  durationMs: number
  bytes: number
}

export interface RecordingService extends ClipRecorder {
  params(): Promise<RecordParamView>
  /** Validates (CameraNotFound, StreamSourceUnsupported), stores and applies at once. */
  setParams(input: SetRecordParamInput): Promise<RecordParamView>
  /** Newest first. */
  clipPage(query: ClipPageInput): Promise<{ total: number; rows: ClipView[] }>
  /** The clip and its file (absolute path); ClipNotFound, or ClipNotReady for an alarm's clip not written yet. */
  clip(clipId: string): Promise<{ clip: ClipView; file: string }>
}
