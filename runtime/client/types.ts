/**
 * Wire types of the device interface, as the spec defines them (section 2). Integrators and
 * the console use these; the runtime's own types live with the handlers.
 */

import type { TaskStatus } from '../../shared/tasks/types.ts'
import type { ChunkFields as DeviceChunkFields } from '../../shared/uploads/types.ts'
import type { AlgorithmOrigin, AlgorithmPageQuery as DeviceAlgorithmPageQuery } from '../../shared/algorithms/types.ts'
import type { algorithmRow, layoutRow } from '../../shared/algorithms/view.ts'

/** spec 2.7 */
export interface MessageItem {
  msgCode: string
  msgText: string
  messageKey: string
  details: Record<string, unknown>
  retryable: boolean
  retryAfterSeconds?: number
  recommendedAction: string
}

/** spec 2.1 */
export interface Envelope<T = unknown> {
  resCode: 0 | 1
  resMsg: MessageItem[]
  resultCode: string
  resultMsg: string
  resData?: T
}

/** spec 2.2 */
export interface Session {
  accountName: string
  mtk: string
  passwordChangeRequired: boolean
}

/** spec 2.3 */
export interface AlgorithmRow {
  algorithmId: string
  algorithmName: string
  algorithmUsage: string
  runningStatus: number
  models: unknown[]
  [field: string]: unknown
}

/** spec 4.2 request: the device's filters, with paging optional (the device has defaults). */
export type AlgorithmPageQuery = Omit<DeviceAlgorithmPageQuery, 'pageNum' | 'pageSize'> & Partial<Pick<DeviceAlgorithmPageQuery, 'pageNum' | 'pageSize'>>

// spec 4.10: the rows the device's algorithm routes answer, typed from the device's own
// builders (shared/algorithms/view.ts) so the two cannot drift apart.
export type { AlgorithmOrigin }
/** An algorithm row of `Algorithm/upload` (and add, update): spec 2.3 plus `origin` and `updateTime`. */
export type ManagedAlgorithmRow = ReturnType<typeof algorithmRow>
/** A row of `algorithm/layout/list`: the algorithm and its node graph in brief. */
export type LayoutRow = ReturnType<typeof layoutRow>

/** `algorithm/layout/list` request. */
export interface LayoutListQuery {
  origin?: AlgorithmOrigin
  pageNum?: number
  /** At most 1000. */
  pageSize?: number
}

/** `Algorithm/upload` request: a completed upload of purpose `algorithm` (a zip or tar.gz package). */
export interface AlgorithmUploadRequest {
  uploadId: string
  /** Overwrite algorithms of the package that exist already (refused while tasks use them). */
  replace?: boolean
}

/** A file the device answered (an export): its bytes and the name from Content-Disposition. */
export interface DownloadedFile {
  fileName: string
  contentType: string
  blob: Blob
}

export interface Page<T> {
  total: number
  rows: T[]
}

// spec 2.5: the client uses the device's own definitions, so the two cannot drift apart.
export type { UploadCapabilities, UploadSessionView as UploadSession } from '../../shared/uploads/types.ts'

/** spec 4.5 parts other than `file` (the filename travels with the file part). */
export type ChunkFields = Omit<DeviceChunkFields, 'filename'>

/** spec 4.3 */
export interface TaskCreateRequest {
  algorithmCode: string
  algorithmUpdateTime: string
  taskId?: string
  mvDebug?: string
  taskConfig?: Record<string, unknown>
}

/** spec 4.7: exactly one image source. */
export type DetectPicRequest = { taskId: string; algorithmCode: string } & (
  | { uploadId: string }
  | { imageBase64: string }
  | { imageUrl: string }
)

/** spec 4.8 */
export interface TaskCancelRequest {
  taskId: string
  algorithmCode: string
  mvDebug?: string
}

/** spec 2.6 */
export interface Point { xRatio: number; yRatio: number }
export interface Target {
  box: { x: number; y: number; width: number; height: number }
  confidence: { label: string; confidence: number }[]
  bLogicResult?: boolean
  /** Pixel coordinates despite the key names (spec 2.6). */
  landmark?: Point[]
  /** Normalized coordinates (spec 2.6). */
  maskPolygon?: Point[]
  featurePreview?: number[]
  [field: string]: unknown
}
export interface Area {
  areaId: string
  areaName: string
  bDetected: boolean
  targetList: Target[]
}
export interface DetectionResult {
  algorithmCode: string
  timestamp: string
  fullPicture: string
  areaList: Area[]
}

/** spec 2.6: merge all areas' targetList for the whole image. */
export const allTargets = (result: DetectionResult): Target[] => result.areaList.flatMap((area) => area.targetList ?? [])

/** spec 2.6: count targets whose confidence[] has an item with that label. */
export const countLabel = (result: DetectionResult, label: string): number =>
  allTargets(result).filter((t) => t.confidence?.some((c) => c.label === label)).length

/** spec 4.11 */
export interface DeviceStatus {
  bootId: string
  osBootId: string | null
  softwareVersion: string
  [field: string]: unknown
}

/** spec 4.11 `Upgrade`: the package passed every check and was staged; the device restarts into it. */
export interface UpgradeStaged {
  version: string
  fromVersion: string
  stagedAt: string
  restarting: true
}

/** `UpgradeStatus` (docs/system.md "Device status and restart"): what the start-up script did, newest first. */
export interface UpgradeStatus {
  softwareVersion: string
  /** The new version has not yet proved that it starts (docs/system.md "Rollback and power cuts"). */
  probation?: { version: string; fromVersion: string; start: number; startedAt: string } | null
  history: { version: string; fromVersion: string; outcome: 'installed' | 'rolled-back' | 'refused'; reason: string | null; at: number | string; stagedAt?: string | null; startedAt?: string | null }[]
  [field: string]: unknown
}

/** A row of QueryTaskList: the QueryTaskStatus fields (docs/system.md "AI-host routes") and who created the task. */
export type TaskListRow = TaskStatus & { createdBy: string | null; createdByAccount: string | null }

/** A managed model (docs/system.md "Models"): the fields the console reads; the device sends more. */
export interface ModelRow {
  modelId: string
  modelName: string
  source: 'preset' | 'user'
  format?: string
  sizeBytes?: string | number
  exportable?: boolean
  [field: string]: unknown
}

/** `Model/upload`: a completed upload of purpose `model`, optionally bound to the pipelines naming `modelId`. */
export interface ModelUploadRequest {
  uploadId: string
  modelName?: string
  modelId?: string
  exportable?: boolean
}

/** QueryLogs request (docs/system.md "AI-host routes"): minimum level, time window (ms), request id, text. */
export interface LogQuery {
  level?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'
  startTime?: number
  endTime?: number
  requestId?: string
  text?: string
  pageNo?: number
  pageSize?: number
}

/** A pino log line: numeric level, time (ms), msg, and the fields of its area. */
export interface LogLine {
  level: number
  time: number
  msg?: string
  [field: string]: unknown
}

// spec 4.10 Camera, 4.9 stream tasks (docs/cameras-and-stream-tasks.md "Cameras", "Stream tasks"): the device's own
// definitions, so the two cannot drift apart.
export type { CameraView, CameraStatus, SourceType, UsbDevice } from '../../shared/cameras/types.ts'
export type { AddCameraInput as CameraAddRequest, UpdateCameraInput as CameraUpdateRequest } from '../../shared/cameras/inputs.ts'
export type { StreamTaskStatus, StreamTaskState, TaskCreateInput as StreamTaskCreateRequest } from '../../shared/streams/types.ts'
export type { DeviceEvent } from '../../shared/events/types.ts'

/** `Camera/capture`: the current frame; `picture` follows `fullPicture`'s rules (spec 2.6). */
export interface CameraCapture {
  picture: string
  width: number
  height: number
  /** ms string (spec 8). */
  timestamp: string
}

/** `Task/batch`: one outcome per task. */
export interface BatchOutcome {
  rows: { taskId: string; ok: boolean; messageKey: string | null }[]
}

/** `Event/EventPage` request (docs/events.md "Event endpoints"). */
export interface EventPageQuery {
  pageNum?: number
  pageSize?: number
  kinds?: string[]
  source?: string
  startTime?: string
  endTime?: string
  /** The payload's fields. */
  cameraId?: string
  taskId?: string
  label?: string
}
