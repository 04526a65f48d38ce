import { Type, type Static } from '@sinclair/typebox'
import { TaskConfigSchema } from '../tasks/types.ts'
import type { Identity } from '../handler.ts'

/**
 * Stream tasks (spec 4.9 TaskCreate / TaskCancle): continuous analysis of one camera with
 * one algorithm, the same pipelines and `taskConfig` as PTask*. `ctx.streams` owns their
 * lifecycle; implementation in `runtime/streams/`.
 */
/** While objects are tracked, the detector's interval (docs/cameras-and-stream-tasks.md "Stream tasks"): a default, and a bound below the tracker's 2.5 s leave delay. */
export const DEFAULT_TRACKED_DETECT_INTERVAL_MS = 1000
export const MAX_TRACKED_DETECT_INTERVAL_MS = 2000

/**
 * The gating settings, without their defaults: TaskCreate fills the defaults in, Task/update
 * must not (request validation writes a schema's default into a missing field, which would
 * reset a setting the update does not name).
 */
const MOTION_GATING = { description: 'Run the detector only on motion, at trackedDetectIntervalMs while the motion lies on the tracked objects, and at minDetectIntervalMs otherwise.' }
const MIN_DETECT_INTERVAL = { minimum: 0, maximum: 600_000, description: 'With motion gating: with nothing moving, the detector still runs at least this often (and for a tracked object that stands still); with region detection, the whole frame is detected at least this often.' }
const TRACKED_DETECT_INTERVAL = {
  minimum: 0, maximum: MAX_TRACKED_DETECT_INTERVAL_MS,
  description: `With motion gating: while objects are tracked and every motion lies on them, the detector runs this often (the tracker carries their boxes between); at most ${MAX_TRACKED_DETECT_INTERVAL_MS}, below the 2.5 s after which an unseen object has left.`,
}
const REGION_DETECTION = {
  description: 'With motion gating: frames the detector runs on for motion are detected on square crops around the motion regions and the tracked objects (the whole frame at least every minDetectIntervalMs, and whenever the crops would be too many or too large or cut an object); off: always the whole frame. The device setting STREAM_REGION_DETECTION=false turns it off for every task.',
}

const ScheduleRef = Type.String({ minLength: 1, maxLength: 64, description: 'spec 4.10 Schedule: the task analyses only while this schedule is on (state `idle` otherwise); absent: always.' })

/** The operator's name for a task (docs/cameras-and-stream-tasks.md "Stream tasks"): shown instead of the taskId; not unique. */
const TaskName = Type.String({ minLength: 1, maxLength: 128, pattern: '\\S', description: 'A name shown instead of the taskId (consoles, events lists); optional, not unique. Absent: the taskId is shown.' })

export const TaskCreateInput = Type.Object({
  taskId: Type.String({ minLength: 1, maxLength: 128 }),
  taskName: Type.Optional(TaskName),
  algorithmCode: Type.String({ minLength: 1, maxLength: 128 }),
  cameraId: Type.String({ minLength: 1, maxLength: 64 }),
  targetFps: Type.Number({ exclusiveMinimum: 0, maximum: 60, description: 'Frames per second analysed; at most the source\'s rate.' }),
  taskConfig: Type.Optional(TaskConfigSchema),
  mvDebug: Type.Optional(Type.Unknown()),
  motionGating: Type.Optional(Type.Boolean({ ...MOTION_GATING, default: true })),
  minDetectIntervalMs: Type.Optional(Type.Integer({ ...MIN_DETECT_INTERVAL, default: 1000 })),
  trackedDetectIntervalMs: Type.Optional(Type.Integer({ ...TRACKED_DETECT_INTERVAL, default: DEFAULT_TRACKED_DETECT_INTERVAL_MS })),
  regionDetection: Type.Optional(Type.Boolean({ ...REGION_DETECTION, default: true })),
  scheduleId: Type.Optional(ScheduleRef),
}, { additionalProperties: false })
export type TaskCreateInput = Static<typeof TaskCreateInput>

/**
 * - `running`: frames arrive and are analysed.
 * - `idle`: frames arrive, but the task's schedule is off: none is analysed (`stateReason`
 *   names the schedule and when it turns on).
 * - `waiting`: the camera is offline, deleted or not connected yet (`stateReason` says which);
 *   the task resumes by itself.
 * - `disabled`: switched off (Task/switch, batch stop): settings kept, nothing read.
 */
export type StreamTaskState = 'running' | 'idle' | 'waiting' | 'disabled'

/** Task/update: the parameters and regions of a stream task (`taskConfig.regions`, spec 2.4). */
export const TaskUpdateInput = Type.Object({
  taskId: Type.String({ minLength: 1, maxLength: 128 }),
  taskName: Type.Optional(Type.Union([TaskName, Type.Null()], { description: 'A new name; null: none (the taskId is shown).' })),
  targetFps: Type.Optional(TaskCreateInput.properties.targetFps),
  taskConfig: Type.Optional(TaskConfigSchema),
  motionGating: Type.Optional(Type.Boolean(MOTION_GATING)),
  minDetectIntervalMs: Type.Optional(Type.Integer(MIN_DETECT_INTERVAL)),
  trackedDetectIntervalMs: Type.Optional(Type.Integer(TRACKED_DETECT_INTERVAL)),
  regionDetection: Type.Optional(Type.Boolean(REGION_DETECTION)),
  scheduleId: Type.Optional(Type.Union([ScheduleRef, Type.Null()], { description: 'A schedule (spec 4.10 Schedule); null: analyse always.' })),
}, { additionalProperties: false })
export type TaskUpdateInput = Static<typeof TaskUpdateInput>

export interface StreamTaskStatus {
  taskId: string
  /** The operator's name for the task; null: none given (show the taskId). */
  taskName: string | null
  kind: 'stream'
  algorithmCode: string
  cameraId: string
  targetFps: number
  state: StreamTaskState
  stateReason: string | null
  motionGating: boolean
  minDetectIntervalMs: number
  trackedDetectIntervalMs: number
  /** The task's setting; whether crops are detected also depends on the device setting and the pipeline (`regionFrames`). */
  regionDetection: boolean
  enabled: boolean
  taskConfig: Record<string, unknown>
  /** The task's schedule, null when it analyses always. */
  scheduleId: string | null
  /** Over the last 10 s: frames delivered by the camera reader, frames analysed. */
  inputFps: number
  processedFps: number
  /** Since start: frames delivered, dropped by the full queue (oldest first). */
  framesIn: number
  framesDropped: number
  /** Since start: frames analysed (motion-skipped ones included) and frames whose analysis failed (the capacity runner's counts, spec 2.8). */
  framesProcessed: number
  framesFailed: number
  /** Since start: frames motion gating kept from the detector, for either reason (`trackedSkipped` among them). */
  motionSkipped: number
  /** Since start: frames kept from the detector while objects were tracked and every motion lay on them (trackedDetectIntervalMs). */
  trackedSkipped: number
  /** Since start: frames the detector saw only as crops around the motion regions (the others it saw whole). */
  regionFrames: number
  /** Since start: frames not analysed because the task's schedule was off. */
  scheduleSkipped: number
  discardRate: number
  detectorLatencyP50Ms: number | null
  detectorLatencyP99Ms: number | null
  /** Frame decoded → analysed: tracked, observers run, its events queued (docs/cameras-and-stream-tasks.md "Snapshots"). */
  criticalPathLatencyP99Ms: number | null
  /** Frame decoded → its event written, snapshot included (null until one was); a snapshot waits for its full-resolution frame. */
  eventWriteP99Ms: number | null
  trackedObjects: number
  objectsEntered: number
  lastError: { messageKey: string; msgText: string; at: string } | null
  createdAt: string
}

/** A stream task's latest detector result (live view overlay). */
export interface StreamTaskResult {
  taskId: string
  cameraId: string
  /** When the analysed frame was decoded, ms since epoch. */
  time: number
  /**
   * The analysed frame's timestamp, ms since epoch as the device received it: the time line
   * of the camera's live view (docs/recording-and-live-view.md "Boxes on the frame shown");
   * null for sources without one.
   */
  pts: number | null
  /** The camera's picture size; boxes are in its pixels (whatever size the frame was analysed at). */
  width: number
  height: number
  objects: {
    box: { x: number; y: number; width: number; height: number }
    label: string
    confidence: number
    /**
     * How the object's box moves, px per second of the camera's picture (its centre's movement
     * between the tracker's last two sightings of it); absent before the second. A live tile moves a
     * result it holds over frames the task skipped by it (docs/recording-and-live-view.md
     * "Boxes on the frame shown").
     */
    velocity?: { x: number; y: number }
  }[]
}

export interface StreamTasksService {
  /**
   * Creates and starts the task (an existing taskId with the same camera and algorithm is
   * reused; otherwise it is replaced). Errors: ActionAlgLoadFailed, TaskCreateFailed,
   * SidecarUnavailable, CameraNotFound, InvalidParam (targetFps above the source's rate).
   */
  create(input: TaskCreateInput, identity: Identity): Promise<{ reused: boolean }>
  /** Stops the task and releases its reader and pipeline; NotCreated when unknown. */
  cancel(taskId: string): Promise<void>
  has(taskId: string): boolean
  status(taskId: string): StreamTaskStatus
  /** Every stream task's status, oldest first. */
  list(): StreamTaskStatus[]
  /** Switches a task on or off without deleting it (stored; a disabled task stays off across restarts). */
  setEnabled(taskId: string, enabled: boolean): Promise<void>
  /** Changes rate, taskConfig (regions, thresholds) or gating; the pipeline is reconfigured and the reader restarted. */
  update(input: TaskUpdateInput): Promise<void>
  /** The newest detector result of the tasks analysing a camera, null before any (read-only; live view overlay). */
  latestResult(cameraId: string): StreamTaskResult | null
}
