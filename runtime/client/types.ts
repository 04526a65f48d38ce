/**
 * Wire types of the device interface, as the spec defines them (section 2). Integrators and
 * the console use these; the runtime's own types live with the handlers.
 */

import type { ApiRequest, ApiResponse, Wire } from './api.ts'
import type { Area as DeviceArea, DetectionResult as DeviceDetectionResult, Target as DeviceTarget } from '../../shared/inference/types.ts'
import type { MessageItem as DeviceMessageItem } from '../../shared/errors/api-error.ts'
import type { Envelope as DeviceEnvelope } from '../../shared/envelope.ts'
import type { TaskStatus } from '../../shared/tasks/types.ts'
import type { ChunkFields as DeviceChunkFields } from '../../shared/uploads/types.ts'
import type { AlgorithmOrigin, AlgorithmPageQuery as DeviceAlgorithmPageQuery } from '../../shared/algorithms/types.ts'
import type { algorithmRow, layoutRow } from '../../shared/algorithms/view.ts'

// spec 2.1, 2.7, 2.6: the device's own definitions, so the two cannot drift apart.
export type { RatioPoint as Point } from '../../shared/inference/types.ts'
/** spec 2.7; `recommendedAction` read as any text (a newer device may advise an action this client does not know). */
export type MessageItem = Omit<DeviceMessageItem, 'recommendedAction'> & { recommendedAction: string }
/** spec 2.1 */
export type Envelope<T = unknown> = Omit<DeviceEnvelope<T>, 'resMsg'> & { resMsg: MessageItem[] }
/** spec 2.6, as it travels: `fullPicture` is the text of its data: URL or a URL. */
export type DetectionResult = Wire<DeviceDetectionResult>
export type Target = Wire<DeviceTarget>
export type Area = Wire<DeviceArea>

/** spec 2.2: what DoLogin answers. */
export type Session = ApiResponse<'/gtw/cwai/login/DoLogin'>

/** spec 2.3: a row of algorithm/page, as its handler answers it. */
export type AlgorithmRow = ApiResponse<'/gtw/cwai/algorithm/page'>['rows'][number]

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
export type LayoutListQuery = ApiRequest<'/gtw/cwai/algorithm/layout/list'>

/** `Algorithm/upload` request: a completed upload of purpose `algorithm` (a zip or tar.gz package). */
export type AlgorithmUploadRequest = ApiRequest<'/gtw/cwai/Algorithm/upload'>

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
export type TaskCreateRequest = ApiRequest<'/gtw/cwai/aihost/PTaskCreate'>

/** spec 4.7: exactly one image source. */
export type DetectPicRequest = ApiRequest<'/gtw/cwai/aihost/PTaskDetectPic'>

/** spec 4.8 */
export type TaskCancelRequest = ApiRequest<'/gtw/cwai/aihost/PTaskCancle'>

/** spec 2.6: merge all areas' targetList for the whole image. */
export const allTargets = (result: DetectionResult): Target[] => result.areaList.flatMap((area) => area.targetList ?? [])

/** spec 2.6: count targets whose confidence[] has an item with that label. */
export const countLabel = (result: DetectionResult, label: string): number =>
  allTargets(result).filter((t) => t.confidence?.some((c) => c.label === label)).length

/** spec 4.11 */
export type DeviceStatus = ApiResponse<'/gtw/cwai/System/QueryDeviceStatus'>

/** spec 4.11 `Upgrade`: the package passed every check and was staged; the device restarts into it. */
export type UpgradeStaged = ApiResponse<'/gtw/cwai/System/Upgrade'>

/** `UpgradeStatus` (docs/system.md "Device status and restart"): what the start-up script did, newest first. */
export type UpgradeStatus = ApiResponse<'/gtw/cwai/System/UpgradeStatus'>

/** A row of QueryTaskList: the QueryTaskStatus fields (docs/system.md "AI-host routes") and who created the task. */
export type TaskListRow = TaskStatus & { createdBy: string | null; createdByAccount: string | null }

/** A managed model (docs/system.md "Models"): the fields the console reads; the device sends more. */
export type ModelRow = ApiResponse<'/gtw/cwai/atomic/Model/list'>['rows'][number]

/** `Model/upload`: a completed upload of purpose `model`, optionally bound to the pipelines naming `modelId`. */
export type ModelUploadRequest = ApiRequest<'/gtw/cwai/atomic/Model/upload'>

/** QueryLogs request (docs/system.md "AI-host routes"): minimum level, time window (ms), request id, text. */
export type LogQuery = ApiRequest<'/v1/cwai/aihost/QueryLogs'>

export type { LogLine } from '../../shared/aihost/types.ts'

// spec 4.10 Camera, 4.9 stream tasks (docs/cameras-and-stream-tasks.md "Cameras", "Stream tasks"): the device's own
// definitions, so the two cannot drift apart.
export type { CameraView, CameraStatus, SourceType, UsbDevice } from '../../shared/cameras/types.ts'
export type { AddCameraInput as CameraAddRequest, UpdateCameraInput as CameraUpdateRequest } from '../../shared/cameras/inputs.ts'
export type { StreamTaskStatus, StreamTaskState, TaskCreateInput as StreamTaskCreateRequest } from '../../shared/streams/types.ts'
export type { DeviceEvent } from '../../shared/events/types.ts'

/** `Camera/capture`: the current frame; `picture` follows `fullPicture`'s rules (spec 2.6). */
export type CameraCapture = ApiResponse<'/gtw/cwai/Camera/capture'>

/** `Task/batch`: one outcome per task. */
export type BatchOutcome = ApiResponse<'/gtw/cwai/Task/batch'>

/** `Event/EventPage` request (docs/events.md "Event endpoints"). */
export type EventPageQuery = ApiRequest<'/gtw/cwai/Event/EventPage'>
