import { Type, type Static } from '@sinclair/typebox'
import type { tasks } from '../db/schema/index.ts'
import type { Identity } from '../handler.ts'
import type { DetectionResult } from '../inference/types.ts'

/**
 * The image-analysis task of spec 3.2 as handlers see it (`ctx.tasks`): create, detect and
 * cancel, their states and what the device observed of each task. The service that owns the
 * lifecycle is runtime/tasks/service.ts.
 */

// ── spec 2.4: per-task overrides ─────────────────────────────────────────────────────
const RatioPointSchema = Type.Object({
  xRatio: Type.Number({ minimum: 0, maximum: 1 }),
  yRatio: Type.Number({ minimum: 0, maximum: 1 }),
})

export const RegionSchema = Type.Object({
  areaId: Type.String({ minLength: 1, maxLength: 64 }),
  areaName: Type.Optional(Type.String({ maxLength: 128 })),
  /** Normalized polygon (0..1 of width/height), same keys as maskPolygon. */
  polygon: Type.Array(RatioPointSchema, { minItems: 3, maxItems: 64 }),
})

/**
 * `taskConfig` (spec 2.4, structure device-specific): `scoreThreshold` overrides the result
 * detector's threshold, `thresholds` any node's by node id, `regions` replace the default
 * area. Other keys (face gallery, …) are kept for the features that read them.
 */
export const TaskConfigSchema = Type.Object({
  scoreThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  thresholds: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$' }), Type.Number({ minimum: 0, maximum: 1 }))),
  regions: Type.Optional(Type.Array(RegionSchema, { maxItems: 32 })),
  /**
   * Stream tasks (docs/cameras-and-stream-tasks.md "Motion gating", motion masks; image tasks ignore them):
   * parts of the picture whose changes are no motion (a clock, trees, a screen), as polygons
   * like the regions'. Objects are still detected and tracked there.
   */
  motionMasks: Type.Optional(Type.Array(RegionSchema, { maxItems: 16 })),
  /**
   * Nodes skipped for this task (OperateNode `disable`): a crop or classifier adds nothing, a
   * logic node decides nothing (no `bLogicResult`). The result detector cannot be disabled.
   */
  /**
   * Face recognition (spec 2.4 face gallery): the galleries a `recognizer` node searches (all
   * face galleries when absent or empty) and the minimum similarity of a match (the node's
   * `scoreThreshold` when absent).
   */
  recognition: Type.Optional(Type.Object({
    galleryIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, uniqueItems: true })),
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  }, { additionalProperties: false })),
  /**
   * The input size of the pipeline's detector (docs/detection.md "Detector input size"): one
   * its manifest offers (its input's own side, or a `inputSizes` entry: the person detector
   * 512 or 320). Image and stream tasks; default the manifest's.
   */
  detectorInputSize: Type.Optional(Type.Integer({ minimum: 32, maximum: 4096 })),
  disabledNodes: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', maxLength: 64 }), { maxItems: 64, uniqueItems: true })),
  /**
   * Passenger-flow counters of a stream task (docs/cameras-and-stream-tasks.md "Stream tasks"; image tasks ignore them):
   * a line from `from` to `to` (ratios of the picture); a tracked object whose point crosses it
   * from its left to its right, looking from `from` to `to`, counts `in`, the other way `out`.
   */
  counters: Type.Optional(Type.Array(Type.Object({
    counterId: Type.String({ minLength: 1, maxLength: 64 }),
    counterName: Type.Optional(Type.String({ maxLength: 128 })),
    from: RatioPointSchema,
    to: RatioPointSchema,
    /** The object's point that crosses: its box centre (default) or the middle of its bottom edge. */
    point: Type.Optional(Type.Union([Type.Literal('centre'), Type.Literal('foot')])),
    /** Only objects with these labels count (all when absent). */
    labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 32, uniqueItems: true })),
  }, { additionalProperties: false }), { maxItems: 16 })),
})
export type TaskConfig = Static<typeof TaskConfigSchema>
export type FlowCounter = NonNullable<TaskConfig['counters']>[number]
export type Region = Static<typeof RegionSchema>

// ── spec 3.2: a task and what the device saw of it ────────────────────────────────────
export type TaskRow = typeof tasks.$inferSelect

/** What the runtime observed of one task's detections since it started (QueryTaskStatus / QueryTaskInfo). */
export interface TaskActivity {
  detections: number
  failures: number
  lastDetectionAt: number | null
  lastError: { messageKey: string; msgText: string; at: number } | null
  /** Stage durations (ms) of the last detection, as the sidecar measured them. */
  lastTimings: Record<string, number> | null
  /** The latest annotated picture on disk (QueryTaskOverviewFile). */
  overviewFile: string | null
  /**
   * In fullPicture URL mode the latest picture is that URL's (`fullPicture(id)`, rendered on
   * its first fetch, kept for FULL_PICTURE_RETENTION_MS) instead of a file of its own.
   */
  overviewPicture: string | null
  overviewAt: number | null
}

/** Status fields shared by QueryTaskStatus and QueryTaskInfo. */
export interface TaskStatus {
  taskId: string
  algorithmCode: string
  state: TaskRow['state']
  /** Whether the pipeline is held by the inference sidecar (in this runtime's view). */
  loaded: boolean
  createdAt: string
  updatedAt: string
  detections: number
  failures: number
  /** Detections running on the task now: a PTaskCancle meanwhile answers TaskBusy (spec 4.8). */
  running: number
  lastDetectionAt: string | null
  lastError: { messageKey: string; msgText: string; at: string } | null
}

/** spec 4.7: the image of a detection, exactly one of the three. */
export interface TaskImage {
  uploadId?: string
  imageBase64?: string
  imageUrl?: string
}

export interface CreateTaskRequest {
  taskId: string
  algorithmCode: string
  /** Replaces the task's config; omitted keeps a reused task's config (spec 2.4). */
  taskConfig?: TaskConfig
  createdBy: string | null
}

export interface DetectTaskRequest {
  taskId: string
  algorithmCode: string
  image: TaskImage
  /** Who asks (an upload is leased only to the identity that made it, spec 5.4). */
  identity: Identity
  /** The caller going away cancels an image download and a detection waiting for memory. */
  signal: AbortSignal
}

export interface TasksService {
  /**
   * spec 4.3, 3.2: creates the task or reuses a created one; another algorithmCode switches the
   * task to it (TaskBusy, retryable, while a detection runs). Errors: ActionAlgLoadFailed,
   * TaskCreateFailed, SidecarUnavailable.
   */
  create(request: CreateTaskRequest): Promise<{ reused: boolean; previousAlgorithmCode: string | null }>
  /** spec 4.7, 2.6: one synchronous detection on a created task; NotCreated otherwise. */
  detect(request: DetectTaskRequest): Promise<DetectionResult>
  /**
   * spec 2.6 `fullPicture` in URL mode: the overlay JPEG file of picture `id`, rendered on its
   * first fetch. PictureNotFound when unknown or past FULL_PICTURE_RETENTION_MS.
   */
  fullPicture(id: string): Promise<string>
  /** spec 4.8, 3.2: cancels a created task; TaskBusy (retryable) while a detection runs on it. */
  cancel(request: { taskId: string; algorithmCode?: string }): Promise<void>
  /** The task by id, in any state; NotCreated when unknown (spec 7.1). */
  get(taskId: string): Promise<TaskRow>
  status(task: TaskRow): TaskStatus
  activity(taskId: string): TaskActivity | null
  /** Tasks by last change, newest first (QueryTaskList): created ones unless a state is asked for. */
  list(query: { state?: TaskRow['state']; offset: number; limit: number }): Promise<{ total: number; rows: TaskRow[] }>
  /**
   * Changes a created task's config under the task's lock (OperateNode): `change` reads the
   * task and returns its new config, or throws to change nothing.
   */
  reconfigure(taskId: string, change: (task: TaskRow) => TaskConfig): Promise<{ task: TaskRow; taskConfig: TaskConfig }>
}
